//go:build reliability

package reliability_test

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestDatabaseOutageUnderLoad stops PostgreSQL while clients create organizations (half of
// them with an Idempotency-Key), then starts it again. While it is down every request must
// fail fast with 503 unavailable, retryable, and /readyz must say so; once it is back the
// same server process must serve again by itself; and no change may be half-written: every
// organization has its audit event, every stored idempotency key its organization.
func TestDatabaseOutageUnderLoad(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	s := startServer(t, c.dsn(), "")

	type sample struct {
		phase string
		r     result
	}
	var (
		mu      sync.Mutex
		samples []sample
		phase   atomic.Value
		seq     atomic.Int64
		stop    = make(chan struct{})
		wg      sync.WaitGroup
	)
	phase.Store("up")
	client := &http.Client{Timeout: 60 * time.Second}
	acked := map[string]bool{} // organization ids answered 201
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				n := seq.Add(1)
				var h http.Header
				name := fmt.Sprintf("plain-%d-%d", w, n)
				if n%2 == 0 {
					name = fmt.Sprintf("keyed-%d-%d", w, n)
					h = http.Header{"Idempotency-Key": {name}}
				}
				p := phase.Load().(string)
				r := call(client, http.MethodPost, s.url("/v1/organizations"), operator, orgBody(name), h)
				if end := phase.Load().(string); end != p {
					p = "during " + p + "/" + end // the database changed under this request
				}
				mu.Lock()
				samples = append(samples, sample{p, r})
				if r.status == http.StatusCreated {
					acked[r.json()["id"].(string)] = true
				}
				mu.Unlock()
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}

	time.Sleep(1500 * time.Millisecond)
	phase.Store("stopping")
	stopCtx := t.Context()
	if err := c.Stop(stopCtx); err != nil {
		t.Fatal(err)
	}
	phase.Store("down")
	time.Sleep(500 * time.Millisecond) // requests started before the stop have finished
	ready := call(nil, http.MethodGet, s.url("/readyz"), "", "", nil)
	if ready.status != http.StatusServiceUnavailable || ready.code() != "unavailable" {
		t.Errorf("/readyz with the database down: %d %s", ready.status, ready.body)
	}
	time.Sleep(2500 * time.Millisecond)

	phase.Store("restarting")
	restarted := time.Now()
	c.restart(t)
	var recovery time.Duration
	for {
		r := call(nil, http.MethodGet, s.url("/readyz"), "", "", nil)
		if r.status == http.StatusOK {
			recovery = time.Since(restarted)
			break
		}
		if time.Since(restarted) > 30*time.Second {
			t.Fatalf("/readyz still %d 30 s after PostgreSQL came back: %s", r.status, r.body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // requests that raced the restart have finished
	phase.Store("recovered")
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	wg.Wait()

	var downLatency []time.Duration
	counts := map[string]map[int]int{}
	for _, sm := range samples {
		if counts[sm.phase] == nil {
			counts[sm.phase] = map[int]int{}
		}
		counts[sm.phase][sm.r.status]++
		if sm.r.err != nil {
			t.Errorf("%s: transport error: %v", sm.phase, sm.r.err)
			continue
		}
		switch sm.phase {
		case "down":
			downLatency = append(downLatency, sm.r.latency)
			if sm.r.status != http.StatusServiceUnavailable || sm.r.code() != "unavailable" || sm.r.json()["retryable"] != true {
				t.Errorf("database down: %d %s", sm.r.status, sm.r.body)
			}
		case "recovered", "up":
			if sm.r.status != http.StatusCreated {
				t.Errorf("database %s: %d %s", sm.phase, sm.r.status, sm.r.body)
			}
		default: // around the stop and the restart: either outcome, but nothing else
			if sm.r.status != http.StatusCreated && sm.r.status != http.StatusServiceUnavailable {
				t.Errorf("%s: %d %s", sm.phase, sm.r.status, sm.r.body)
			}
		}
	}
	if len(downLatency) < 20 || counts["recovered"][http.StatusCreated] < 20 {
		t.Errorf("too little load to judge: %v", counts)
	}
	if p := percentile(downLatency, 100); p > 5*time.Second {
		t.Errorf("slowest failure while down took %v; want fast failures (connect timeout 3 s)", p)
	}

	// Nothing half-written.
	db := c.pool(t)
	orgs := count(t, db, "SELECT count(*) FROM organizations")
	if n := count(t, db, "SELECT count(*) FROM organizations o WHERE NOT EXISTS (SELECT 1 FROM audit_events a WHERE a.resource_id = o.id::text AND a.action = 'organization.created')"); n != 0 {
		t.Errorf("%d organizations without their audit event", n)
	}
	if n := count(t, db, "SELECT count(*) FROM audit_events WHERE action = 'organization.created'"); n != orgs {
		t.Errorf("%d organization.created audit events for %d organizations", n, orgs)
	}
	keyed := count(t, db, "SELECT count(*) FROM organizations WHERE legal_name_en LIKE 'keyed-%'")
	if n := count(t, db, "SELECT count(*) FROM idempotency_keys WHERE path = '/v1/organizations' AND response_status = 201"); n != keyed {
		t.Errorf("%d stored idempotency keys for %d keyed organizations", n, keyed)
	}
	missing := 0
	for id := range acked {
		if count(t, db, "SELECT count(*) FROM organizations WHERE id = $1", id) != 1 {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d acknowledged organizations are missing", missing)
	}
	t.Logf("outage figures: requests by phase and status %v; while down p50 %v, p99 %v, max %v; /readyz ready %v after PostgreSQL restarted; %d organizations, %d acknowledged",
		counts, percentile(downLatency, 50), percentile(downLatency, 99), percentile(downLatency, 100), recovery.Round(time.Millisecond), orgs, len(acked))
}
