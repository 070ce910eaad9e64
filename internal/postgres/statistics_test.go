package postgres_test

import (
	"context"
	"reflect"
	"testing"
)

// The invoice's bodies carry no planner statistics (migration 00104), and ANALYZE leaves
// them out, while the columns queries filter on keep theirs.
func TestInvoiceBodiesWithoutStatistics(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	var targets map[string]int
	if err := db.Pool.QueryRow(ctx, `SELECT jsonb_object_agg(attname, coalesce(attstattarget, -1))
		FROM pg_attribute WHERE attrelid = 'tax_invoices'::regclass
		AND attname IN ('request', 'result', 'xml', 'organization_id')`).Scan(&targets); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"request": 0, "result": 0, "xml": 0, "organization_id": -1}
	if !reflect.DeepEqual(targets, want) {
		t.Errorf("statistics targets %v, want %v", targets, want)
	}
}
