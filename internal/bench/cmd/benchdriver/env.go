package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/provider/coreapi/internal/pgcluster"
)

// process is a server the driver started and measures.
type process struct {
	name   string
	cmd    *exec.Cmd
	base   string        // http://127.0.0.1:port
	pprof  string        // where it serves Go's profiler (127.0.0.1:port)
	exited chan struct{} // closed once the process has exited
}

type environment struct {
	dir     string
	cluster *pgcluster.Cluster
	api     *process
	floor   *process
	keep    bool
}

// column names the table column p's figures go in: "api", or "floor" for whatever stands
// in the floor's place (the floor, or the API again with -against-env or -against-server).
func (e *environment) column(p *process) string {
	if p == e.api {
		return "api"
	}
	return "floor"
}

// memoryFolder is where a run's cluster and logs go unless -durable: a memory file system
// with room for a long run. On disk, the kernel writes back the dirty pages of a run without
// fsync in bursts of hundreds of megabytes every half minute or so, and while it does, every
// write to the file system waits (ext4's journal): the write scenarios then stall for
// hundreds of milliseconds on whichever server is being measured (docs/performance.md).
const memoryFolder = "/dev/shm"

// runParent is the folder the run's temporary folder is made in: -dir; the system's temporary
// folder with -durable (the disk is then measured on purpose); otherwise memoryFolder when it
// is a memory file system with 8 GiB free, which the growth scenario's WAL and events fill
// by gigabytes.
func runParent(o options) string {
	if o.dir != "" || o.durable {
		return o.dir
	}
	const tmpfsMagic = 0x01021994
	var st syscall.Statfs_t
	if err := syscall.Statfs(memoryFolder, &st); err != nil || st.Type != tmpfsMagic || st.Bavail*uint64(st.Bsize) < 8<<30 {
		log.Printf("%s is not a memory file system with 8 GiB free: the cluster goes on disk, whose writeback stalls the write scenarios", memoryFolder)
		return ""
	}
	return memoryFolder
}

// startEnvironment starts a throwaway cluster in a temporary folder (never the developer's
// .pgdata), the API over it (which migrates it) and the floor over the same database.
func startEnvironment(ctx context.Context, o options) (*environment, error) {
	for _, bin := range []string{o.server, o.floor} {
		if _, err := os.Stat(bin); err != nil {
			return nil, fmt.Errorf("%s: %w (build it first: make bench does)", bin, err)
		}
	}
	env, err := startCluster(ctx, o)
	if err != nil {
		return nil, err
	}
	dsn := env.cluster.DSN("postgres")
	// BENCH_API_ENV adds variables to the API's environment only, e.g. 'GOGC=100'.
	if env.api, err = env.apiProcess("api", o.server, dsn, "coreapi.log", os.Getenv("BENCH_API_ENV")); err != nil {
		env.stop()
		return nil, err
	}
	floorAddr := freeLoopback()
	env.floor = &process{name: "floor", base: "http://" + floorAddr, pprof: freeLoopback()}
	env.floor.cmd = exec.Command(o.floor, "-listen", floorAddr, "-dsn", dsn, "-pprof", env.floor.pprof)
	env.floor.cmd.Env, env.floor.cmd.Stderr = serverEnviron(), os.Stderr
	if o.againstEnv != "" || o.againstServer != "" {
		// The API against itself: the floor's column is the API with other variables, or
		// another build of it.
		if env.floor, err = env.apiProcess("api ("+o.against()+")", valueOr(o.againstServer, o.server), dsn, "coreapi-against.log", o.againstEnv); err != nil {
			env.stop()
			return nil, err
		}
	}
	if err := env.startServers(ctx); err != nil {
		env.stop()
		return nil, err
	}
	return env, nil
}

// startCluster makes the run's folder and starts PostgreSQL in it.
func startCluster(ctx context.Context, o options) (*environment, error) {
	dir, err := runFolder(o)
	if err != nil {
		return nil, err
	}
	env := &environment{dir: dir, keep: o.keep || o.listsSeeded != ""}
	// As root the cluster runs as the postgres user, which must reach its folder inside.
	if err := os.Chmod(dir, 0o755); err != nil {
		env.stop()
		return nil, err
	}
	log.Printf("starting PostgreSQL in %s", dir)
	// Without -durable the cluster does not wait for the disk (fsync and synchronous_commit
	// off): on a shared machine fsync latency is other processes' noise, and the comparison
	// is between two servers over the same database either way.
	env.cluster, err = pgcluster.Start(ctx, filepath.Join(dir, "pg"), pgcluster.Options{Ephemeral: !o.durable, Settings: strings.Fields(o.pgSettings)})
	if err != nil {
		env.stop()
		return nil, err
	}
	return env, nil
}

// runFolder makes the run's folder: a new temporary one, or the lists benchmark's kept one.
func runFolder(o options) (string, error) {
	if o.listsSeeded == "" {
		return os.MkdirTemp(runParent(o), "coreapi-bench-")
	}
	return o.listsSeeded, os.MkdirAll(o.listsSeeded, 0o755)
}

// apiProcess prepares (without starting it) an API process of binary over dsn, listening on
// a free loopback port, logging to logName in the run's folder, with the variables of extra
// ("NAME=value ...") last, so that they win.
func (e *environment) apiProcess(name, binary, dsn, logName, extra string) (*process, error) {
	// The API logs a JSON line per request as in production; it goes to a file so that its
	// cost is paid, and the file is deleted with the folder unless -keep.
	logFile, err := os.Create(filepath.Join(e.dir, logName))
	if err != nil {
		return nil, err
	}
	addr := freeLoopback()
	p := &process{name: name, base: "http://" + addr, pprof: freeLoopback(), cmd: exec.Command(binary)}
	// The support-case scenario opens tens of thousands of cases per organization: a quota
	// far above that, so the load measures the creates and not their refusals.
	p.cmd.Env = append(serverEnviron(), "DATABASE_URL="+dsn, "LISTEN_ADDR="+addr, "APP_ENV=development",
		"LOG_LEVEL="+valueOr(os.Getenv("BENCH_API_LOG_LEVEL"), "info"), "QUOTA_OPEN_SUPPORT_CASES=100000000", "PPROF_ADDR="+p.pprof)
	p.cmd.Env = append(p.cmd.Env, strings.Fields(extra)...)
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	return p, nil
}

// startServers starts the API, then the process in the floor's place, each once it is ready.
func (e *environment) startServers(ctx context.Context) error {
	for _, p := range []*process{e.api, e.floor} {
		p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
		if err := p.cmd.Start(); err != nil {
			return fmt.Errorf("start %s: %w", p.name, err)
		}
		p.exited = make(chan struct{})
		go func() { _ = p.cmd.Wait(); close(p.exited) }()
		// The API first: /readyz answering means its migrations ran, which the floor needs.
		if err := waitReady(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

func freeLoopback() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// readyTimeout bounds waitReady (-ready-timeout).
var readyTimeout = 2 * time.Minute

// waitReady polls until the process answers HTTP (the API: /readyz; the floor: anything).
func waitReady(ctx context.Context, p *process) error {
	deadline := time.Now().Add(readyTimeout)
	for time.Now().Before(deadline) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited (its log is in the bench folder: run with -keep)", p.name)
		default:
		}
		resp, err := http.Get(p.base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if p.name == "floor" || resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s did not become ready", p.name)
}

func (e *environment) stop() {
	for _, p := range []*process{e.api, e.floor} {
		if p == nil || p.exited == nil {
			continue
		}
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(30 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	}
	if e.cluster != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if e.keep {
			_ = e.cluster.Stop(ctx)
		} else if err := e.cluster.Destroy(ctx); err != nil {
			log.Printf("removing the cluster: %v", err)
		}
	}
	if e.keep {
		log.Printf("kept %s", e.dir)
	} else {
		os.RemoveAll(e.dir)
	}
}

// memory reads a /proc/<pid>/status field in kB (VmHWM: peak resident set; VmRSS: now).
func (p *process) memory(field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// cpuSeconds returns the CPU time the process has used so far (user and system), from
// /proc/<pid>/stat. PostgreSQL's work for the process is counted apart: postgresCPU.
func (p *process) cpuSeconds() float64 {
	self, _, _ := procCPU(p.cmd.Process.Pid)
	return self
}

// procCPU reads /proc/<pid>/stat: the CPU time (user and system) of the process, that of
// its children it has reaped, and its parent's pid.
func procCPU(pid int) (self, reaped float64, ppid int) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, 0
	}
	// The command name (field 2) may hold spaces; the fields after it are counted from its ')'.
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(fields) < 15 {
		return 0, 0, 0
	}
	ticks := func(i int) float64 { v, _ := strconv.ParseFloat(fields[i], 64); return v / 100 } // 100 a second on Linux
	ppid, _ = strconv.Atoi(fields[1])
	return ticks(11) + ticks(12), ticks(13) + ticks(14), ppid
}

// postgresCPU returns the CPU time the cluster has used so far: the postmaster, its live
// backends and workers, and those that have exited. The difference over a phase, divided by
// its requests, is the database's work per request, which a server's own figure leaves out.
func (e *environment) postgresCPU() float64 {
	b, err := os.ReadFile(filepath.Join(e.cluster.Dir, "data", "postmaster.pid"))
	if err != nil {
		return 0
	}
	postmaster, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil {
		return 0
	}
	total, reaped, _ := procCPU(postmaster)
	total += reaped
	entries, _ := os.ReadDir("/proc")
	for _, entry := range entries {
		pid, err := strconv.Atoi(entry.Name())
		if err != nil {
			continue
		}
		if self, reaped, ppid := procCPU(pid); ppid == postmaster {
			total += self + reaped
		}
	}
	return total
}

// allocated returns the bytes the process's Go runtime has allocated since it started, read
// from its Prometheus metrics; 0 when it serves none (the floor).
func (p *process) allocated() float64 {
	resp, err := http.Get(p.base + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	s := bufio.NewScanner(resp.Body)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "go_memstats_alloc_bytes_total "); ok {
			n, _ := strconv.ParseFloat(v, 64)
			return n
		}
	}
	return 0
}

// serverEnviron is the driver's environment without the variables of its own Go runtime
// (GOGC, GOMEMLIMIT: see tuneGC; GODEBUG), which are not the servers' to inherit: each
// server runs with its own defaults unless BENCH_API_ENV or -against-env says otherwise.
func serverEnviron() []string {
	return slices.DeleteFunc(os.Environ(), func(v string) bool {
		name, _, _ := strings.Cut(v, "=")
		return name == "GOGC" || name == "GOMEMLIMIT" || name == "GODEBUG"
	})
}

// resetPeak restarts VmHWM from the current RSS (clear_refs 5), so each scenario reports
// its own peak. It returns false where the kernel refuses; peaks are then cumulative.
func (p *process) resetPeak() bool {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", p.cmd.Process.Pid), []byte("5"), 0) == nil
}

func valueOr(v, fallback string) string {
	if v == "" {
		return fallback
	}
	return v
}
