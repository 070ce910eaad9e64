// Command benchdriver runs `make bench`: it starts a throwaway PostgreSQL cluster, the
// Provider Core API (a release build) and the floor server (internal/bench/cmd/benchfloor)
// over the same database, seeds organizations and API keys through the API, and drives both
// over 127.0.0.1 with vegeta, scenario by scenario, alternating between them. For each it
// prints saturated throughput, p50/p99 latency at half of the API's saturated throughput,
// and peak RSS, with the API/floor ratio, and checks them against the targets of
// docs/performance.md. Everything stops by itself; nothing but loopback is ever targeted.
//
// With -soak it runs the mixed workload against the API alone at half its saturated
// throughput and samples its RSS, to show that memory stays flat.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"regexp"
	"runtime/debug"
	"strings"
	"syscall"
	"time"
)

type options struct {
	server, floor  string // binaries
	warmup         time.Duration
	duration       time.Duration // of each measured phase
	rounds         int
	workers        uint64
	orgs           int
	soak           time.Duration
	only           *regexp.Regexp // the scenarios run, if not all
	keep           bool
	durable        bool
	pprofDir       string
	againstEnv     string // instead of the floor, the API again with these variables
	againstServer  string // instead of the floor, another build of the API
	latenciesDir   string // where each paced phase's requests are written, if anywhere
	pgSettings     string // extra PostgreSQL settings, "name=value ..."
	dir            string // where the run's folder is made ("": see runParent)
	pacedConns     uint64 // connections of the paced phases (0: the saturation phase's)
	lists          bool   // the lists benchmark instead of the scenarios (lists.go)
	listsRows      int    // request logs and growth events of its big database
	listsSmallRows int    // and of its small one
	listsSeeded    string // where the lists benchmark keeps its seeded cluster to reuse ("": seed a throwaway one)
}

// against describes what stands in the floor's place when the API is compared with itself.
func (o options) against() string {
	return strings.TrimSpace(o.againstServer + " " + o.againstEnv)
}

func main() {
	var o options
	flag.StringVar(&o.server, "server", "bin/coreapi", "the API binary (make build)")
	flag.StringVar(&o.floor, "floor", "bin/benchfloor", "the floor binary")
	flag.DurationVar(&o.warmup, "warmup", 2*time.Second, "warm-up before each measured phase")
	flag.DurationVar(&o.duration, "duration", 5*time.Second, "length of each measured phase")
	flag.IntVar(&o.rounds, "rounds", 1, "alternations per scenario; the median round is reported")
	flag.Uint64Var(&o.workers, "workers", 32, "concurrent connections of the saturation phase")
	flag.IntVar(&o.orgs, "orgs", 32, "organizations seeded (each with its own API keys)")
	flag.DurationVar(&readyTimeout, "ready-timeout", readyTimeout, "how long a server may take to answer /readyz: its migrations run first (a build migrating a kept -lists-seeded database of 10 million rows wants many minutes)")
	flag.DurationVar(&o.soak, "soak", 0, "instead of the scenarios: the mixed load on the API for this long, sampling RSS")
	flag.Func("only", "run only the scenarios (with -lists: the reads) whose name matches this regular expression (e.g. 'growth' or 'get-org|catalogue')", func(expr string) (err error) {
		o.only, err = regexp.Compile(expr)
		return err
	})
	flag.BoolVar(&o.durable, "durable", false, "run PostgreSQL with fsync, as in production (writes then measure the disk too)")
	flag.BoolVar(&o.keep, "keep", false, "keep the cluster's folder (and the API's log) afterwards")
	flag.StringVar(&o.pprofDir, "cpuprofile-dir", "", "fetch CPU profiles of the saturation and paced phases, and allocation profiles of the saturation phases, of both servers into this folder")
	flag.StringVar(&o.againstEnv, "against-env", "", "compare the API with itself run with these variables (e.g. 'GOGC=100') instead of with the floor")
	flag.StringVar(&o.againstServer, "against-server", "", "compare the API with another build of it (a binary, e.g. of an earlier commit) instead of with the floor; combines with -against-env")
	flag.StringVar(&o.latenciesDir, "latencies-dir", "", "write every request of the paced phases (sent, latency, status) as CSV into this folder, one file per scenario, server and round")
	flag.StringVar(&o.pgSettings, "pg-settings", "", "extra PostgreSQL settings for the throwaway cluster, space-separated name=value (e.g. 'log_autovacuum_min_duration=0 log_lock_waits=on'); its log is kept with -keep")
	flag.StringVar(&o.dir, "dir", "", "make the run's folder (the cluster, the API's log) in this folder; by default "+memoryFolder+" when it is a memory file system with room, the temporary folder with -durable")
	flag.Uint64Var(&o.pacedConns, "paced-connections", 0, "connections of the paced phases (0: as many as the scenario's saturation phase)")
	flag.BoolVar(&o.lists, "lists", false, "instead of the scenarios: every list of request logs and the growth summary, with each filter, first and following page, at -lists-rows against -lists-small-rows stored (make bench-lists)")
	flag.IntVar(&o.listsRows, "lists-rows", 10_000_000, "request logs and growth events (each) of the lists benchmark's big database")
	flag.IntVar(&o.listsSmallRows, "lists-small-rows", 10_000, "request logs and growth events (each) of its small database")
	flag.StringVar(&o.listsSeeded, "lists-seeded", "", "with -lists: keep the seeded cluster in this folder and, when it holds one already, measure on it without seeding (a later build migrates it as it would a production database)")
	flag.Parse()
	tuneGC()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		log.Fatal("benchdriver: ", err)
	}
}

// driverMemoryLimit is the memory the driver's Go runtime may use before it collects.
const driverMemoryLimit = 512 << 20

// tuneGC keeps the driver's own collections out of the latencies it measures, unless the
// environment sets GOGC or GOMEMLIMIT. vegeta allocates for every request it sends and
// every response it reads, and with Go's default (GOGC=100) the driver's live heap of ~3
// MB made it collect about 30 times a second, each cycle stopping the world for up to
// 1.5 ms and slowing every goroutine while it marks: time a response waited for the driver
// was counted as the server's (docs/performance.md). Paced by a memory limit alone,
// it collects every few seconds.
func tuneGC() {
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(-1)
		debug.SetMemoryLimit(driverMemoryLimit)
	}
}

func run(ctx context.Context, o options) error {
	if o.lists {
		return runLists(ctx, o)
	}
	env, err := startEnvironment(ctx, o)
	if err != nil {
		return err
	}
	defer env.stop()
	fix, err := seed(ctx, env.api.base, o.orgs)
	if err != nil {
		return fmt.Errorf("seeding: %w", err)
	}
	if o.soak > 0 {
		return soak(ctx, env, fix, o)
	}
	var results []result
	for _, sc := range scenarios(fix) {
		if o.only != nil && !o.only.MatchString(sc.name) {
			continue
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r, err := measure(ctx, env, sc, o)
		if err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
		results = append(results, r)
		log.Printf("%-22s done", sc.name)
	}
	printTable(os.Stdout, results, o)
	return nil
}
