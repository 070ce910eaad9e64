package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/postgres"
)

// The lists benchmark (-lists, `make bench-lists`) stores request logs and growth events as
// months of traffic leave them: request logs over the 29 days before now (within the 30 days
// they are kept, so they span 30 daily partitions), growth events over the 365 days before now
// (13 monthly partitions); most of both belong to one big organization, the rest to a few
// others.
const (
	requestLogSpan   = 29 * 24 * time.Hour
	growthEventSpan  = 365 * 24 * time.Hour
	bigShare         = 0.9 // of the rows, the big organization's
	otherOrgs        = 4
	listKeys         = 8 // API keys of the big organization (each under its own rate limit)
	copyChunk        = 500_000
	visitorPool      = 150_000 // distinct anonymous visitors, as BenchmarkGrowthSummary's
	listBenchMissing = "bench-never-sent"
)

// listFixture is what one database of the lists benchmark holds beside its rows.
type listFixture struct {
	BigOrg    string
	Keys      []string    // full API keys of the big organization
	APIKeyIDs []uuid.UUID // the key ids its request logs carry (one in listKeys each)
}

// listScopes are the scopes of the lists read.
var listScopes = []string{"usage:read", "growth-events:read", "audit-events:read"}

// seedLists fills the database behind base (dsn) with rows request logs and as many growth
// events, after replacing the partitions that the migration's first partition covered with a
// partition per period, as a database running for a year has them.
func seedLists(ctx context.Context, base, dsn string, rows int) (*listFixture, error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	if err := partitionThePast(ctx, pool); err != nil {
		return nil, fmt.Errorf("partitions: %w", err)
	}
	fix := &listFixture{}
	orgs := make([]string, 0, 1+otherOrgs)
	for i := range 1 + otherOrgs {
		var org struct {
			ID string `json:"id"`
		}
		body := fmt.Sprintf(`{"legal_name_ar":"شركة القوائم %d","legal_name_en":"Lists Co %d","display_name":"Lists %d","organization_type":"standard_customer","country":"SA"}`, i, i, i)
		if err := call(ctx, base, "POST", "/v1/organizations", "dev:operator", body, 201, &org); err != nil {
			return nil, err
		}
		orgs = append(orgs, org.ID)
	}
	fix.BigOrg = orgs[0]
	for k := range listKeys {
		var key struct {
			ID      string `json:"id"`
			FullKey string `json:"full_key"`
		}
		scopes, _ := json.Marshal(listScopes)
		body := fmt.Sprintf(`{"organization_id":%q,"name":"lists-%d","environment":"sandbox","scopes":%s}`, fix.BigOrg, k, scopes)
		if err := call(ctx, base, "POST", "/v1/api-keys", "dev:operator", body, 201, &key); err != nil {
			return nil, err
		}
		fix.Keys = append(fix.Keys, key.FullKey)
		fix.APIKeyIDs = append(fix.APIKeyIDs, uuid.MustParse(key.ID))
	}
	start := time.Now()
	now := start.UTC().Add(-time.Minute)
	if err := copyChunks(ctx, pool, "request_logs", requestLogColumns, rows, requestLogRow(orgs, fix.APIKeyIDs, now, rows)); err != nil {
		return nil, err
	}
	log.Printf("%d request logs stored in %v", rows, time.Since(start).Round(time.Second))
	start = time.Now()
	if err := copyChunks(ctx, pool, "growth_events", growthEventColumns, rows, growthEventRow(orgs, now, rows)); err != nil {
		return nil, err
	}
	log.Printf("%d growth events stored in %v", rows, time.Since(start).Round(time.Second))
	// Visibility maps and statistics, as autovacuum leaves them on a table at rest.
	start = time.Now()
	if _, err := pool.Exec(ctx, "VACUUM ANALYZE request_logs, growth_events, growth_hourly_counts, growth_visitors, growth_organizations, growth_actors, "+
		"growth_daily_counts, growth_provider_daily_counts, growth_organization_visitors, growth_organization_actors, "+
		"growth_visitor_days, growth_actor_days, growth_organization_visitor_days, growth_organization_actor_days, "+
		"growth_visitor_hours, growth_actor_hours, growth_organization_visitor_hours, growth_organization_actor_hours, "+
		"growth_monthly_counts, growth_provider_monthly_counts, growth_pending_sightings"); err != nil {
		return nil, err
	}
	var size string
	if err := pool.QueryRow(ctx, "SELECT pg_size_pretty(pg_database_size(current_database()))").Scan(&size); err != nil {
		return nil, err
	}
	log.Printf("vacuumed in %v; the database holds %s", time.Since(start).Round(time.Second), size)
	return fix, nil
}

// partitionThePast replaces the first partition of each time-partitioned table, which a fresh
// migration makes to cover everything before tomorrow (or next month), with partitions of
// their periods back to the oldest row seeded, moving the few rows it holds.
func partitionThePast(ctx context.Context, pool *pgxpool.Pool) error {
	tables := []string{"request_logs", "request_log_bodies", "audit_events", "growth_events"}
	first := map[string]string{}
	for _, table := range tables {
		var name string
		err := pool.QueryRow(ctx, `
			SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
			WHERE i.inhparent = $1::regclass AND pg_get_expr(c.relpartbound, c.oid) LIKE 'FOR VALUES FROM (MINVALUE)%'`, table).Scan(&name)
		switch {
		case errors.Is(err, pgx.ErrNoRows): // created partitioned (request_log_bodies)
			continue
		case err != nil:
			return fmt.Errorf("the first partition of %s: %w", table, err)
		}
		first[table] = pgx.Identifier{name}.Sanitize()
		if _, err := pool.Exec(ctx, fmt.Sprintf("ALTER TABLE %s DETACH PARTITION %s", pgx.Identifier{table}.Sanitize(), first[table])); err != nil {
			return err
		}
	}
	now := time.Now()
	for at := now.Add(-growthEventSpan - 31*24*time.Hour); at.Before(now); at = at.Add(7 * 24 * time.Hour) {
		if _, err := postgres.CreatePartitions(ctx, pool, at); err != nil {
			return err
		}
	}
	for table := range first {
		if _, err := pool.Exec(ctx, fmt.Sprintf("INSERT INTO %s SELECT * FROM %s; DROP TABLE %s", pgx.Identifier{table}.Sanitize(), first[table], first[table])); err != nil {
			return err
		}
	}
	return nil
}

// copyChunks COPYs n rows made by row into table, copyChunk rows a statement: each its own
// transaction, so that the growth rollup's statement trigger sees a bounded batch.
func copyChunks(ctx context.Context, pool *pgxpool.Pool, table string, columns []string, n int, row func(i int) []any) error {
	for from := 0; from < n; from += copyChunk {
		next, to := from, min(n, from+copyChunk)
		if _, err := pool.CopyFrom(ctx, pgx.Identifier{table}, columns, pgx.CopyFromFunc(func() ([]any, error) {
			if next == to {
				return nil, nil
			}
			next++
			return row(next - 1), nil
		})); err != nil {
			return fmt.Errorf("%s: %w", table, err)
		}
	}
	return nil
}

// v7 is a UUIDv7 of instant at with random low bits: the id a row written then has.
func v7(rng *rand.Rand, at time.Time) uuid.UUID {
	var id uuid.UUID
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(at.UnixMilli()))
	copy(id[:6], ms[2:])
	binary.BigEndian.PutUint64(id[8:], rng.Uint64())
	binary.BigEndian.PutUint16(id[6:], uint16(rng.Uint32()))
	id[6] = id[6]&0x0f | 0x70
	id[8] = id[8]&0x3f | 0x80
	return id
}

// at is the time of row i of n spread evenly over span up to now: oldest first.
func at(i, n int, span time.Duration, now time.Time) time.Time {
	return now.Add(-span + time.Duration(float64(span)*float64(i)/float64(n)))
}

// pickOrg gives the big organization bigShare of the rows, the others the rest.
func pickOrg(rng *rand.Rand, orgs []string) string {
	if rng.Float64() < bigShare {
		return orgs[0]
	}
	return orgs[1+rng.IntN(len(orgs)-1)]
}

var requestLogColumns = []string{"id", "organization_id", "request_id", "occurred_at", "principal_type", "key_prefix",
	"method", "path", "route", "status", "latency_ms", "api_key_id", "operation", "idempotency_key"}

// loggedRequest is a kind of request a request log records, with its share of the traffic.
type loggedRequest struct {
	weight                         int
	method, path, route, operation string
}

// loggedRequests: reads dominate; DELETE is never sent (a filter that matches nothing).
var loggedRequests = []loggedRequest{
	{40, "GET", "/v1/organizations/0193b5e2-4a1c-7d2e-8f30-5a6b7c8d9e01", "/v1/organizations/{id}", "getOrganization"},
	{20, "GET", "/v1/products", "/v1/products", "listProducts"},
	{15, "GET", "/v1/subscriptions", "/v1/subscriptions", "listSubscriptions"},
	{10, "POST", "/v1/taxauth/invoices/generate/simplified", "/v1/taxauth/invoices/generate/simplified", "generateSimplifiedInvoice"},
	{5, "POST", "/v1/subscriptions", "/v1/subscriptions", "createSubscription"},
	{5, "PATCH", "/v1/organizations/0193b5e2-4a1c-7d2e-8f30-5a6b7c8d9e01", "/v1/organizations/{id}", "updateOrganization"},
	{5, "POST", "/v1/growth/events", "/v1/growth/events", "createGrowthEvent"},
}

// requestLogRow makes request log i of n: 94 % answered 2xx, 5 % 4xx, 1 % 5xx; POSTs carry
// an Idempotency-Key of their own.
func requestLogRow(orgs []string, keys []uuid.UUID, now time.Time, n int) func(i int) []any {
	total := 0
	for _, r := range loggedRequests {
		total += r.weight
	}
	return func(i int) []any {
		rng := rand.New(rand.NewPCG(1, uint64(i)))
		t := at(i, n, requestLogSpan, now)
		w := rng.IntN(total)
		req := loggedRequests[0]
		for _, r := range loggedRequests {
			if w < r.weight {
				req = r
				break
			}
			w -= r.weight
		}
		status := 200
		switch c := rng.IntN(100); {
		case c == 0:
			status = 503
		case c <= 5:
			status = 404
		}
		var idem *string
		if req.method == "POST" {
			k := fmt.Sprintf("idem-%d", i)
			idem = &k
		}
		org := uuid.MustParse(pickOrg(rng, orgs))
		key := keys[rng.IntN(len(keys))]
		return []any{v7(rng, t), org, fmt.Sprintf("req_%d", i), t.Add(-time.Duration(rng.IntN(50)) * time.Millisecond),
			"organization", "sk_sandbox_lists", req.method, req.path, req.route, status, rng.IntN(50), key, req.operation, idem}
	}
}

var growthEventColumns = []string{"id", "organization_id", "received_at", "occurred_at", "event_name", "traffic_type",
	"anonymous_id", "product", "source", "properties"}

// growthEventRow makes growth event i of n, shaped like BenchmarkGrowthSummary's: page views
// dominate, each funnel step loses visitors, a fifth is internal traffic; one in ten
// thousand claims to occur after it was received.
func growthEventRow(orgs []string, now time.Time, n int) func(i int) []any {
	funnelWeights := []int{400, 120, 60, 50, 45, 40, 35, 10, 8} // per core.GrowthFunnel
	var names []string
	for i, name := range core.GrowthFunnel {
		for range funnelWeights[i] {
			names = append(names, name)
		}
	}
	for _, name := range core.GrowthEventNames {
		for range 10 {
			names = append(names, name)
		}
	}
	traffic := []string{"public", "public", "public", "public", "public", "real_customer", "sandbox_customer", "sandbox_customer", "employee", "load_test"}
	products := []string{"einvoice", "address", "platform"}
	return func(i int) []any {
		rng := rand.New(rand.NewPCG(2, uint64(i)))
		received := at(i, n, growthEventSpan, now)
		occurred := received.Add(-time.Duration(rng.IntN(60_000)) * time.Millisecond)
		if rng.IntN(10_000) == 0 {
			occurred = received.Add(time.Hour)
		}
		var anon, product, source *string
		if rng.IntN(3) > 0 {
			a := fmt.Sprintf("visitor-%06d", rng.IntN(visitorPool))
			anon = &a
		}
		if rng.IntN(4) > 0 {
			product = &products[rng.IntN(len(products))]
		}
		if rng.IntN(2) == 0 {
			s := fmt.Sprintf("source-%02d", rng.IntN(60))
			source = &s
		}
		return []any{v7(rng, received), pickOrg(rng, orgs), received, occurred, names[rng.IntN(len(names))],
			traffic[rng.IntN(len(traffic))], anon, product, source, []byte(`{}`)}
	}
}
