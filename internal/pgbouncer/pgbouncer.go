// Package pgbouncer runs a real PgBouncer in transaction pooling mode in front of a test
// database, as operators deploy it, so tests can run the service through it.
package pgbouncer

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/provider/coreapi/internal/pgcluster"
)

// Pooler is a PgBouncer in front of one database, and the service's two connection strings
// behind it as docs/operations.md ("Behind PgBouncer") documents them.
type Pooler struct {
	// URL is DATABASE_URL: through PgBouncer, with default_query_exec_mode=cache_describe (pgx
	// then prepares only unnamed statements, which a pooler in transaction mode allows).
	URL string
	// Direct is DATABASE_DIRECT_URL: PostgreSQL itself, for migrations, River and LISTEN.
	Direct string
}

// Start runs PgBouncer (pool_mode = transaction) in front of the database of dsn until t ends.
// The test is skipped when pgbouncer is not installed (Debian: apt-get install pgbouncer).
func Start(t testing.TB, dsn string) *Pooler {
	t.Helper()
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		if bin, err = exec.LookPath("/usr/sbin/pgbouncer"); err != nil {
			t.Skip("pgbouncer is not installed (apt-get install pgbouncer): the test of the service behind it is skipped")
		}
	}
	server, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	user, err := pgcluster.ServerUser() // PgBouncer refuses to run as root, as PostgreSQL does
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "pgbouncer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	port := freePort(t)
	ini := fmt.Sprintf(`[databases]
%s = host=%s port=%d user=%s%s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
admin_users = %s
pool_mode = transaction
max_client_conn = 500
default_pool_size = 20
ignore_startup_parameters = extra_float_digits
stats_period = 1
logfile = %s
pidfile = %s
`, server.Database, server.Host, server.Port, server.User, password(server.Password),
		port, filepath.Join(dir, "users.txt"), server.User, filepath.Join(dir, "pgbouncer.log"), filepath.Join(dir, "pgbouncer.pid"))
	for name, content := range map[string]string{
		"pgbouncer.ini": ini,
		"users.txt":     fmt.Sprintf("%q \"\"\n", server.User),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if user != nil {
		if err := os.Chown(dir, int(user.Uid), int(user.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, filepath.Join(dir, "pgbouncer.ini"))
	cmd.Dir = dir
	if user != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: user}
	}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{}) // closed when pgbouncer has exited
	var exitErr error
	go func() { exitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	pooled := fmt.Sprintf("host=127.0.0.1 port=%d user=%s dbname=%s sslmode=disable default_query_exec_mode=cache_describe",
		port, server.User, server.Database)
	waitUntilServing(t, pooled, exited, func() string {
		log, _ := os.ReadFile(filepath.Join(dir, "pgbouncer.log"))
		return fmt.Sprintf("%v: %s %s", exitErr, out.String(), log)
	})
	return &Pooler{URL: pooled, Direct: dsn}
}

// Env is the service's database settings behind the pooler, as KEY=value lines.
func (p *Pooler) Env() []string {
	return []string{"DATABASE_URL=" + p.URL, "DATABASE_DIRECT_URL=" + p.Direct}
}

// Transactions is the number of transactions PgBouncer carried to its database, from its
// statistics (refreshed every second, stats_period): proof that the service's work went
// through the pooler.
func (p *Pooler) Transactions(t testing.TB) int64 {
	t.Helper()
	server, err := pgx.ParseConfig(p.Direct)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range p.admin(t, "SHOW STATS") {
		if row["database"] == server.Database {
			n, _ := row["total_xact_count"].(pgtype.Numeric).Int64Value()
			return n.Int64
		}
	}
	return 0
}

// admin runs a SHOW command of PgBouncer's admin console (simple protocol only) and returns
// its rows as maps. It works in a cleanup too, after t's context is cancelled.
func (p *Pooler) admin(t testing.TB, command string) []map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg, err := pgx.ParseConfig(p.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database = "pgbouncer"
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, command)
	if err != nil {
		t.Fatal(err)
	}
	maps, err := pgx.CollectRows(rows, pgx.RowToMap)
	if err != nil {
		t.Fatal(err)
	}
	return maps
}

func waitUntilServing(t testing.TB, pooled string, exited <-chan struct{}, why func() string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := pgx.Connect(t.Context(), pooled)
		if err == nil {
			_ = conn.Close(context.Background())
			return
		}
		select {
		case <-exited:
			t.Fatalf("pgbouncer exited: %s", why())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("pgbouncer not serving after 30s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// password is the password setting of a [databases] line: none when empty (PgBouncer refuses
// an empty quoted value).
func password(p string) string {
	if p == "" {
		return ""
	}
	return fmt.Sprintf(" password='%s'", strings.ReplaceAll(p, "'", "''"))
}
