package postgres_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/pgtest"
	"github.com/provider/coreapi/internal/postgres"
)

func TestRequestLogWriter(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T) (*postgres.DB, *postgres.RequestLogWriter) {
		t.Helper()
		db, err := postgres.Open(context.Background(), pgtest.NewDatabase(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		return db, postgres.NewRequestLogWriter(db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}
	count := func(t *testing.T, db *postgres.DB) int {
		t.Helper()
		var n int
		if err := db.Pool.QueryRow(context.Background(), "SELECT count(*) FROM request_logs").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	principal := &core.Principal{Kind: core.PrincipalOrganization, OrganizationID: uuid.New(), KeyPrefix: "sk_sandbox_x"}
	record := func(w *postgres.RequestLogWriter, n int) {
		for range n {
			w.Record(core.NewRequestLog(principal, "req_1", "GET", "/v1/usage", "/v1/usage", 200, time.Now(), time.Millisecond, ""))
		}
	}

	t.Run("CloseWritesEverythingQueued", func(t *testing.T) {
		t.Parallel()
		db, w := setup(t)
		record(w, 2_500) // more than one batch
		if err := w.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n := count(t, db); n != 2_500 {
			t.Errorf("%d logs stored after Close, want 2500", n)
		}
		record(w, 1) // after Close: dropped quietly, never a panic
	})

	t.Run("FlushWaitsForEarlierRecords", func(t *testing.T) {
		t.Parallel()
		db, w := setup(t)
		t.Cleanup(func() { _ = w.Close(context.Background()) })
		for i := 1; i <= 3; i++ {
			record(w, 10)
			if err := w.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			if n := count(t, db); n != 10*i {
				t.Errorf("after flush %d: %d logs, want %d", i, n, 10*i)
			}
		}
	})
}
