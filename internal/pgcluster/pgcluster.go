// Package pgcluster runs a private PostgreSQL cluster from the locally installed server
// binaries: the server's own database when no DATABASE_URL is given, and the throwaway
// cluster of the test suite. The cluster listens on a Unix socket inside its folder only, so
// it never collides with another PostgreSQL on the machine.
//
// Several processes may use one cluster: the first starts it, the others find it running,
// and it is stopped by the last of them to Release it (flock(2) on two files in its folder
// keeps the count, and the kernel drops a crashed process's share).
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
	// users is this Cluster's share of the cluster: a shared flock on usersLock, held from
	// Start to Release, Stop or Destroy.
	users *os.File
}

// The lock files of a cluster's folder. usersLock is held shared by every process using the
// cluster; startLock is held exclusively while a process starts the cluster or decides
// whether to stop it, so that a start never races a stop.
const (
	usersLock = "users.lock"
	startLock = "start.lock"
)

// ErrNoBinaries means no PostgreSQL server binaries were found on this machine.
var ErrNoBinaries = errors.New("pgcluster: no PostgreSQL server binaries found (initdb, pg_ctl); " +
	"install them with `apt-get install postgresql` or set PG_BIN to their folder, or set DATABASE_URL")

const port = 5432

// Start starts the cluster in dir, creating it on first use, or reuses the one already
// running there; either way the caller uses it until Release (which stops it if no other
// process uses it), Stop or Destroy. When the process runs as root, the cluster runs as the
// unprivileged `postgres` system user, because PostgreSQL refuses to run as root.
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
	if c.cred, err = ServerUser(); err != nil {
		return nil, err
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
	starting, err := lock(ctx, filepath.Join(dir, startLock), syscall.LOCK_EX)
	if err != nil {
		return nil, err
	}
	defer starting.Close() // unlocks
	if c.users, err = lock(ctx, filepath.Join(dir, usersLock), syscall.LOCK_SH); err != nil {
		return nil, err
	}
	if err := c.start(ctx, opts); err != nil {
		c.users.Close()
		return nil, err
	}
	return c, nil
}

// start creates the cluster on first use and starts it unless it runs already.
func (c *Cluster) start(ctx context.Context, opts Options) error {
	dir := c.Dir
	data := filepath.Join(dir, "data")
	if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		args := []string{"-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C"}
		if opts.Ephemeral {
			args = append(args, "--no-sync")
		}
		if err := c.run(ctx, "initdb", args...); err != nil {
			return err
		}
	}
	if c.running(ctx) {
		c.reused = true
		return c.readPidFile()
	}
	conf := fmt.Sprintf("-c listen_addresses='' -k %s -p %d", c.socketDir, c.port)
	if opts.Ephemeral {
		conf += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300"
	}
	for _, setting := range opts.Settings {
		conf += " -c " + setting
	}
	return c.run(ctx, "pg_ctl", "start", "-w", "-t", "60", "-D", data,
		"-l", filepath.Join(dir, "postgres.log"), "-o", conf)
}

// lock opens path and takes a flock of kind on it, waiting until it is granted or ctx ends.
func lock(ctx context.Context, path string, kind int) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), kind|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("pgcluster: locking %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// DSN is the connection string of database name in this cluster.
func (c *Cluster) DSN(name string) string {
	return fmt.Sprintf("host=%s port=%d user=postgres dbname=%s sslmode=disable", c.socketDir, c.port, name)
}

// Reused reports whether Start found the cluster already running.
func (c *Cluster) Reused() bool { return c.reused }

// Release gives up this process's use of the cluster and stops it when no other process
// uses it any more (started it, or found it running, and has not released it): a second
// server over the same folder keeps its database when the first one stops. stopped says
// whether this call stopped it.
func (c *Cluster) Release(ctx context.Context) (stopped bool, err error) {
	if c.users == nil {
		return false, errors.New("pgcluster: the cluster was already released")
	}
	starting, err := lock(ctx, filepath.Join(c.Dir, startLock), syscall.LOCK_EX)
	if err != nil {
		return false, err
	}
	defer starting.Close()
	// Alone if the shared lock becomes exclusive at once. No one can start using the
	// cluster meanwhile: Start waits for startLock.
	last := syscall.Flock(int(c.users.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
	c.users.Close()
	c.users = nil
	if !last {
		return false, nil
	}
	return true, c.Stop(ctx)
}

// Stop shuts the cluster down whoever else uses it. Fast mode lets the server finish its
// shutdown checkpoint.
func (c *Cluster) Stop(ctx context.Context) error {
	c.unlock()
	return c.run(ctx, "pg_ctl", "stop", "-w", "-m", "fast", "-D", filepath.Join(c.Dir, "data"))
}

// unlock gives up this Cluster's share, if it still holds one.
func (c *Cluster) unlock() {
	if c.users != nil {
		c.users.Close()
		c.users = nil
	}
}

// Destroy stops the cluster at once and removes its folder: for throwaway clusters.
func (c *Cluster) Destroy(ctx context.Context) error {
	c.unlock()
	err := c.run(ctx, "pg_ctl", "stop", "-w", "-m", "immediate", "-D", filepath.Join(c.Dir, "data"))
	if c.socketDir != c.Dir {
		os.RemoveAll(c.socketDir)
	}
	return errors.Join(err, os.RemoveAll(c.Dir))
}

// DestroyAbandoned destroys the throwaway clusters in the folders matching pattern that no
// process uses any more: a test binary killed before its cleanup leaves its cluster running
// and its folder behind. A folder younger than minAge is left alone, since its cluster may be
// starting (its locks are not taken yet). It returns how many it destroyed.
func DestroyAbandoned(ctx context.Context, pattern string, minAge time.Duration) (int, error) {
	bin, err := findBinaries()
	if err != nil {
		return 0, err
	}
	cred, err := ServerUser()
	if err != nil {
		return 0, err
	}
	dirs, err := filepath.Glob(pattern)
	if err != nil {
		return 0, err
	}
	destroyed := 0
	var errs []error
	for _, dir := range dirs {
		if info, err := os.Stat(dir); err != nil || !info.IsDir() || time.Since(info.ModTime()) < minAge {
			continue
		}
		ok, err := destroyIfUnused(ctx, &Cluster{Dir: dir, socketDir: dir, port: port, bin: bin, cred: cred})
		if ok {
			destroyed++
		}
		errs = append(errs, err)
	}
	return destroyed, errors.Join(errs...)
}

// destroyIfUnused destroys c unless a process uses it or is starting it.
func destroyIfUnused(ctx context.Context, c *Cluster) (bool, error) {
	for _, name := range []string{startLock, usersLock} {
		f, err := os.OpenFile(filepath.Join(c.Dir, name), os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return false, err
		}
		defer f.Close() // unlocks
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			return false, nil // in use
		}
	}
	if !c.running(ctx) {
		return true, os.RemoveAll(c.Dir)
	}
	if err := c.readPidFile(); err != nil {
		return false, err
	}
	return true, c.Destroy(ctx)
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

// ServerUser is the user the cluster's server processes run as: nil when this process is not
// root (they run as this user), else the unprivileged `postgres` user. Other servers that
// refuse to run as root (PgBouncer) run as it too.
func ServerUser() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	return unprivilegedUser()
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

// Binary is the path of the PostgreSQL program name (pg_dump, pg_restore, …) of the
// binaries a cluster runs from: the client tools of the server's own version.
func Binary(name string) (string, error) {
	dir, err := findBinaries()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
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
