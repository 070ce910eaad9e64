package pgcluster_test

import (
	"context"
	"errors"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
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

// TestDestroyAbandoned kills a process that started a cluster (a test binary killed before
// its cleanup): its cluster is destroyed, while a cluster still in use is left alone.
func TestDestroyAbandoned(t *testing.T) {
	if dir := os.Getenv("PGCLUSTER_TEST_ABANDON"); dir != "" { // the process that dies
		if _, err := pgcluster.Start(context.Background(), dir, pgcluster.Options{Ephemeral: true}); err != nil {
			t.Fatal(err)
		}
		os.Exit(0) // no Release: the kernel drops its lock, the cluster runs on
	}
	t.Parallel()
	ctx := context.Background()
	parent, err := os.MkdirTemp("", "pgcluster-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	if err := os.Chmod(parent, 0o755); err != nil { // the clusters inside may run as postgres
		t.Fatal(err)
	}
	abandoned, inUse := filepath.Join(parent, "c-abandoned"), filepath.Join(parent, "c-in-use")

	cmd := osexec.Command(os.Args[0], "-test.run=^TestDestroyAbandoned$")
	cmd.Env = append(os.Environ(), "PGCLUSTER_TEST_ABANDON="+abandoned)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the abandoning process: %v: %s", err, out)
	}
	kept, err := pgcluster.Start(ctx, inUse, pgcluster.Options{Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kept.Destroy(context.Background()) })
	pid := postmasterPID(t, abandoned)

	n, err := pgcluster.DestroyAbandoned(ctx, filepath.Join(parent, "c-*"), 0)
	if err != nil || n != 1 {
		t.Fatalf("DestroyAbandoned = %d, %v; want 1 destroyed", n, err)
	}
	if _, err := os.Stat(abandoned); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the abandoned cluster's folder is still there: %v", err)
	}
	if running(pid) {
		t.Errorf("the abandoned cluster's postmaster (pid %d) still runs", pid)
	}
	exec(t, kept.DSN("postgres"), "SELECT 1") // the cluster in use still serves
}

// running reports whether process pid runs: it exists and is not a zombie (the postmaster's
// parent, pg_ctl's process, is gone, so whoever adopted it may not have reaped it yet).
func running(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(after, "Z")
}

func postmasterPID(t *testing.T, dir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	return pid
}
