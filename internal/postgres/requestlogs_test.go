package postgres_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
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

	t.Run("BodiesPastTheBudgetAreShedNotTheLog", func(t *testing.T) {
		t.Parallel()
		db, _ := setup(t)
		body := strings.Repeat("x", 1000)
		withBodies := func() core.RequestLog {
			l := core.NewRequestLog(principal, "req_1", "POST", "/v1/usage", "/v1/usage", 200, time.Now(), time.Millisecond, "")
			l.Request = &core.RequestLogBody{Size: int64(len(body)), Body: &body}
			l.Response = &core.RequestLogBody{Size: int64(len(body)), Body: &body}
			return l
		}
		storedBodies := func() int {
			var n int
			if err := db.Pool.QueryRow(context.Background(), "SELECT count(*) FROM request_log_bodies").Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		discard := slog.New(slog.NewTextHandler(io.Discard, nil))

		tight := postgres.NewRequestLogWriterWithBodyBudget(db, discard, 2*int64(len(body))-1)
		tight.Record(withBodies())
		if err := tight.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if logs, bodies := count(t, db), storedBodies(); logs != 1 || bodies != 0 {
			t.Fatalf("over the budget: %d logs and %d bodies stored, want the log without its bodies", logs, bodies)
		}

		// A budget of one entry's bodies takes entry after entry once each is written: the
		// budget is given back.
		exact := postgres.NewRequestLogWriterWithBodyBudget(db, discard, 2*int64(len(body)))
		t.Cleanup(func() { _ = exact.Close(context.Background()) })
		for range 3 {
			exact.Record(withBodies())
			if err := exact.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		if logs, bodies := count(t, db), storedBodies(); logs != 4 || bodies != 3 {
			t.Errorf("within the budget: %d logs and %d bodies stored, want 4 and 3", logs, bodies)
		}
	})
}
