package postgres_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
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
// rates them all, RENEWAL_CONCURRENCY batches at once (default 8) on a pool of twice as many
// connections (BillDue's default takes half the pool). The floor replays, on a copy of the
// same seeded database, exactly the SQL statements BillDue sent (recorded by a pgx tracer, with
// their arguments and transactions), each connection's in its order on a connection of its
// own, all at once: the same database work without the Go around it. Beside the rates it
// reports the CPU time per invoice of this process (Go) and of the PostgreSQL backends of
// its connections (from /proc: ticks of 10 ms), and of the floor's backends, and this
// process's allocations and statements per invoice.
//
//	make bench-renewal RENEWAL_BENCH_N=100000 RENEWAL_CONCURRENCY=8
func BenchmarkRenewal(b *testing.B) {
	n, workers := envCount(b, "RENEWAL_BENCH_N", 2000), envCount(b, "RENEWAL_CONCURRENCY", 8)
	ctx := context.Background()
	dsn := pgtest.NewDatabase(b)
	seedRenewals(b, dsn, n)
	floorDB := copyDatabase(b, dsn)

	rec := &statementRecorder{byConn: map[*pgx.Conn][]statement{}}
	db, err := postgres.Open(ctx, dsn, func(c *pgxpool.Config) {
		c.ConnConfig.Tracer = rec
		c.MaxConns = int32(2 * workers)
	})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.Events = httpapi.EventEncoder{}
	// Tax documents are excluded: they are issued asynchronously by their own job, and the
	// job's insert is left out too (no queue in this process), on both sides.
	db.Jobs = noJobs{}
	// Wired as in a server, whose API is idle: the run goes at its full concurrency.
	db.Requests = httpapi.NewInFlight(httpapi.DefaultQuiet)
	backends := poolBackends(b, db.Pool)

	b.ResetTimer()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	goCPU, pgCPU := processCPU(b), backendsCPU(b, backends)
	start := time.Now()
	taken, err := db.BillDue(ctx)
	api := time.Since(start)
	goCPU, pgCPU = processCPU(b)-goCPU, backendsCPU(b, backends)-pgCPU
	runtime.ReadMemStats(&after)
	b.StopTimer()
	if err != nil || taken != n {
		b.Fatalf("BillDue took %d of %d: %v", taken, n, err)
	}
	wantRatedInvoices(b, db.Pool, n)
	// Printed at once: the floor's replay of a large run may take many minutes (it took ten
	// and more at 100,000 on the loaded machine, docs/performance.md).
	fmt.Fprintf(os.Stderr, "BillDue: %d invoices in %v (%.0f/s); CPU per invoice Go %.0f µs, PostgreSQL %.0f µs; the floor replays them now\n",
		n, api.Round(time.Millisecond), float64(n)/api.Seconds(), float64(goCPU.Microseconds())/float64(n), float64(pgCPU.Microseconds())/float64(n))

	floor, floorPG := replay(b, dsn, floorDB, rec.byConn)
	apiRate, floorRate := float64(n)/api.Seconds(), float64(n)/floor.Seconds()
	perInvoice := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(n) }
	b.ReportMetric(apiRate, "invoices/s")
	b.ReportMetric(floorRate, "floor-invoices/s")
	b.ReportMetric(apiRate/floorRate, "ratio")
	b.ReportMetric(perInvoice(goCPU), "go-cpu-µs/invoice")
	b.ReportMetric(perInvoice(pgCPU), "pg-cpu-µs/invoice")
	b.ReportMetric(perInvoice(floorPG), "floor-pg-cpu-µs/invoice")
	// The process's allocations during BillDue (the recorder's slices of statements among them,
	// a few bytes a statement): unlike CPU times they do not move with the machine's load.
	allocated, allocs := float64(after.TotalAlloc-before.TotalAlloc)/float64(n), float64(after.Mallocs-before.Mallocs)/float64(n)
	statements := float64(rec.count()) / float64(n)
	b.ReportMetric(allocated, "B/invoice")
	b.ReportMetric(allocs, "allocs/invoice")
	b.ReportMetric(statements, "statements/invoice")
	b.Logf("%d renewals, %d at once: BillDue %v (%.0f invoices/s), floor %v (%.0f invoices/s, %d statements on %d connections: %.2f an invoice), ratio %.2f; "+
		"CPU per invoice: Go %.0f µs, PostgreSQL %.0f µs (floor %.0f µs); allocated per invoice: %.0f B in %.0f allocations",
		n, workers, api.Round(time.Millisecond), apiRate, floor.Round(time.Millisecond), floorRate, rec.count(), len(rec.byConn), statements, apiRate/floorRate,
		perInvoice(goCPU), perInvoice(pgCPU), perInvoice(floorPG), allocated, allocs)
}

// envCount is the positive count in environment variable name, or def when it is unset.
func envCount(b *testing.B, name string, def int) int {
	b.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: a positive count", name, s)
	}
	return n
}

// poolBackends opens every connection of pool now (so none opens during the measurement) and
// returns their PostgreSQL backends' process ids.
func poolBackends(b *testing.B, pool *pgxpool.Pool) []int {
	b.Helper()
	conns := make([]*pgxpool.Conn, pool.Config().MaxConns)
	pids := make([]int, len(conns))
	for i := range conns {
		c, err := pool.Acquire(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		conns[i], pids[i] = c, int(c.Conn().PgConn().PID())
	}
	for _, c := range conns {
		c.Release()
	}
	return pids
}

// backendsCPU is the CPU time the processes pids have used.
func backendsCPU(b *testing.B, pids []int) time.Duration {
	b.Helper()
	var ticks int64
	for _, pid := range pids {
		ticks += cpuTicks(b, pid)
	}
	return time.Duration(ticks) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

// processCPU is the CPU time this process has used.
func processCPU(b *testing.B) time.Duration {
	b.Helper()
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// seedRenewals makes the scenario's plan (fee 10000, 2 units included, graduated ≤4 @100,
// ≤6 @50 + flat 300, beyond @20), n organizations with one subscription each whose renewal fell
// due an hour ago, and 9 units of usage each in the period that renewal closes.
func seedRenewals(b testing.TB, dsn string, n int) {
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
	if _, err := db.Pool.Exec(ctx, `UPDATE plans SET status = 'active' WHERE id = $1`, plan.ID); err != nil {
		b.Fatal(err)
	}
	pgtest.SeedDueRenewals(b, db.Pool, template.ID, plan.ID, n)
}

func ratedPlan() core.PlanCreate {
	fee, flat := int64(10000), int64(300)
	four, six := 4.0, 6.0
	metric := "short_addresses_resolved"
	return core.PlanCreate{
		ProductID: uuid.MustParse(pgtest.AddressProduct), Code: "renewal-bench", Name: "Renewal bench", BillingPeriod: "monthly",
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
func copyDatabase(b testing.TB, dsn string) string {
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

// statementRecorder is a pgx tracer keeping every statement sent, in order, by connection (a
// connection sends them one at a time: one transaction after another).
type statementRecorder struct {
	mu     sync.Mutex
	byConn map[*pgx.Conn][]statement
}

func (r *statementRecorder) TraceQueryStart(ctx context.Context, c *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	r.mu.Lock()
	r.byConn[c] = append(r.byConn[c], statement{sql: data.SQL, args: data.Args})
	r.mu.Unlock()
	return ctx
}

func (r *statementRecorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// count is how many statements were recorded.
func (r *statementRecorder) count() int {
	n := 0
	for _, s := range r.byConn {
		n += len(s)
	}
	return n
}

// replay sends each connection's statements, in order, on a connection of its own (the API's
// connection settings) to database name of the server of dsn, all connections at once, and
// returns how long that took and the CPU time their backends used.
func replay(b *testing.B, dsn, name string, byConn map[*pgx.Conn][]statement) (time.Duration, time.Duration) {
	b.Helper()
	ctx := context.Background()
	cfg, err := postgres.PoolConfig(dsn)
	if err != nil {
		b.Fatal(err)
	}
	cfg.ConnConfig.Database = name
	cfg.MaxConns = int32(len(byConn))
	pool, err := pgxpool.NewWithConfig(ctx, cfg) // the API's AfterConnect too
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	var streams [][]statement
	var conns []*pgx.Conn
	var pids []int
	for _, s := range byConn {
		c, err := pool.Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Release()
		streams, conns, pids = append(streams, s), append(conns, c.Conn()), append(pids, int(c.Conn().PgConn().PID()))
	}
	// The copy's pages are not in PostgreSQL's buffers yet (the original's are, from the seed):
	// read the tables the renewal reads first.
	for _, table := range []string{"organizations", "subscriptions", "usage_events", "plans", "prices"} {
		if _, err := conns[0].Exec(ctx, "SELECT count(*) FROM "+table); err != nil {
			b.Fatal(err)
		}
	}
	cpu := backendsCPU(b, pids)
	start := time.Now()
	var wg sync.WaitGroup
	for i, conn := range conns {
		wg.Go(func() {
			for _, s := range streams[i] {
				if _, err := conn.Exec(ctx, s.sql, s.args...); err != nil {
					b.Errorf("replay %s: %v", s.sql, err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if b.Failed() {
		b.FailNow()
	}
	return elapsed, backendsCPU(b, pids) - cpu
}
