package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/internal/pgbouncer"
	"github.com/provider/coreapi/internal/pgtest"
)

// TestServesThroughPgBouncer runs the server with DATABASE_URL through a real PgBouncer in
// transaction pooling mode (default_query_exec_mode=cache_describe) and DATABASE_DIRECT_URL
// to PostgreSQL itself: concurrent idempotent creates, a replay, reads, request logs written
// by COPY and the job queue's periodic work all succeed, and the pooler carried the requests'
// transactions. Skipped when pgbouncer is not installed.
func TestServesThroughPgBouncer(t *testing.T) {
	t.Parallel()
	direct := pgtest.NewDatabase(t)
	pooler := pgbouncer.Start(t, direct)
	base := startServer(t, map[string]string{"DATABASE_URL": pooler.URL, "DATABASE_DIRECT_URL": pooler.Direct, "LOG_LEVEL": "error"})

	const creates = 24
	var wg sync.WaitGroup
	bodies := make([]string, creates)
	for i := range creates {
		wg.Go(func() {
			status, body := createOrganization(t, base, fmt.Sprintf("pooled-%d", i))
			if status != http.StatusCreated {
				t.Errorf("create %d: %d %s", i, status, body)
			}
			bodies[i] = body
		})
	}
	wg.Wait()
	if status, body := createOrganization(t, base, "pooled-0"); status != http.StatusCreated || body != bodies[0] {
		t.Errorf("replay of pooled-0: %d %s, want the first answer %s", status, body, bodies[0])
	}
	var org struct{ ID string }
	if err := json.Unmarshal([]byte(bodies[0]), &org); err != nil {
		t.Fatal(err)
	}
	if status := statusOf(t, base, "dev:org:"+org.ID); status != http.StatusOK {
		t.Errorf("an organization's read through the pooler: %d", status)
	}

	conn := connect(t, direct)
	count := func(sql string) int { return countRows(t, conn, sql) }
	if n := count("SELECT count(*) FROM organizations WHERE legal_name_en = 'Pooled Co'"); n != creates {
		t.Errorf("%d organizations stored, want %d (one per key, the replay none)", n, creates)
	}
	// The job queue works over the direct connection: its periodic maintenance completes.
	waitUntil(t, "the partition maintenance job completed", func() bool {
		return count("SELECT count(*) FROM river_job WHERE kind = 'maintain_partitions' AND state = 'completed'") > 0
	})
	waitUntil(t, "the requests' logs written", func() bool {
		return count("SELECT count(*) FROM request_logs WHERE route = '/v1/organizations' AND method = 'POST'") == creates+1
	})
	// PgBouncer's statistics (every second) count the transactions it carried.
	waitUntil(t, "PgBouncer's statistics to count the creates' transactions", func() bool {
		return pooler.Transactions(t) >= creates
	})
}

// waitUntil polls ok until it holds, for at most a minute.
func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !ok(); {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// createOrganization posts an organization as the operator under idempotency key key.
func createOrganization(t *testing.T, base, key string) (int, string) {
	t.Helper()
	body := `{"legal_name_ar":"شركة","legal_name_en":"Pooled Co","display_name":"Pooled","organization_type":"vendor","country":"SA"}`
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/organizations", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer dev:operator")
	req.Header.Set("Idempotency-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}
func countRows(t *testing.T, conn *pgx.Conn, sql string, args ...any) (n int) {
	t.Helper()
	if err := conn.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}
