package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/pgtest"
)

// TestGenerateTaxInvoice_ThreeRoundTrips: a tax invoice of a chain already started takes
// three round trips for its eleven statements (BEGIN with the reads and the chain's lock; the
// invoice with its audit entry, event and usage; COMMIT), and what the audit entry and the event show
// of the invoice's created_at, written before the row's RETURNING comes back, is the row's.
func TestGenerateTaxInvoice_ThreeRoundTrips(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	statements := new(statementCounter)
	d, services, org, tenant := servicesOfNewOrganization(t, pgtest.NewDatabase(t),
		func(c *pgxpool.Config) { c.ConnConfig.Tracer = statements })
	in := core.TaxInvoiceGenerate{OrganizationID: org.ID, Request: benchInvoiceRequest(), RequestJSON: []byte(benchInvoiceJSON)}
	// The first invoice also creates the stamping key, starts the chain and reaches the
	// month's first operation: statements that depend on what the batches read.
	if _, err := services.TaxInvoices.GenerateTaxInvoice(tenant, in); err != nil {
		t.Fatal(err)
	}
	sent, trips := statements.n.Load(), statements.trips.Load()
	out, err := services.TaxInvoices.GenerateTaxInvoice(tenant, in)
	if err != nil {
		t.Fatal(err)
	}
	if n, rt := statements.n.Load()-sent, statements.trips.Load()-trips; n != 11 || rt != 3 {
		t.Errorf("the second invoice: %d statements in %d round trips, want 11 in 3", n, rt)
	}
	var stored, audited, published time.Time
	if err := d.Pool.QueryRow(ctx, `SELECT i.created_at, (a.after->>'created_at')::timestamptz, (e.data->>'created_at')::timestamptz
		FROM tax_invoices i
		JOIN audit_events a ON a.organization_id = i.organization_id AND a.resource_id = i.id::text AND a.action = 'tax_invoice.generated'
		JOIN webhook_events e ON e.organization_id = i.organization_id AND e.type = 'tax_invoice.generated' AND e.data->>'id' = i.id::text
		WHERE i.organization_id = $1 AND i.id = $2`, org.ID, out.ID).Scan(&stored, &audited, &published); err != nil {
		t.Fatal(err)
	}
	if !audited.Equal(stored) || !published.Equal(stored) || !out.CreatedAt.Equal(stored) {
		t.Errorf("created_at: row %s, audit entry %s, event %s, returned %s; want one time", stored, audited, published, out.CreatedAt)
	}
}
