package postgres_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/pgtest"
)

// BenchmarkRequestLogBodies measures PostgreSQL's CPU for storing the logged bodies of an
// invoice's generation (its response, the XML in JSON, kept to core.RequestLogBodyLimit),
// compressed with the default pglz and with lz4 (migration 00540): one row a statement over
// a pool of one connection, the backend's CPU time from /proc.
func BenchmarkRequestLogBodies(b *testing.B) {
	ctx := context.Background()
	d, services, org, tenant := servicesOfNewOrganization(b, pgtest.NewDatabase(b)+" pool_max_conns=1")
	inv, err := services.TaxInvoices.GenerateTaxInvoice(tenant, core.TaxInvoiceGenerate{OrganizationID: org.ID,
		Request: benchInvoiceRequest(), RequestJSON: []byte(benchInvoiceJSON)})
	if err != nil {
		b.Fatal(err)
	}
	response, err := json.Marshal(map[string]any{"invoice": inv.Invoice, "xml": map[string]any{"content": inv.Invoice.XML}})
	if err != nil {
		b.Fatal(err)
	}
	logged := core.NewRequestLogBody("application/json", response, int64(len(response)))
	var backend int
	if err := d.Pool.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		b.Fatal(err)
	}
	for _, compression := range []string{"pglz", "lz4"} {
		b.Run(compression, func(b *testing.B) {
			if _, err := d.Pool.Exec(ctx, "ALTER TABLE request_log_bodies ALTER COLUMN response_body SET COMPRESSION "+compression); err != nil {
				b.Fatal(err)
			}
			before := cpuTicks(b, backend)
			for b.Loop() {
				if _, err := d.Pool.Exec(ctx, `INSERT INTO request_log_bodies (organization_id, id, request_size, request_truncated,
					response_content_type, response_size, response_body, response_truncated) VALUES ($1, $2, 0, false, $3, $4, $5, $6)`,
					org.ID, uuid.Must(uuid.NewV7()), logged.ContentType, logged.Size, logged.Body, logged.Truncated); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTicks(b, backend)-before)*10_000/float64(b.N), "pg-cpu-µs/op")
		})
	}
}
