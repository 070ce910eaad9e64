package pgcluster_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/internal/pgcluster"
)

// TestStartReusesRunningCluster starts a cluster, then starts it again in the same folder:
// the second start must find it running and connect to the same data.
func TestStartReusesRunningCluster(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Not t.TempDir: its parent is private to root, and the cluster may run as postgres.
	dir, err := os.MkdirTemp("", "pgcluster-test-")
	if err != nil {
		t.Fatal(err)
	}
	first, err := pgcluster.Start(ctx, dir, pgcluster.Options{Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = first.Destroy(context.Background()) }) // also removes dir
	if first.Reused() {
		t.Fatal("a new cluster reported Reused")
	}
	exec(t, first.DSN("postgres"), "CREATE TABLE marker (v int); INSERT INTO marker VALUES (42)")

	second, err := pgcluster.Start(ctx, dir, pgcluster.Options{Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	if !second.Reused() {
		t.Error("the second start did not reuse the running cluster")
	}
	conn, err := pgx.Connect(ctx, second.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v int
	if err := conn.QueryRow(ctx, "SELECT v FROM marker").Scan(&v); err != nil || v != 42 {
		t.Fatalf("marker = %d, %v", v, err)
	}

	// Stopped, then started again: the data is kept.
	if err := second.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	third, err := pgcluster.Start(ctx, dir, pgcluster.Options{Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	if third.Reused() {
		t.Error("a stopped cluster reported Reused")
	}
	exec(t, third.DSN("postgres"), "SELECT 1/(count(*)::int) FROM marker")
}

func exec(t *testing.T, dsn, sql string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		t.Fatal(err)
	}
}
