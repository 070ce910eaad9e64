package postgres_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/postgres"
)

// bufferedCopy stores what pgx's CopyFrom would: every column, NULLs included; it reuses
// its buffer from one batch to the next; and a batch the database refuses stores nothing
// and leaves the writer usable.
func TestBufferedCopy(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	copier := postgres.NewBufferedCopy(db.Pool)
	org := uuid.Must(uuid.NewV7())
	prefix, route, code := "sk_sandbox_abc", "/v1/organizations/{id}", "not_found"
	at := time.Date(2026, 11, 23, 6, 0, 0, 123456000, time.UTC)
	rows := []dbq.RequestLogInsertBatchParams{
		{ID: uuid.Must(uuid.NewV7()), OrganizationID: org, RequestID: "req_1", OccurredAt: at,
			PrincipalType: "organization", KeyPrefix: &prefix, Method: "GET", Path: "/v1/organizations/x",
			Route: &route, Status: 404, LatencyMs: 7, ErrorCode: &code},
		{ID: uuid.Must(uuid.NewV7()), OrganizationID: org, RequestID: "req_2 with ünïcode", OccurredAt: at.Add(time.Second),
			PrincipalType: "operator", Method: "POST", Path: "/v1/usage", Status: 201, LatencyMs: 0},
	}
	if n, err := dbq.New(copier).RequestLogInsertBatch(ctx, rows); err != nil || n != 2 {
		t.Fatalf("copied %d rows, %v; want 2", n, err)
	}
	stored, err := dbq.New(db.Pool).RequestLogList(ctx, dbq.RequestLogListParams{OrganizationID: org, RowLimit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 2 {
		t.Fatalf("%d rows stored, want 2", len(stored))
	}
	for i, want := range rows {
		got := stored[len(stored)-1-i] // newest first
		got.OccurredAt = got.OccurredAt.UTC()
		if !reflect.DeepEqual(dbq.RequestLogInsertBatchParams(got), want) {
			t.Errorf("stored %+v, want %+v", got, want)
		}
	}

	first := copier.Buffer()
	if first == nil {
		t.Fatal("no buffer kept after a batch")
	}
	rows[0].ID, rows[1].ID = uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
	if _, err := dbq.New(copier).RequestLogInsertBatch(ctx, rows); err != nil {
		t.Fatal(err)
	}
	if copier.Buffer() != first {
		t.Error("the second batch of the same size built a new buffer")
	}

	// One index per logged row (migration 00103): the key, which serves the lists too.
	var indexes []string
	if err := db.Pool.QueryRow(ctx, `SELECT array_agg(indexdef ORDER BY indexname) FROM pg_indexes
		WHERE tablename = 'request_logs'`).Scan(&indexes); err != nil {
		t.Fatal(err)
	}
	if want := []string{"CREATE UNIQUE INDEX request_logs_pkey ON public.request_logs USING btree (organization_id, id)"}; !reflect.DeepEqual(indexes, want) {
		t.Errorf("request_logs indexes %q, want %q", indexes, want)
	}

	refused := []dbq.RequestLogInsertBatchParams{rows[0], rows[1]}
	refused[0].ID, refused[1].ID, refused[1].Status = uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7()), 42 // CHECK (status BETWEEN 100 AND 599)
	if _, err := dbq.New(copier).RequestLogInsertBatch(ctx, refused); err == nil {
		t.Fatal("a row breaking a CHECK constraint was copied")
	}
	var n int
	if err := db.Pool.QueryRow(ctx, "SELECT count(*) FROM request_logs").Scan(&n); err != nil || n != 4 {
		t.Fatalf("%d rows after the refused batch (%v), want 4: a refused batch stores nothing", n, err)
	}
	refused[1].Status = 200
	if _, err := dbq.New(copier).RequestLogInsertBatch(ctx, refused); err != nil {
		t.Fatalf("after a refused batch: %v", err)
	}
}
