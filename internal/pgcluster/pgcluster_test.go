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

// TestSharedClusterStopsWithItsLastUser is two servers over one folder (a second `make run`
// on another port): the first to stop leaves the cluster running for the other, and the
// last one stops it.
func TestSharedClusterStopsWithItsLastUser(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "pgcluster-test-")
	if err != nil {
		t.Fatal(err)
	}
	first, err := pgcluster.Start(ctx, dir, pgcluster.Options{Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = first.Destroy(context.Background()) }) // also removes dir
	second, err := pgcluster.Start(ctx, dir, pgcluster.Options{Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	if !second.Reused() {
		t.Fatal("the second start did not find the cluster running")
	}

	if stopped, err := first.Release(ctx); err != nil || stopped {
		t.Fatalf("the first to release: stopped %v, %v; want the cluster left to the second", stopped, err)
	}
	if _, err := first.Release(ctx); err == nil {
		t.Error("a second Release of one start succeeded")
	}
	exec(t, second.DSN("postgres"), "SELECT 1") // still serving the second

	// A third start while the second still uses it: the last of the two stops it.
	third, err := pgcluster.Start(ctx, dir, pgcluster.Options{Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	if stopped, err := second.Release(ctx); err != nil || stopped {
		t.Fatalf("second release: stopped %v, %v", stopped, err)
	}
	exec(t, third.DSN("postgres"), "SELECT 1")
	if stopped, err := third.Release(ctx); err != nil || !stopped {
		t.Fatalf("the last release: stopped %v, %v; want the cluster stopped", stopped, err)
	}
	conn, err := pgx.Connect(ctx, third.DSN("postgres"))
	if err == nil {
		conn.Close(ctx)
		t.Fatal("the cluster still answers after its last user released it")
	}
}
