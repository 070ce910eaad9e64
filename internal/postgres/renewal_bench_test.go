package postgres_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/httpapi"
	"github.com/provider/coreapi/internal/pgtest"
	"github.com/provider/coreapi/internal/postgres"
)

// The renewal scenario (docs/performance.md, "Renewals"): RENEWAL_BENCH_N subscriptions, one
// organization each, on a rated plan of the address product, each with 9 units of usage in
// the period its renewal closes, all due by the wall clock; one process's BillDue renews and
// rates them all. The floor replays, on a copy of the same seeded database, exactly the SQL
// statements BillDue sent (recorded by a pgx tracer, with their arguments and transactions) on
// one connection: the same database work without the Go around it.
//
//	make bench-renewal RENEWAL_BENCH_N=100000
func BenchmarkRenewal(b *testing.B) {
	n := 2000
	if s := os.Getenv("RENEWAL_BENCH_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			b.Fatalf("RENEWAL_BENCH_N=%q: a positive count", s)
		}
	}
	ctx := context.Background()
	dsn := pgtest.NewDatabase(b)
	seedRenewals(b, dsn, n)
	floorDB := copyDatabase(b, dsn)

	rec := &statementRecorder{}
	db, err := postgres.Open(ctx, dsn, func(c *pgxpool.Config) { c.ConnConfig.Tracer = rec })
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.Events = httpapi.EventEncoder{}
	// Tax documents are excluded: they are issued asynchronously by their own job, and the
	// job's insert is left out too (no queue in this process), on both sides.
	db.Jobs = noJobs{}

	b.ResetTimer()
	start := time.Now()
	taken, err := db.BillDue(ctx)
	api := time.Since(start)
	b.StopTimer()
	if err != nil || taken != n {
		b.Fatalf("BillDue took %d of %d: %v", taken, n, err)
	}
	wantRatedInvoices(b, db.Pool, n)

	floor := replay(b, dsn, floorDB, rec.statements)
	apiRate, floorRate := float64(n)/api.Seconds(), float64(n)/floor.Seconds()
	b.ReportMetric(apiRate, "invoices/s")
	b.ReportMetric(floorRate, "floor-invoices/s")
	b.ReportMetric(apiRate/floorRate, "ratio")
	b.Logf("%d renewals: BillDue %v (%.0f invoices/s), floor %v (%.0f invoices/s, %d statements), ratio %.2f",
		n, api.Round(time.Millisecond), apiRate, floor.Round(time.Millisecond), floorRate, len(rec.statements), apiRate/floorRate)
}

// seedRenewals makes the scenario's plan (fee 10000, 2 units included, graduated ≤4 @100,
// ≤6 @50 + flat 300, beyond @20), n organizations with one subscription each whose renewal fell
// due an hour ago, and 9 units of usage each in the period that renewal closes.
func seedRenewals(b *testing.B, dsn string, n int) {
	b.Helper()
	ctx := context.Background()
	db, err := postgres.Open(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	operator := core.WithPrincipal(ctx, &core.Principal{Kind: core.PrincipalOperator, Subject: "dev:operator"})
	plan, err := postgres.NewCatalogueService(db).CreatePlan(operator, ratedPlan())
	if err != nil {
		b.Fatal(err)
	}
	template, err := postgres.NewOrganizationService(db).CreateOrganization(operator, core.OrganizationCreate{
		LegalNameAr: "شركة", LegalNameEn: "Renewals", DisplayName: "Renewals", OrganizationType: "standard_customer", Country: "SA",
	})
	if err != nil {
		b.Fatal(err)
	}
	renewsAt := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	anchor := renewsAt.AddDate(0, -1, 0)
	for _, s := range []struct {
		sql  string
		args []any
	}{
		{`UPDATE plans SET status = 'active' WHERE id = $1`, []any{plan.ID}},
		{`INSERT INTO organizations SELECT (jsonb_populate_record(NULL::organizations,
			to_jsonb(o) || jsonb_build_object('id', gen_random_uuid(), 'display_name', 'renewal-bench'))).*
			FROM organizations o, generate_series(1, $2) WHERE o.id = $1`, []any{template.ID, n}},
		{`INSERT INTO subscriptions (id, organization_id, product_id, plan_id, commercial_status, service_status, billing_status,
			started_at, billing_anchor_at, renews_at, provisioned_at)
			SELECT gen_random_uuid(), id, $1, $2, 'active', 'active', 'current', $3, $3, $4, $3
			FROM organizations WHERE display_name = 'renewal-bench'`, []any{addressProduct, plan.ID, anchor, renewsAt}},
		{`INSERT INTO usage_events (id, organization_id, product, occurred_at)
			SELECT overlay(gen_random_uuid()::text PLACING left(time_partition_bound(now())::text, 13) FROM 1)::uuid, o.id, 'address', $1::timestamptz + k * interval '1 hour'
			FROM organizations o, generate_series(1, 9) k WHERE display_name = 'renewal-bench'`, []any{anchor}},
		{`ANALYZE`, nil},
	} {
		if _, err := db.Pool.Exec(ctx, s.sql, s.args...); err != nil {
			b.Fatalf("%s: %v", s.sql, err)
		}
	}
}

const addressProduct = "0193a000-0000-7000-8000-000000000002"

func ratedPlan() core.PlanCreate {
	fee, flat := int64(10000), int64(300)
	four, six := 4.0, 6.0
	metric := "short_addresses_resolved"
	return core.PlanCreate{
		ProductID: uuid.MustParse(addressProduct), Code: "renewal-bench", Name: "Renewal bench", BillingPeriod: "monthly",
		Currency: "SAR", RecurringFee: &fee, IncludedUsage: []core.IncludedUsage{{Metric: metric, Quantity: 2}}, OverageRules: []core.OverageRule{},
		Prices: []*core.Price{
			{ComponentType: "recurring_fee", Amount: &fee, Currency: "SAR", TaxTreatment: "tax_exclusive", Status: core.PriceActive},
			{ComponentType: "graduated_usage", Metric: &metric, Currency: "SAR", TaxTreatment: "tax_exclusive", Status: core.PriceActive, Tiers: []core.PriceTier{
				{UpperBound: &four, UnitAmount: 100}, {UpperBound: &six, UnitAmount: 50, FlatAmount: &flat}, {UnitAmount: 20}}},
		},
	}
}

// wantRatedInvoices checks every subscription got its rated renewal invoice: 9 used, 2
// included: 2×100 + 2×50 + 300 + 3×20 of usage and the fee of 10000, VAT line by line.
func wantRatedInvoices(b *testing.B, pool *pgxpool.Pool, n int) {
	b.Helper()
	var got int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM billing_invoices
		WHERE subtotal = 10660 AND tax = 1599 AND total = 12259 AND jsonb_array_length(lines) = 5`).Scan(&got); err != nil || got != n {
		b.Fatalf("%d rated renewal invoices of 12259, want %d (%v)", got, n, err)
	}
}

// copyDatabase makes a copy of the database of dsn (CREATE DATABASE … TEMPLATE), dropped at
// the end, and returns the copy's name.
func copyDatabase(b *testing.B, dsn string) string {
	b.Helper()
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		b.Fatal(err)
	}
	source, copyName := cfg.Database, cfg.Database+"_floor"
	cfg.Database = "postgres"
	admin, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := admin.Exec(ctx, fmt.Sprintf(`CREATE DATABASE %s TEMPLATE %s`,
		pgx.Identifier{copyName}.Sanitize(), pgx.Identifier{source}.Sanitize())); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_, _ = admin.Exec(ctx, fmt.Sprintf(`DROP DATABASE %s WITH (FORCE)`, pgx.Identifier{copyName}.Sanitize()))
		_ = admin.Close(ctx)
	})
	return copyName
}

// statement is one statement a connection sent, with its arguments.
type statement struct {
	sql  string
	args []any
}

// statementRecorder is a pgx tracer keeping every statement sent, in order (BillDue sends
// them one at a time: one transaction after another).
type statementRecorder struct {
	mu         sync.Mutex
	statements []statement
}

func (r *statementRecorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	r.mu.Lock()
	r.statements = append(r.statements, statement{sql: data.SQL, args: data.Args})
	r.mu.Unlock()
	return ctx
}

func (r *statementRecorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// replay sends the statements, in order, on one connection (the API's connection settings)
// to database name of the server of dsn, and returns how long that took.
func replay(b *testing.B, dsn, name string, statements []statement) time.Duration {
	b.Helper()
	ctx := context.Background()
	cfg, err := postgres.PoolConfig(dsn)
	if err != nil {
		b.Fatal(err)
	}
	cfg.ConnConfig.Database = name
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	// The copy's pages are not in PostgreSQL's buffers yet (the original's are, from the seed):
	// read the tables the renewal reads first.
	for _, table := range []string{"organizations", "subscriptions", "usage_events", "plans", "prices"} {
		if _, err := conn.Exec(ctx, "SELECT count(*) FROM "+table); err != nil {
			b.Fatal(err)
		}
	}
	start := time.Now()
	for _, s := range statements {
		if _, err := conn.Exec(ctx, s.sql, s.args...); err != nil {
			b.Fatalf("replay %s: %v", s.sql, err)
		}
	}
	return time.Since(start)
}
