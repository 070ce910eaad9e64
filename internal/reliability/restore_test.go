//go:build reliability

package reliability_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/provider/coreapi/internal/einvoice"
	"github.com/provider/coreapi/internal/pgcluster"
)

// TestRestoreDrill is the runbook of docs/operations.md, "Backup and restore", under write
// load. While clients of three organizations generate simplified tax invoices (each
// organization's ICV/PIH chain, a webhook event and a usage row each), resolve short
// addresses (usage), create organizations and record growth events — every write with an
// Idempotency-Key, every fifth replayed at once — the database is backed up with pg_dump,
// restored with pg_restore into a new cluster, and a second server started on the copy.
// On the copy: every write acknowledged before the dump began is there, none sent after it
// ended is; each chain runs from ICV 1 without gap, fork or duplicate, is a prefix of the
// source's and ends at its counter; every idempotency record replays the answer its client
// got and creates nothing; usage counters equal the usage rows; every invoice has exactly one
// event in the outbox, every event one delivery with a live job until delivered; and the copy
// keeps serving: new invoices continue the chains, their events are delivered, a write lost
// with the snapshot is created again by its client's retry, the partitions came back and the
// copy's job queue runs.
func TestRestoreDrill(t *testing.T) {
	t.Parallel()
	source := newCluster(t)
	s := startServer(t, source.dsn(), "")
	hooks := newWebhookCounter(t)
	orgs := make([]string, 3)
	for i := range orgs {
		orgs[i] = createOrg(t, s, fmt.Sprintf("Restored %d", i), "standard_customer")
		r := call(nil, http.MethodPost, s.url("/v1/webhook-endpoints"), orgToken(orgs[i]),
			fmt.Sprintf(`{"organization_id":%q,"url":%q,"enabled_events":["tax_invoice.generated"]}`, orgs[i], hooks.url), nil)
		if r.status != http.StatusCreated {
			t.Fatalf("create endpoint: %d %s", r.status, r.body)
		}
	}

	// The load, and the backup taken in the middle of it.
	load := startWriteLoad(t, s, orgs)
	load.waitForAcknowledged(t, 30)
	dump := filepath.Join(t.TempDir(), "coreapi.dump")
	load.dumpStarted.Store(true)
	began := time.Now()
	runTool(t, "pg_dump", "--format=custom", "--file="+dump, "--dbname="+source.dsn())
	dumpTook := time.Since(began)
	load.dumpEnded.Store(true)
	load.waitForAcknowledged(t, load.acknowledged.Load()+15)
	load.finish()

	// The restore, into a new cluster, and a server on it.
	target := newCluster(t)
	began = time.Now()
	runTool(t, "pg_restore", "--exit-on-error", "--no-owner", "--dbname="+target.dsn(), dump)
	restoreTook := time.Since(began)
	restored := target.pool(t)
	restoredJobs := count(t, restored, "SELECT coalesce(max(id), 0) FROM river_job")
	began = time.Now()
	copied := startServer(t, target.dsn(), "")
	startTook := time.Since(began)

	rows := rowCounts(t, restored)
	t.Logf("restored rows: %d tax invoices, %d organizations, %d growth events, %d usage events, %d webhook events, %d idempotency records, %d deliveries pending",
		rows[0], rows[1], rows[2], rows[3], rows[4], count(t, restored, "SELECT count(*) FROM idempotency_keys"),
		count(t, restored, "SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'"))
	if n := count(t, restored, "SELECT count(*) FROM pg_inherits WHERE inhparent = 'request_logs'::regclass"); n < 2 {
		t.Errorf("request_logs has %d partitions on the copy", n)
	}
	load.checkRestored(t, restored)
	checkConsistent(t, restored)
	checkChainsArePrefixes(t, source.pool(t), restored)
	replayed := load.checkReplays(t, copied, restored)

	continueChains(t, copied, restored, hooks, orgs)
	lost := load.retryLost(t, copied, restored)
	checkConsistent(t, restored)
	// The copy's job queue leads once the source's lease, restored with the data, expires
	// (River's 15 s): only a job the copy queued counts, as one the source had running at the
	// dump is restored as running.
	awaitCondition(t, 3*time.Minute, "the copy's own partition maintenance job completed", func() bool {
		return count(t, restored, "SELECT count(*) FROM river_job WHERE kind = 'maintain_partitions' AND state = 'completed' AND id > $1", restoredJobs) > 0
	})

	info, err := os.Stat(dump)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("restore figures: %s; dump %v (%d KiB), pg_restore into a new cluster %v, the copy's server ready %v after start",
		load.figures(), dumpTook.Round(time.Millisecond), info.Size()/1024, restoreTook.Round(time.Millisecond), startTook.Round(time.Millisecond))
	t.Logf("after the restore: %d restored idempotency records replayed, %d writes lost with the snapshot retried on the copy, %d invoices on the copy",
		replayed, lost, count(t, restored, "SELECT count(*) FROM tax_invoices"))
}

// write is one idempotent POST of the load and the first answer it got.
type write struct {
	kind, token, path, body, key string
	status                       int
	response                     []byte
	// beforeDump: acknowledged before pg_dump began, so committed before its snapshot;
	// afterDump: sent after pg_dump ended, so committed after it.
	beforeDump, afterDump bool
}

// writeLoad is the clients writing while the backup is taken.
type writeLoad struct {
	server                 *server
	mu                     sync.Mutex
	writes                 []*write
	acknowledged           atomic.Int64
	dumpStarted, dumpEnded atomic.Bool
	stop                   chan struct{}
	stopOnce               sync.Once
	wg                     sync.WaitGroup
	done                   chan struct{} // closed when every client has stopped
}

// The load's bounds: clientsPerOrganization clients write for each organization, each at most
// writesPerClient times.
const (
	clientsPerOrganization = 2
	writesPerClient        = 60
)

// startWriteLoad starts the clients of every organization, each cycling through the kinds of
// write until finish or writesPerClient. Two clients of an organization race on its chain.
func startWriteLoad(t *testing.T, s *server, orgs []string) *writeLoad {
	l := &writeLoad{server: s, stop: make(chan struct{}), done: make(chan struct{})}
	client := &http.Client{Timeout: 60 * time.Second}
	for _, org := range orgs {
		for c := range clientsPerOrganization {
			l.wg.Go(func() {
				for i := range writesPerClient {
					select {
					case <-l.stop:
						return
					default:
					}
					l.send(t, client, l.next(org, c, i))
				}
			})
		}
	}
	go func() { l.wg.Wait(); close(l.done) }()
	t.Cleanup(l.finish) // a test that fails early stops its clients too
	return l
}

// next is the i-th write of org's client c: of every five, three invoices, a growth event, and
// an address resolution or an organization (the two clients alternate).
func (l *writeLoad) next(org string, c, i int) *write {
	key := fmt.Sprintf("drill-%s-%d-%03d", org, c, i)
	w := &write{token: orgToken(org), key: key, afterDump: l.dumpEnded.Load()}
	switch {
	case i%5 == 2:
		w.kind, w.path = "growth", "/v1/growth/events"
		w.body = fmt.Sprintf(`{"event_name":"page_view","organization_id":%q,"anonymous_id":"anon_%s","traffic_type":"load_test"}`, org, key)
	case i%5 == 3 && (i/5+c)%2 == 0:
		w.kind, w.path, w.body = "address", "/v1/address/resolve-short", `{"short_address":"RRRD2929","language":"en"}`
	case i%5 == 3:
		w.kind, w.path, w.body, w.token = "organization", "/v1/organizations", orgBody(key), operator
	default:
		w.kind, w.path, w.body = "invoice", "/v1/taxauth/invoices/generate/simplified", invoiceBody(org)
	}
	return w
}

// send makes w's request, records its answer and, for every fifth write, replays it at once.
func (l *writeLoad) send(t *testing.T, client *http.Client, w *write) {
	r := call(client, http.MethodPost, l.server.url(w.path), w.token, w.body, http.Header{"Idempotency-Key": {w.key}})
	if r.status < 200 || r.status > 299 {
		t.Errorf("%s %s: %d %v %s", w.kind, w.key, r.status, r.err, r.body)
		return
	}
	w.status, w.response, w.beforeDump = r.status, r.body, !l.dumpStarted.Load()
	l.mu.Lock()
	l.writes = append(l.writes, w)
	l.mu.Unlock()
	if l.acknowledged.Add(1)%5 == 0 {
		checkReplay(t, client, l.server, w)
	}
}

// checkReplay sends w again to s: the stored answer, marked replayed.
func checkReplay(t *testing.T, client *http.Client, s *server, w *write) {
	t.Helper()
	r := call(client, http.MethodPost, s.url(w.path), w.token, w.body, http.Header{"Idempotency-Key": {w.key}})
	if r.status != w.status || !bytes.Equal(r.body, w.response) || r.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay of %s %s: %d %q (replayed %q); want %d %s", w.kind, w.key, r.status, r.body,
			r.header.Get("Idempotent-Replayed"), w.status, w.response)
	}
}

// waitForAcknowledged waits until n writes are acknowledged (or the clients stopped).
func (l *writeLoad) waitForAcknowledged(t *testing.T, n int64) {
	t.Helper()
	awaitCondition(t, 2*time.Minute, fmt.Sprintf("%d writes acknowledged", n), func() bool {
		return l.acknowledged.Load() >= n || l.stopped()
	})
}

// finish stops the clients and waits for their last answers.
func (l *writeLoad) finish() {
	l.stopOnce.Do(func() { close(l.stop) })
	l.wg.Wait()
}

// stopped reports whether every client has stopped (all its writes done).
func (l *writeLoad) stopped() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

func (l *writeLoad) byKey() map[string]*write {
	m := make(map[string]*write, len(l.writes))
	for _, w := range l.writes {
		m[w.key] = w
	}
	return m
}

// checkRestored compares the copy's idempotency records with what the clients were told:
// every write acknowledged before the dump began is there, none sent after it ended, and
// nothing the clients did not write.
func (l *writeLoad) checkRestored(t *testing.T, restored *pgxpool.Pool) {
	t.Helper()
	keys := restoredKeys(t, restored)
	for _, w := range l.writes {
		switch {
		case w.beforeDump && !keys[w.key]:
			t.Errorf("%s %s, acknowledged before the dump began, is not on the copy", w.kind, w.key)
		case w.afterDump && keys[w.key]:
			t.Errorf("%s %s, sent after the dump ended, is on the copy", w.kind, w.key)
		}
	}
	writes := l.byKey()
	for key := range keys {
		if writes[key] == nil {
			t.Errorf("the copy has idempotency record %q, which no client acknowledged", key)
		}
	}
}

// checkReplays sends every write whose record the copy holds to the copy's server again: each
// answers its client's first answer, marked replayed, and none creates anything.
func (l *writeLoad) checkReplays(t *testing.T, s *server, restored *pgxpool.Pool) int {
	t.Helper()
	before := rowCounts(t, restored)
	keys := restoredKeys(t, restored)
	client := &http.Client{Timeout: 60 * time.Second}
	for _, w := range l.writes {
		if keys[w.key] {
			checkReplay(t, client, s, w)
		}
	}
	if after := rowCounts(t, restored); after != before {
		t.Errorf("replays on the copy changed the rows: %v, then %v", before, after)
	}
	return len(keys)
}

// retryLost retries on the copy, as their clients would, the writes the source acknowledged
// after the snapshot: each is done anew (the first answer's status, not a replay).
func (l *writeLoad) retryLost(t *testing.T, s *server, restored *pgxpool.Pool) int {
	t.Helper()
	keys := restoredKeys(t, restored)
	lost := 0
	for _, w := range l.writes {
		if keys[w.key] {
			continue
		}
		lost++
		r := call(nil, http.MethodPost, s.url(w.path), w.token, w.body, http.Header{"Idempotency-Key": {w.key}})
		if r.status != w.status || r.header.Get("Idempotent-Replayed") != "" {
			t.Errorf("retry of %s %s, lost with the snapshot, on the copy: %d (replayed %q) %s; want %d done anew",
				w.kind, w.key, r.status, r.header.Get("Idempotent-Replayed"), r.body, w.status)
		}
	}
	return lost
}

func (l *writeLoad) figures() string {
	kinds := map[string]int{}
	var before, after int
	for _, w := range l.writes {
		kinds[w.kind]++
		if w.beforeDump {
			before++
		}
		if w.afterDump {
			after++
		}
	}
	return fmt.Sprintf("%d writes acknowledged (%v), %d before the dump began, %d sent after it ended", len(l.writes), kinds, before, after)
}

// restoredKeys is the set of idempotency keys on the copy.
func restoredKeys(t *testing.T, db *pgxpool.Pool) map[string]bool {
	t.Helper()
	rows, err := db.Query(context.Background(), "SELECT key FROM idempotency_keys")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	keys := map[string]bool{}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		keys[k] = true
	}
	return keys
}

// rowCounts counts the rows the load's writes create.
func rowCounts(t *testing.T, db *pgxpool.Pool) [5]int {
	t.Helper()
	var c [5]int
	for i, table := range []string{"tax_invoices", "organizations", "growth_events", "usage_events", "webhook_events"} {
		c[i] = count(t, db, "SELECT count(*) FROM "+table)
	}
	return c
}

// consistency names, for each rule a restored database keeps, the query counting the rows
// that break it, and its arguments.
var consistency = []struct {
	rule, query string
	args        []any
}{
	{"every ICV/PIH chain runs from ICV 1 without gap or duplicate", `SELECT count(*) FROM (
		SELECT count(*) AS n, count(DISTINCT icv) AS d, min(icv) AS lo, max(icv) AS hi FROM tax_invoices
		GROUP BY organization_id, connected_business_id, egs_unit_id) c WHERE n <> d OR lo <> 1 OR hi <> n`, nil},
	{"every invoice's PIH is its predecessor's hash (the first's the chain's start)", `SELECT count(*) FROM tax_invoices i
		LEFT JOIN tax_invoices p ON p.organization_id = i.organization_id AND p.connected_business_id IS NOT DISTINCT FROM i.connected_business_id
			AND p.egs_unit_id = i.egs_unit_id AND p.icv = i.icv - 1
		WHERE i.pih <> coalesce(p.invoice_hash, $1)`, []any{einvoice.FirstPIH}},
	{"no fork: no two invoices of a chain follow the same hash", `SELECT count(*) FROM (SELECT 1 FROM tax_invoices
		GROUP BY organization_id, connected_business_id, egs_unit_id, pih HAVING count(*) > 1) f`, nil},
	{"every chain's counter stands at its last invoice", `SELECT count(*) FROM einvoice_counters c WHERE NOT EXISTS (
		SELECT 1 FROM tax_invoices i WHERE i.organization_id = c.organization_id AND coalesce(i.connected_business_id, i.organization_id) = c.seller_id
			AND i.egs_unit_id = c.egs_unit_id AND i.icv = c.last_icv AND i.invoice_hash = c.last_invoice_hash)
		OR EXISTS (SELECT 1 FROM tax_invoices i WHERE i.organization_id = c.organization_id AND coalesce(i.connected_business_id, i.organization_id) = c.seller_id
			AND i.egs_unit_id = c.egs_unit_id AND i.icv > c.last_icv)`, nil},
	{"usage counters equal the usage rows of their month", `SELECT count(*) FROM usage_counters c
		FULL JOIN (SELECT organization_id, product, date_trunc('month', occurred_at AT TIME ZONE 'UTC')::date AS month, count(*) AS n
			FROM usage_events GROUP BY 1, 2, 3) e USING (organization_id, product, month)
		WHERE c.operations IS DISTINCT FROM e.n`, nil},
	{"every invoice counted once in its organization's e-invoice usage", `SELECT count(*) FROM (SELECT organization_id FROM tax_invoices
		GROUP BY 1 HAVING count(*) <> (SELECT count(*) FROM usage_events u WHERE u.organization_id = tax_invoices.organization_id AND u.product = 'einvoice')) d`, nil},
	{"growth rollups count every growth event once", `SELECT count(*) FROM (SELECT 1) x WHERE
		(SELECT coalesce(sum(events), 0) FROM growth_hourly_counts WHERE dimension = 'event_name') <> (SELECT count(*) FROM growth_events)`, nil},
	{"every invoice has exactly one tax_invoice.generated event", `SELECT count(*) FROM tax_invoices i WHERE (SELECT count(*) FROM webhook_events e
		WHERE e.organization_id = i.organization_id AND e.type = 'tax_invoice.generated' AND e.data->>'id' = i.id::text) <> 1`, nil},
	{"every tax_invoice.generated event names an invoice on the copy", `SELECT count(*) FROM webhook_events e WHERE e.type = 'tax_invoice.generated'
		AND NOT EXISTS (SELECT 1 FROM tax_invoices i WHERE i.organization_id = e.organization_id AND i.id::text = e.data->>'id')`, nil},
	{"every event has one delivery to its organization's endpoint", `SELECT count(*) FROM webhook_events e WHERE e.type = 'tax_invoice.generated'
		AND (SELECT count(*) FROM webhook_deliveries d WHERE d.event_id = e.id) <> 1`, nil},
	{"every pending delivery has a live job", `SELECT count(*) FROM webhook_deliveries d WHERE d.status = 'pending' AND NOT EXISTS (
		SELECT 1 FROM river_job j WHERE j.kind = 'deliver_webhook' AND j.args->>'delivery_id' = d.id::text
			AND j.state NOT IN ('completed', 'discarded', 'cancelled'))`, nil},
	{"every succeeded delivery has its successful attempt", `SELECT count(*) FROM webhook_deliveries d WHERE d.status = 'succeeded'
		AND NOT EXISTS (SELECT 1 FROM webhook_delivery_attempts a WHERE a.delivery_id = d.id AND a.succeeded)`, nil},
}

// checkConsistent checks every rule of consistency on db.
func checkConsistent(t *testing.T, db *pgxpool.Pool) {
	t.Helper()
	for _, c := range consistency {
		if n := count(t, db, c.query, c.args...); n != 0 {
			t.Errorf("%s: broken by %d rows", c.rule, n)
		}
	}
}

// checkChainsArePrefixes checks that every invoice of the copy is the source's, at the same
// place of the same chain: the copy's chains are prefixes of the source's.
func checkChainsArePrefixes(t *testing.T, source, restored *pgxpool.Pool) {
	t.Helper()
	links := func(db *pgxpool.Pool) map[string]string {
		rows, err := db.Query(context.Background(), "SELECT id::text, icv || ' ' || pih || ' ' || invoice_hash FROM tax_invoices")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		m := map[string]string{}
		for rows.Next() {
			var id, link string
			if err := rows.Scan(&id, &link); err != nil {
				t.Fatal(err)
			}
			m[id] = link
		}
		return m
	}
	all := links(source)
	for id, link := range links(restored) {
		if all[id] != link {
			t.Errorf("invoice %s is %q on the copy and %q on the source", id, link, all[id])
		}
	}
}

// continueChains checks that the copy keeps serving: a new invoice of every organization
// continues its chain (the next ICV, the last hash as its PIH), and its event is delivered by
// the copy's queue.
func continueChains(t *testing.T, s *server, restored *pgxpool.Pool, hooks *webhookCounter, orgs []string) {
	t.Helper()
	for _, org := range orgs {
		var head struct {
			icv  int64
			hash string
		}
		if err := restored.QueryRow(context.Background(), `SELECT icv, invoice_hash FROM tax_invoices
			WHERE organization_id = $1 ORDER BY icv DESC LIMIT 1`, org).Scan(&head.icv, &head.hash); err != nil {
			t.Fatalf("the chain of %s on the copy: %v", org, err)
		}
		r := call(nil, http.MethodPost, s.url("/v1/taxauth/invoices/generate/simplified"), orgToken(org), invoiceBody(org),
			http.Header{"Idempotency-Key": {"after-restore-" + org}})
		identity := invoiceIdentity(r)
		if r.status != http.StatusCreated || identity.ICV != head.icv+1 || identity.PIH != head.hash {
			t.Errorf("a new invoice of %s on the copy: %d, ICV %d and PIH %q; want 201, ICV %d and PIH %q",
				org, r.status, identity.ICV, identity.PIH, head.icv+1, head.hash)
		}
		hooks.await(t, identity.eventOf(t, restored))
	}
}

// identity is the chain position of a generated invoice.
type identity struct {
	ID  string
	ICV int64
	PIH string
}

func invoiceIdentity(r result) identity {
	var v struct {
		Invoice struct {
			ID       string `json:"id"`
			Identity struct {
				ICV int64  `json:"icv"`
				PIH string `json:"pih"`
			} `json:"identity"`
		} `json:"invoice"`
	}
	_ = json.Unmarshal(r.body, &v)
	return identity{ID: v.Invoice.ID, ICV: v.Invoice.Identity.ICV, PIH: v.Invoice.Identity.PIH}
}

// eventOf is the id of the tax_invoice.generated event of the invoice.
func (i identity) eventOf(t *testing.T, db *pgxpool.Pool) string {
	t.Helper()
	var id string
	if err := db.QueryRow(context.Background(), "SELECT id::text FROM webhook_events WHERE type = 'tax_invoice.generated' AND data->>'id' = $1", i.ID).Scan(&id); err != nil {
		t.Fatalf("the event of invoice %s: %v", i.ID, err)
	}
	return id
}

// webhookCounter is a receiver of webhook deliveries that counts them by webhook-id.
type webhookCounter struct {
	url       string
	mu        sync.Mutex
	delivered map[string]int
}

func newWebhookCounter(t *testing.T) *webhookCounter {
	c := &webhookCounter{delivered: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		c.mu.Lock()
		c.delivered[r.Header.Get("webhook-id")]++
		c.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	c.url = srv.URL
	return c
}

// await waits until event id was delivered.
func (c *webhookCounter) await(t *testing.T, id string) {
	t.Helper()
	awaitCondition(t, time.Minute, "the delivery of event "+id, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.delivered[id] > 0
	})
}

// awaitCondition polls ok until it holds, failing t after wait.
func awaitCondition(t *testing.T, wait time.Duration, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(wait); !ok(); {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", wait, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// runTool runs a PostgreSQL client program of the clusters' version.
func runTool(t *testing.T, name string, args ...string) {
	t.Helper()
	bin, err := pgcluster.Binary(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		if bin, err = exec.LookPath(name); err != nil {
			t.Fatalf("%s is not installed: %v", name, err)
		}
	}
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}
