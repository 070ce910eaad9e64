package postgres_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/einvoice"
	"github.com/provider/coreapi/internal/pgtest"
	"github.com/provider/coreapi/internal/postgres"
)

// BenchmarkTaxInvoiceStorage generates, stamps and stores simplified invoices through the
// service, as generateSimplifiedInvoice does, over a pool of one connection, and reports
// beside Go's figures the CPU time of that connection's PostgreSQL backend per invoice
// (pg-cpu-µs/op, from /proc: clock ticks of 10 ms, so run a few thousand), the CPU time of this
// whole test process (go-cpu-µs/op, from getrusage: the service, pgx and the garbage
// collector), the statements it sent per invoice (statements/op, begin and commit included)
// and the round trips they took (round-trips/op: a statement sent alone is one, a batch of
// them one in all). Unlike CPU time, the machine's load moves neither count. As in the API
// (cmd/coreapi), the DB caches credentials and entitlement standings (listeningCredentialCache:
// its listener runs and is heard), so the organization's standing is read once when the cache
// has none, then served from it until its entry's lifetime (2.5 to 5 s) ends, not read per
// invoice. Its backend has touched the whole buffer pool first, as a server's long-lived
// connections have (warmBufferPool). The sub-benchmarks store the bodies with each TOAST
// compression and without, and maintain fewer indexes. Run it with
// `go test -run x -bench TaxInvoiceStorage -benchtime 2000x ./internal/postgres/`.
func BenchmarkTaxInvoiceStorage(b *testing.B) {
	ctx := context.Background()
	statements := new(statementCounter)
	d, services, org, tenant := servicesOfNewOrganization(b, pgtest.NewDatabase(b)+" pool_max_conns=1",
		func(c *pgxpool.Config) { c.ConnConfig.Tracer = statements })
	listeningCredentialCache(b, d)
	warmBufferPool(b, d)
	in := core.TaxInvoiceGenerate{OrganizationID: org.ID, Request: benchInvoiceRequest(), RequestJSON: []byte(benchInvoiceJSON)}
	var backend int
	if err := d.Pool.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		b.Fatal(err)
	}
	// Each variant changes the table further: the bodies' compression, none, then fewer
	// secondary indexes (the archive's kind and submission_status filters).
	for _, v := range []struct{ name, sql string }{
		{"pglz", `ALTER TABLE tax_invoices ALTER COLUMN xml SET COMPRESSION pglz, ALTER COLUMN result SET COMPRESSION pglz,
			ALTER COLUMN request SET COMPRESSION pglz`},
		{"lz4", `ALTER TABLE tax_invoices ALTER COLUMN xml SET COMPRESSION lz4, ALTER COLUMN result SET COMPRESSION lz4,
			ALTER COLUMN request SET COMPRESSION lz4`},
		{"uncompressed", `ALTER TABLE tax_invoices ALTER COLUMN xml SET STORAGE EXTERNAL, ALTER COLUMN result SET STORAGE EXTERNAL,
			ALTER COLUMN request SET STORAGE EXTERNAL`},
		{"lz4-without-filter-indexes", `ALTER TABLE tax_invoices ALTER COLUMN xml SET STORAGE EXTENDED, ALTER COLUMN result SET STORAGE EXTENDED,
			ALTER COLUMN request SET STORAGE EXTENDED; DROP INDEX IF EXISTS tax_invoices_organization_id_invoice_type_id;
			DROP INDEX IF EXISTS tax_invoices_organization_id_submission_status_id`},
	} {
		b.Run(v.name, func(b *testing.B) {
			if _, err := d.Pool.Exec(ctx, v.sql); err != nil {
				b.Fatal(err)
			}
			before, goBefore, faultsBefore := cpuTicks(b, backend), processCPU(b), minorFaults(b, backend)
			sent, trips := statements.n.Load(), statements.trips.Load()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := services.TaxInvoices.GenerateTaxInvoice(tenant, in); err != nil {
					b.Fatal(err)
				}
			}
			// USER_HZ is 100 on Linux: a tick is 10 ms.
			b.ReportMetric(float64(cpuTicks(b, backend)-before)*10_000/float64(b.N), "pg-cpu-µs/op")
			b.ReportMetric(float64((processCPU(b)-goBefore).Microseconds())/float64(b.N), "go-cpu-µs/op")
			b.ReportMetric(float64(minorFaults(b, backend)-faultsBefore)/float64(b.N), "pg-faults/op")
			b.ReportMetric(float64(statements.n.Load()-sent)/float64(b.N), "statements/op")
			b.ReportMetric(float64(statements.trips.Load()-trips)/float64(b.N), "round-trips/op")
		})
	}
}

// warmBufferPool has the pool's backend write, then drop, a table larger than the cluster's
// buffer pool (shared_buffers), so that every page of the pool has been touched, by it among
// others, before anything is measured. A cluster just started has not: until its pool is full,
// each buffer a backend takes for the first time costs it page faults (zeroing the page, mapping
// it), about 3 per stored invoice and 150-250 µs of its CPU in BenchmarkTaxInvoiceStorage's
// first 10,000 invoices, none once the pool was full (docs/performance.md, issue 27's
// seventeenth session). A server pays that once after PostgreSQL starts, and each of its
// connections once per buffer over its life.
func warmBufferPool(b *testing.B, d *postgres.DB) {
	b.Helper()
	ctx := context.Background()
	if _, err := d.Pool.Exec(ctx, `CREATE TABLE bench_warm_up (filler text)`); err != nil {
		b.Fatal(err)
	}
	// About seven 1,000-byte rows a page; a quarter more pages than the pool holds.
	if _, err := d.Pool.Exec(ctx, `INSERT INTO bench_warm_up
		SELECT repeat('x', 1000) FROM generate_series(1, (SELECT setting::int * 7 * 5 / 4 FROM pg_settings WHERE name = 'shared_buffers'))`); err != nil {
		b.Fatal(err)
	}
	if _, err := d.Pool.Exec(ctx, `DROP TABLE bench_warm_up`); err != nil {
		b.Fatal(err)
	}
}

// statementCounter counts the statements a pool's connections send (n: pgx's query tracer sees
// every one sent alone, begin and commit included, its batch tracer every one in a batch) and
// the round trips they take (trips: one per statement sent alone, one per batch).
type statementCounter struct{ n, trips atomic.Int64 }

func (c *statementCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	c.trips.Add(1)
	return ctx
}

func (*statementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *statementCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.trips.Add(1)
	return ctx
}

func (c *statementCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {
	c.n.Add(1)
}

func (*statementCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// cpuTicks is the user and system CPU time of process pid in clock ticks.
func cpuTicks(b *testing.B, pid int) int64 {
	fields := procStat(b, pid)
	utime, _ := strconv.ParseInt(fields[11], 10, 64) // the 14th field
	stime, _ := strconv.ParseInt(fields[12], 10, 64) // the 15th
	return utime + stime
}

// minorFaults is the count of minor page faults of process pid.
func minorFaults(b *testing.B, pid int) int64 {
	n, _ := strconv.ParseInt(procStat(b, pid)[7], 10, 64) // the 10th field
	return n
}

// procStat is /proc/<pid>/stat's fields after the command's closing parenthesis (the 3rd
// field on).
func procStat(b *testing.B, pid int) []string {
	b.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Skipf("the backend's /proc/%d/stat: %v (the database must run on this machine)", pid, err)
	}
	return strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
}

// benchInvoiceJSON is the load benchmark's simplified invoice (benchdriver's invoiceBody),
// and benchInvoiceRequest the same as the handler converts it.
const benchInvoiceJSON = `{"tax_calculation_mode":"service_calculated","requested_invoice_type":"simplified_tax_invoice",` +
	`"seller":{"legal_name":"Nakhla","vat_number":"310123456700003","commercial_registration":"1010123456",` +
	`"address":{"street_name":"King Fahd Road","building_number":"2929","district":"Al Olaya","city":"Riyadh","postal_code":"12214","country_code":"SA"}},` +
	`"line_items":[{"line_id":"1","name_en":"Coffee","quantity":2,"unit_code":"PCE","unit_price":4500,"tax_category":"S","tax_rate":15},` +
	`{"line_id":"2","name_en":"Croissant","quantity":3,"unit_code":"PCE","unit_price":1250,"tax_category":"S","tax_rate":15}]}`

func benchInvoiceRequest() einvoice.Request {
	str := func(s string) *string { return &s }
	return einvoice.Request{
		TaxCalculationMode: einvoice.ModeServiceCalculated, RequestedType: einvoice.TypeSimplified,
		Seller: einvoice.Seller{LegalName: "Nakhla", VATNumber: "310123456700003", CommercialRegistration: str("1010123456"),
			Address: &einvoice.Address{StreetName: str("King Fahd Road"), BuildingNumber: str("2929"), District: str("Al Olaya"),
				City: str("Riyadh"), PostalCode: str("12214"), CountryCode: "SA"}},
		Lines: []einvoice.Line{
			{ID: "1", NameEn: "Coffee", Quantity: 2, UnitCode: "PCE", UnitPrice: 4500, TaxCategory: "S", TaxRate: 15},
			{ID: "2", NameEn: "Croissant", Quantity: 3, UnitCode: "PCE", UnitPrice: 1250, TaxCategory: "S", TaxRate: 15},
		},
	}
}

// BenchmarkTaxInvoiceStatements is BenchmarkTaxInvoiceStorage's lz4 case with PostgreSQL's
// log_statement_stats on its one connection: each statement's own CPU time (user and system,
// from getrusage around its BIND and EXECUTE messages, or its QUERY for begin and commit) is
// reported per invoice as <statement>-<step>-µs/op, and their sum as statements-µs/op. What
// the backend spends between messages (reading them, sending results, waiting) is outside
// these; pg-cpu-µs/op of the storage benchmark includes it. The standing is cached as in the
// API (see BenchmarkTaxInvoiceStorage). Run it with
// `go test -run x -bench TaxInvoiceStatements -benchtime 2000x ./internal/postgres/`.
func BenchmarkTaxInvoiceStatements(b *testing.B) {
	ctx := context.Background()
	d, services, org, tenant := servicesOfNewOrganization(b, pgtest.NewDatabase(b)+" pool_max_conns=1")
	listeningCredentialCache(b, d)
	warmBufferPool(b, d)
	in := core.TaxInvoiceGenerate{OrganizationID: org.ID, Request: benchInvoiceRequest(), RequestJSON: []byte(benchInvoiceJSON)}
	// pgcluster writes the server's log beside its data directory.
	var data string
	if err := d.Pool.QueryRow(ctx, "SHOW data_directory").Scan(&data); err != nil {
		b.Fatal(err)
	}
	logPath := filepath.Join(filepath.Dir(data), "postgres.log")
	if _, err := os.Stat(logPath); err != nil {
		b.Skipf("the server's log: %v (the benchmark's own cluster writes it)", err)
	}
	// The chain's first invoice starts it: statements of a started chain only.
	if _, err := services.TaxInvoices.GenerateTaxInvoice(tenant, in); err != nil {
		b.Fatal(err)
	}
	for _, set := range []string{"SET log_statement_stats = on", "SET log_min_error_statement = log"} {
		if _, err := d.Pool.Exec(ctx, set); err != nil {
			b.Fatal(err)
		}
	}
	log, err := os.Open(logPath)
	if err != nil {
		b.Fatal(err)
	}
	defer log.Close()
	if _, err := log.Seek(0, io.SeekEnd); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := services.TaxInvoices.GenerateTaxInvoice(tenant, in); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := d.Pool.Exec(ctx, "RESET log_statement_stats"); err != nil {
		b.Fatal(err)
	}
	perStatement, err := statementStats(log)
	if err != nil {
		b.Fatal(err)
	}
	var sum float64
	for name, cpu := range perStatement {
		b.ReportMetric(cpu/float64(b.N), name+"-µs/op")
		sum += cpu
	}
	b.ReportMetric(sum/float64(b.N), "statements-µs/op")
}

// statementStats sums the CPU time of each statement in the log_statement_stats entries of
// log, in µs, by the statement's sqlc name (or its text) and step (bind, execute, query).
func statementStats(log io.Reader) (map[string]float64, error) {
	usage := regexp.MustCompile(`!\s+([0-9.]+) s user, ([0-9.]+) s system`)
	sums := map[string]float64{}
	var step string
	var cpu float64
	lines := bufio.NewScanner(log)
	lines.Buffer(make([]byte, 64<<10), 16<<20)
	for lines.Scan() {
		line := lines.Text()
		if _, title, ok := strings.Cut(line, "LOG:  "); ok && strings.HasSuffix(title, " STATISTICS") {
			step = strings.ToLower(strings.Fields(title)[0]) // BIND, EXECUTE, QUERY
			continue
		}
		if m := usage.FindStringSubmatch(line); m != nil {
			user, _ := strconv.ParseFloat(m[1], 64)
			system, _ := strconv.ParseFloat(m[2], 64)
			cpu = (user + system) * 1e6
			continue
		}
		if _, statement, ok := strings.Cut(line, "STATEMENT:  "); ok && step != "" {
			name := strings.TrimSpace(statement)
			if sqlcName, ok := strings.CutPrefix(name, "-- name: "); ok {
				name = strings.Fields(sqlcName)[0]
			}
			if name != "RESET log_statement_stats" {
				sums[name+"-"+step] += cpu
			}
			step = ""
		}
	}
	return sums, lines.Err()
}
