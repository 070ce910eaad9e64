// Package pgcluster runs a private PostgreSQL cluster from the locally installed server
// binaries: the server's own database when no DATABASE_URL is given, and the throwaway
// cluster of the test suite. The cluster listens on a Unix socket inside its folder only, so
// it never collides with another PostgreSQL on the machine.
package pgcluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Options tune a cluster. The zero value is a durable cluster, suitable for development data.
type Options struct {
	// Ephemeral trades durability for speed (no fsync): for test clusters only.
	Ephemeral bool
	// Settings are server settings ("name=value") passed to postgres -c after the others, so
	// they win: e.g. log_autovacuum_min_duration=0 for a benchmark's investigation.
	Settings []string
}

// Cluster is a running PostgreSQL cluster owned by this process or found running in Dir.
type Cluster struct {
	Dir       string // folder holding data/, the socket and the log
	socketDir string
	port      int
	bin       string
	cred      *syscall.Credential // nil unless the cluster runs as another user (we are root)
	reused    bool
}

// ErrNoBinaries means no PostgreSQL server binaries were found on this machine.
var ErrNoBinaries = errors.New("pgcluster: no PostgreSQL server binaries found (initdb, pg_ctl); " +
	"install them with `apt-get install postgresql` or set PG_BIN to their folder, or set DATABASE_URL")

const port = 5432

// Start starts the cluster in dir, creating it on first use, or reuses the one already
// running there. When the process runs as root, the cluster runs as the unprivileged
// `postgres` system user, because PostgreSQL refuses to run as root.
func Start(ctx context.Context, dir string, opts Options) (*Cluster, error) {
	bin, err := findBinaries()
	if err != nil {
		return nil, err
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir, socketDir: dir, port: port, bin: bin}
	if os.Geteuid() == 0 {
		if c.cred, err = unprivilegedUser(); err != nil {
			return nil, err
		}
	}
	if len(filepath.Join(dir, ".s.PGSQL.5432")) > 100 { // Unix socket paths are limited to ~107 bytes
		if c.socketDir, err = os.MkdirTemp("", "pgsock-"); err != nil {
			return nil, err
		}
	}
	for _, d := range []string{dir, c.socketDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
		if err := c.own(d); err != nil {
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		args := []string{"-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C"}
		if opts.Ephemeral {
			args = append(args, "--no-sync")
		}
		if err := c.run(ctx, "initdb", args...); err != nil {
			return nil, err
		}
	}
	if c.running(ctx) {
		c.reused = true
		if err := c.readPidFile(); err != nil {
			return nil, err
		}
		return c, nil
	}
	conf := fmt.Sprintf("-c listen_addresses='' -k %s -p %d", c.socketDir, c.port)
	if opts.Ephemeral {
		conf += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300"
	}
	for _, setting := range opts.Settings {
		conf += " -c " + setting
	}
	if err := c.run(ctx, "pg_ctl", "start", "-w", "-t", "60", "-D", data,
		"-l", filepath.Join(dir, "postgres.log"), "-o", conf); err != nil {
		return nil, err
	}
	return c, nil
}

// DSN is the connection string of database name in this cluster.
func (c *Cluster) DSN(name string) string {
	return fmt.Sprintf("host=%s port=%d user=postgres dbname=%s sslmode=disable", c.socketDir, c.port, name)
}

// Reused reports whether Start found the cluster already running.
func (c *Cluster) Reused() bool { return c.reused }

// Stop shuts the cluster down. Fast mode lets the server finish its shutdown checkpoint.
func (c *Cluster) Stop(ctx context.Context) error {
	return c.run(ctx, "pg_ctl", "stop", "-w", "-m", "fast", "-D", filepath.Join(c.Dir, "data"))
}

// Destroy stops the cluster at once and removes its folder: for throwaway clusters.
func (c *Cluster) Destroy(ctx context.Context) error {
	err := c.run(ctx, "pg_ctl", "stop", "-w", "-m", "immediate", "-D", filepath.Join(c.Dir, "data"))
	if c.socketDir != c.Dir {
		os.RemoveAll(c.socketDir)
	}
	return errors.Join(err, os.RemoveAll(c.Dir))
}

func (c *Cluster) running(ctx context.Context) bool {
	return c.run(ctx, "pg_ctl", "status", "-D", filepath.Join(c.Dir, "data")) == nil
}

// readPidFile learns the port and socket folder of a cluster started earlier.
func (c *Cluster) readPidFile() error {
	f, err := os.Open(filepath.Join(c.Dir, "data", "postmaster.pid"))
	if err != nil {
		return err
	}
	defer f.Close()
	var lines []string
	for s := bufio.NewScanner(f); s.Scan(); {
		lines = append(lines, s.Text())
	}
	if len(lines) < 5 {
		return fmt.Errorf("pgcluster: unexpected postmaster.pid in %s", c.Dir)
	}
	if c.port, err = strconv.Atoi(strings.TrimSpace(lines[3])); err != nil {
		return fmt.Errorf("pgcluster: bad port in postmaster.pid: %w", err)
	}
	if sock := strings.TrimSpace(lines[4]); sock != "" {
		c.socketDir = sock
	}
	return nil
}

func (c *Cluster) run(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, name), args...)
	cmd.Dir = "/"
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgcluster: %s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func (c *Cluster) own(path string) error {
	if c.cred == nil {
		return nil
	}
	return os.Chown(path, int(c.cred.Uid), int(c.cred.Gid))
}

func unprivilegedUser() (*syscall.Credential, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		out, addErr := exec.Command("useradd", "--system", "--user-group", "--no-create-home",
			"--shell", "/usr/sbin/nologin", "postgres").CombinedOutput()
		if addErr != nil {
			return nil, fmt.Errorf("pgcluster: running as root needs the unprivileged user postgres: %v: %s", addErr, out)
		}
		if u, err = user.Lookup("postgres"); err != nil {
			return nil, err
		}
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// findBinaries looks in PG_BIN, then the newest /usr/lib/postgresql/*/bin, then PATH.
func findBinaries() (string, error) {
	if dir := os.Getenv("PG_BIN"); dir != "" {
		return dir, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", ErrNoBinaries
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// WaitReady is a small helper for callers that connect right after Start on slow machines.
func WaitReady(ctx context.Context, ping func(context.Context) error) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := ping(ctx)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
