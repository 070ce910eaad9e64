package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/internal/pgcluster"
	"github.com/provider/coreapi/internal/pgtest"
)

// TestRestoreDrill is the runbook of docs/operations.md, "Backup and restore": a database the
// service wrote to is backed up with pg_dump -Fc while the service runs, restored with
// pg_restore into a fresh database, and a second server started on the copy serves the data.
// An Idempotency-Key used before the backup replays its first answer on the copy without
// creating anything, a new key creates, the request logs' partitions came back with their
// rows, and the job queue of the copy runs its work to completion.
func TestRestoreDrill(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	base := startServer(t, map[string]string{"DATABASE_URL": dsn, "LOG_LEVEL": "error"})
	const orgs = 5
	answers := make([]string, orgs)
	for i := range orgs {
		status, body := createOrganization(t, base, fmt.Sprintf("drill-%d", i))
		if status != http.StatusCreated {
			t.Fatalf("create %d: %d %s", i, status, body)
		}
		answers[i] = body
	}
	source := connect(t, dsn)
	waitUntil(t, "the creates' request logs written", func() bool {
		return countRows(t, source, "SELECT count(*) FROM request_logs WHERE method = 'POST'") == orgs
	})

	// Backup: pg_dump's custom format, one consistent snapshot taken while the server runs.
	dump := filepath.Join(t.TempDir(), "coreapi.dump")
	runTool(t, "pg_dump", "--format=custom", "--file="+dump, "--dbname="+dsn)

	// Restore into a fresh, empty database of the same cluster.
	restoredName := dbName(t, dsn) + "_restored"
	execSQL(t, source, "CREATE DATABASE "+restoredName+" TEMPLATE template0")
	t.Cleanup(func() { execSQL(t, connect(t, dsn), "DROP DATABASE IF EXISTS "+restoredName+" WITH (FORCE)") })
	restored := strings.Replace(dsn, "dbname="+dbName(t, dsn), "dbname="+restoredName, 1)
	runTool(t, "pg_restore", "--exit-on-error", "--no-owner", "--dbname="+restored, dump)

	// The jobs restored with the data end at this id; the copy's own come after it.
	copyDB := connect(t, restored)
	restoredJobs := countRows(t, copyDB, "SELECT coalesce(max(id), 0) FROM river_job")
	copyBase := startServer(t, map[string]string{"DATABASE_URL": restored, "LOG_LEVEL": "error"})
	if status, body := createOrganization(t, copyBase, "drill-0"); status != http.StatusCreated || body != answers[0] {
		t.Errorf("replay of a key used before the backup: %d %s, want the first answer %s", status, body, answers[0])
	}
	if status, body := createOrganization(t, copyBase, "drill-after"); status != http.StatusCreated || body == answers[0] {
		t.Errorf("a new key on the copy: %d %s", status, body)
	}
	if n := countRows(t, copyDB, "SELECT count(*) FROM organizations WHERE legal_name_en = 'Pooled Co'"); n != orgs+1 {
		t.Errorf("%d organizations on the copy, want the %d backed up and the new one", n, orgs)
	}
	if n := countRows(t, copyDB, "SELECT count(*) FROM request_logs WHERE method = 'POST'"); n < orgs {
		t.Errorf("%d request logs of creates on the copy, want at least the %d backed up", n, orgs)
	}
	if n := countRows(t, copyDB, "SELECT count(*) FROM pg_inherits WHERE inhparent = 'request_logs'::regclass"); n < 2 {
		t.Errorf("request_logs has %d partitions on the copy", n)
	}
	// The copy's queue works once it leads: the source's lease, restored with the data, must
	// expire first (River's 15 s), then its start-up jobs run behind the other maintenance.
	// Only a job the copy queued counts: one the source had running at the dump is restored
	// as running, and the source may complete its own meanwhile.
	waitUntilWithin(t, 3*time.Minute, "the copy's job queue completing its own partition maintenance", func() bool {
		return countRows(t, copyDB, "SELECT count(*) FROM river_job WHERE kind = 'maintain_partitions' AND state = 'completed' AND id > $1", restoredJobs) > 0
	})
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

func execSQL(t *testing.T, conn *pgx.Conn, sql string) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// runTool runs a PostgreSQL client program of the cluster's version.
func runTool(t *testing.T, name string, args ...string) {
	t.Helper()
	bin, err := pgcluster.Binary(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		if bin, err = exec.LookPath(name); err != nil {
			t.Fatalf("%s is not installed: %v", name, err)
		}
	}
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}
