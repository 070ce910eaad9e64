//go:build reliability

// Package reliability_test runs the real server binary (built from cmd/coreapi) as
// subprocesses against PostgreSQL clusters of its own, and breaks things on purpose: it stops
// the database under load, SIGKILLs and SIGTERMs servers, runs three processes on one
// database (directly and through PgBouncer), restores a backup taken under write load, drips
// requests and scans the database and the logs for secrets. Each test starts
// its own cluster, so stopping one hurts no other test. `make test-reliability` runs them;
// docs/reliability.md says what each proves.
package reliability_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/provider/coreapi/internal/apitest"
	"github.com/provider/coreapi/internal/pgbouncer"
	"github.com/provider/coreapi/internal/pgcluster"
)

// binary is the server built once for all tests of the package.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "coreapi-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "coreapi")
	args := []string{"build", "-o", binary}
	if os.Getenv("RELIABILITY_RACE") != "false" {
		args = append(args, "-race") // data races under load fail the server's own tests too
	}
	build := exec.Command("go", append(args, "github.com/provider/coreapi/cmd/coreapi")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the server:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// cluster is a PostgreSQL cluster of one test.
type cluster struct {
	*pgcluster.Cluster
	dir string
}

// newCluster starts a dedicated throwaway cluster, destroyed when t ends. Its folder is
// directly under the temporary folder: when the tests run as root the cluster runs as the
// postgres user, which must reach it.
func newCluster(t testing.TB) *cluster {
	t.Helper()
	dir, err := os.MkdirTemp("", "coreapi-rel-pg-")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := pgcluster.Start(ctx, dir, pgcluster.Options{Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.Destroy(ctx); err != nil {
			t.Logf("destroying the cluster: %v", err)
		}
	})
	return &cluster{Cluster: c, dir: dir}
}

// restart starts the stopped cluster again, in the same folder.
func (c *cluster) restart(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	again, err := pgcluster.Start(ctx, c.dir, pgcluster.Options{Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	c.Cluster = again
}

func (c *cluster) dsn() string { return c.DSN("postgres") }

// pool connects the test itself to the cluster, for checks in the database.
func (c *cluster) pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.New(context.Background(), c.dsn())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func count(t testing.TB, p *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := p.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// server is one server process.
type server struct {
	t    testing.TB
	addr string
	cmd  *exec.Cmd
	out  *apitest.SyncBuffer
	done chan struct{}
	err  error // the exit status, once done is closed
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startServer runs the binary on addr (a free one when empty) against dsn and waits until
// it is ready. env adds variables (e.g. LOG_LEVEL).
func startServer(t testing.TB, dsn, addr string, env ...string) *server {
	t.Helper()
	if addr == "" {
		addr = freeAddr(t)
	}
	s := &server{t: t, addr: addr, out: &apitest.SyncBuffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(binary)
	s.cmd.Env = append(os.Environ(), "DATABASE_URL="+dsn, "LISTEN_ADDR="+addr, "APP_ENV=development", "LOG_LEVEL=warn")
	s.cmd.Env = append(s.cmd.Env, env...)
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.err = s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() {
		select {
		case <-s.done:
		default:
			_ = s.cmd.Process.Kill()
			<-s.done
		}
		if t.Failed() {
			t.Logf("server %s output (last 4 KiB):\n%s", s.addr, tail(s.out.String(), 4096))
		}
	})
	// A start migrates (when first) and loads the document: a minute or more on a loaded machine.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := http.Get(s.url("/readyz"))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case <-s.done:
			t.Fatalf("server exited during start: %v\n%s", s.err, s.out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not ready after 60 s: %v\n%s", err, s.out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *server) url(path string) string { return "http://" + s.addr + path }

// signal sends sig and, for SIGKILL, waits for the process to be gone.
func (s *server) signal(sig syscall.Signal) {
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Fatalf("signal %v: %v", sig, err)
	}
	if sig == syscall.SIGKILL {
		<-s.done
	}
}

// wait waits for the process to exit and returns its exit error (nil: exit status 0).
func (s *server) wait(timeout time.Duration) (error, bool) {
	select {
	case <-s.done:
		return s.err, true
	case <-time.After(timeout):
		return nil, false
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// result is one HTTP exchange as a load client saw it.
type result struct {
	status  int
	body    []byte
	header  http.Header
	err     error
	latency time.Duration
}

func (r result) json() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(r.body, &m)
	return m
}

// code is the problem code of an error response.
func (r result) code() string {
	c, _ := r.json()["code"].(string)
	return c
}

// refused reports whether the request never reached a server (nothing listened).
func (r result) refused() bool { return errors.Is(r.err, syscall.ECONNREFUSED) }

// call sends one request. A nil client is a fresh one without keep-alive.
func call(client *http.Client, method, url, token, body string, header http.Header) result {
	if client == nil {
		client = &http.Client{Timeout: 90 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return result{err: err}
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return result{err: err, latency: time.Since(start)}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return result{status: resp.StatusCode, body: b, header: resp.Header, err: err, latency: time.Since(start)}
}

const operator = "dev:operator"

func orgToken(id string) string { return "dev:org:" + id }

// orgBody is a valid organization create whose legal_name_en names it.
func orgBody(name string) string {
	b, _ := json.Marshal(map[string]any{"legal_name_ar": "شركة " + name, "legal_name_en": name, "display_name": name,
		"organization_type": "standard_customer", "country": "SA"})
	return string(b)
}

// createOrg creates an organization of type kind and returns its id.
func createOrg(t testing.TB, s *server, name, kind string) string {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"legal_name_ar": "شركة " + name, "legal_name_en": name, "display_name": name,
		"organization_type": kind, "country": "SA"})
	r := call(nil, http.MethodPost, s.url("/v1/organizations"), operator, string(b), nil)
	if r.status != http.StatusCreated {
		t.Fatalf("create organization: %d %v %s", r.status, r.err, r.body)
	}
	return r.json()["id"].(string)
}

// Seeded catalogue: the e-invoice product and a sandbox plan of it (db/migrations/00031).
const (
	einvoiceProduct = "0193a000-0000-7000-8000-000000000001"
	einvoicePlan    = "0193a000-0000-7000-8000-000000000103"
)

func subscriptionBody(org string) string {
	return `{"organization_id":"` + org + `","product_id":"` + einvoiceProduct + `","plan_id":"` + einvoicePlan +
		`","requested_configuration":{"branches":2}}`
}

// percentile returns the p-th percentile (0..100) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s)-1) * p / 100)
	return s[i]
}

// forEachRoute runs test once for each way operators connect the service to PostgreSQL, as
// parallel subtests, each on a cluster of its own: "direct", and "pgbouncer" — DATABASE_URL
// through a real PgBouncer in transaction mode, DATABASE_DIRECT_URL to PostgreSQL itself (the
// settings of docs/operations.md, "Behind PgBouncer"). env holds the servers' database
// settings beyond DATABASE_URL=c.dsn(), to pass on to startServer (the later value of a
// variable wins). Through PgBouncer, the pooler's own statistics must show that it carried the
// servers' transactions.
func forEachRoute(t *testing.T, test func(t *testing.T, c *cluster, env []string)) {
	t.Run("direct", func(t *testing.T) {
		t.Parallel()
		test(t, newCluster(t), nil)
	})
	t.Run("pgbouncer", func(t *testing.T) {
		t.Parallel()
		c := newCluster(t)
		pooler := pgbouncer.Start(t, c.dsn())
		// After the test's own parallel subtests, before the pooler stops.
		t.Cleanup(func() {
			n := pooler.Transactions(t)
			if n == 0 {
				t.Error("PgBouncer carried no transaction: the servers went around it")
			}
			t.Logf("pgbouncer figures: %d transactions carried in transaction pooling mode", n)
		})
		test(t, c, pooler.Env())
	})
}
