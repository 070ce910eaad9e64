package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// figures are one target's results in one scenario.
type figures struct {
	throughput float64       // successful requests/s at saturation
	p50, p99   time.Duration // at half of the API's saturated throughput
	peakKB     int64         // peak RSS over the scenario
	errors     uint64        // non-2xx answers in all phases
	sample     string        // one of them, for the log
	// allocated is the bytes the process allocated per request at saturation (its Go
	// runtime's count, from /metrics: the API only).
	allocated float64
	// cpu is the process's own CPU time per request at saturation, in seconds; pgCPU is
	// PostgreSQL's over the same phase.
	cpu, pgCPU float64
	slow       tail // the paced phase's requests slower than the p99 target
}

type result struct {
	scenario   scenario
	api, floor figures
	paceRate   float64
	peakReset  bool
}

// attack runs one phase against base and returns vegeta's metrics. rate 0 means as fast as
// workers connections allow (closed loop); otherwise the rate is held (open loop). each, if
// not nil, sees every result.
func attack(ctx context.Context, sc scenario, base string, rate float64, workers uint64, d time.Duration, each func(*vegeta.Result)) (*vegeta.Metrics, string) {
	opts := []func(*vegeta.Attacker){
		vegeta.KeepAlive(true), vegeta.Timeout(30 * time.Second), vegeta.MaxBody(512), vegeta.HTTP2(false),
		vegeta.Connections(int(workers)), vegeta.MaxConnections(int(workers)),
	}
	r := vegeta.Rate{Freq: int(rate), Per: time.Second}
	if rate == 0 {
		opts = append(opts, vegeta.Workers(workers), vegeta.MaxWorkers(workers))
	} else {
		opts = append(opts, vegeta.Workers(workers))
	}
	atk := vegeta.NewAttacker(opts...)
	stop := context.AfterFunc(ctx, func() { atk.Stop() })
	defer stop()
	var m vegeta.Metrics
	var sample string
	for res := range atk.Attack(sc.targeter(base), r, d, sc.name) {
		m.Add(res)
		if each != nil {
			each(res)
		}
		if (res.Code < 200 || res.Code >= 300) && sample == "" {
			sample = fmt.Sprintf("%d %s %s", res.Code, res.Error, strings.TrimSpace(string(res.Body)))
		}
	}
	m.Close()
	return &m, sample
}

func errorsOf(m *vegeta.Metrics) uint64 {
	var n uint64
	for code, c := range m.StatusCodes {
		if !strings.HasPrefix(code, "2") {
			n += uint64(c)
		}
	}
	return n
}

// measure runs sc against both servers: per round, warm-up and saturation on each (the
// order alternating between rounds), then each at half of the API's saturated throughput,
// warmed up at that rate first. The median round is reported.
func measure(ctx context.Context, env *environment, sc scenario, o options) (result, error) {
	workers := o.workers
	if sc.workers > 0 {
		workers = sc.workers
	}
	var rounds []result
	for round := range o.rounds {
		order := []*process{env.api, env.floor}
		if round%2 == 1 {
			order = []*process{env.floor, env.api}
		}
		r := result{scenario: sc, peakReset: true}
		fig := map[*process]*figures{env.api: &r.api, env.floor: &r.floor}
		for _, p := range order {
			r.peakReset = p.resetPeak() && r.peakReset
			attack(ctx, sc, p.base, 0, workers, o.warmup, nil)
			stopProfile := env.profile(ctx, o, sc.name, p, false)
			before, cpuBefore, pgBefore := p.allocated(), p.cpuSeconds(), env.postgresCPU()
			m, sample := attack(ctx, sc, p.base, 0, workers, o.duration, nil)
			after, cpuAfter, pgAfter := p.allocated(), p.cpuSeconds(), env.postgresCPU()
			stopProfile()
			f := fig[p]
			f.throughput = m.Throughput
			f.allocated = (after - before) / float64(max(m.Requests, 1))
			f.cpu = (cpuAfter - cpuBefore) / float64(max(m.Requests, 1))
			f.pgCPU = (pgAfter - pgBefore) / float64(max(m.Requests, 1))
			f.errors += errorsOf(m)
			if sample != "" {
				f.sample = sample
			}
		}
		r.paceRate = max(1, r.api.throughput/2)
		// As many connections as the saturation phase had: the paced phase measures the
		// server, and a client with fewer connections than the rate needs at a moment's
		// slower latency queues the requests itself (growth events wait ~1.5 ms for their
		// group commit, so 16 connections carried 5 000 a second only while each took under
		// 3 ms, and one slower moment turned into a backlog: docs/performance.md).
		pacedConns := cmp.Or(o.pacedConns, workers)
		for _, p := range slices.Backward(order) {
			// A warm-up at the paced rate first: the server has idled through the other's
			// phases, longer than its credential cache trusts an entry, and the p99 is
			// the steady state's, not a cold start's (docs/performance.md).
			attack(ctx, sc, p.base, r.paceRate, pacedConns, o.warmup, nil)
			latencies := newLatencyFile(o, fmt.Sprintf("%s.%s.round%d.csv", sc.name, env.column(p), round+1))
			slow := &slowRequests{over: sc.p99Target()}
			stopProfile := env.profile(ctx, o, sc.name, p, true)
			m, sample := attack(ctx, sc, p.base, r.paceRate, pacedConns, o.duration, func(res *vegeta.Result) {
				slow.add(res)
				latencies.add(res)
			})
			stopProfile()
			latencies.close()
			f := fig[p]
			f.p50, f.p99 = m.Latencies.P50, m.Latencies.P99
			f.slow = slow.tail()
			f.errors += errorsOf(m)
			if sample != "" {
				f.sample = sample
			}
			f.peakKB = p.memory("VmHWM")
		}
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
		log.Printf("%s round %d: api %.0f req/s (%.0f µs CPU + %.0f µs PostgreSQL's, %.1f kB allocated per request), p50 %v, p99 %v (%s); floor %.0f req/s (%.0f µs CPU + %.0f µs PostgreSQL's per request), p50 %v, p99 %v (%s)",
			sc.name, round+1, r.api.throughput, r.api.cpu*1e6, r.api.pgCPU*1e6, r.api.allocated/1000, r.api.p50, r.api.p99, r.api.slow,
			r.floor.throughput, r.floor.cpu*1e6, r.floor.pgCPU*1e6, r.floor.p50, r.floor.p99, r.floor.slow)
		for _, p := range order {
			if f := fig[p]; f.errors > 0 {
				log.Printf("%s: %s answered %d requests with errors, e.g. %s", sc.name, p.name, f.errors, f.sample)
			}
		}
		rounds = append(rounds, r)
	}
	slices.SortFunc(rounds, func(a, b result) int { return int(a.api.throughput - b.api.throughput) })
	return rounds[len(rounds)/2], nil
}

// profile fetches profiles of a process while a saturation phase runs, when asked to: its
// CPU profile (<scenario>.pprof), its heap after a collection at the start (.heap.pprof),
// and its allocation counts before and after (.allocs-before.pprof, .allocs-after.pprof:
// `go tool pprof -sample_index=alloc_space -diff_base <before> <after>` shows what the phase
// allocated). The floor's files are named <scenario>.floor.*, so that
// `go tool pprof -diff_base <scenario>.floor.pprof <scenario>.pprof` shows what the API
// spends beyond it. For a paced phase only the CPU profile is fetched, as
// <scenario>.paced.pprof (<scenario>.floor.paced.pprof): what the p99 is measured against,
// where a request costs more than at saturation (fewer requests share each wake-up). The
// profiler's own cost is then in that phase's latencies: compare p99s from runs without it.
func (e *environment) profile(ctx context.Context, o options, name string, p *process, paced bool) func() {
	if o.pprofDir == "" {
		return func() {}
	}
	if col := e.column(p); col != "api" {
		name += "." + col
	}
	if paced {
		name += ".paced"
	}
	seconds := int(o.duration.Seconds())
	fetch := func(path, file string) {
		resp, err := http.Get(fmt.Sprintf("http://%s%s", p.pprof, path))
		if err != nil {
			log.Printf("profile: %v", err)
			return
		}
		defer resp.Body.Close()
		_ = os.MkdirAll(o.pprofDir, 0o755)
		f, err := os.Create(filepath.Join(o.pprofDir, file))
		if err != nil {
			log.Printf("profile: %v", err)
			return
		}
		defer f.Close()
		_, _ = io.Copy(f, resp.Body)
	}
	if !paced {
		fetch("/debug/pprof/allocs", name+".allocs-before.pprof")
		fetch("/debug/pprof/heap?gc=1", name+".heap.pprof")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fetch(fmt.Sprintf("/debug/pprof/profile?seconds=%d", seconds), name+".pprof")
	}()
	return func() {
		<-done
		if !paced {
			fetch("/debug/pprof/allocs", name+".allocs-after.pprof")
		}
	}
}

// latencyFile keeps every request of a paced phase, when -latencies-dir asks for them, as
// CSV: when it was sent (Unix nanoseconds), its latency (nanoseconds) and its status. A
// server's slow requests can then be placed in time: spread evenly, they are its own cost;
// gathered in bursts, something stalled (its collector, PostgreSQL, the host).
type latencyFile struct {
	w *bufio.Writer
	f *os.File
}

func newLatencyFile(o options, name string) *latencyFile {
	if o.latenciesDir == "" {
		return nil
	}
	if err := os.MkdirAll(o.latenciesDir, 0o755); err != nil {
		log.Printf("latencies: %v", err)
		return nil
	}
	f, err := os.Create(filepath.Join(o.latenciesDir, name))
	if err != nil {
		log.Printf("latencies: %v", err)
		return nil
	}
	w := bufio.NewWriter(f)
	_, _ = w.WriteString("sent_unix_ns,latency_ns,status\n")
	return &latencyFile{w: w, f: f}
}

// add keeps a result; a nil file keeps nothing.
func (l *latencyFile) add(res *vegeta.Result) {
	if l != nil {
		fmt.Fprintf(l.w, "%d,%d,%d\n", res.Timestamp.UnixNano(), res.Latency.Nanoseconds(), res.Code)
	}
}

// burstGap is the most time between the sends of two slow requests of one burst.
const burstGap = 20 * time.Millisecond

// slowRequests gathers a paced phase's requests slower than over, by when they were sent
// (results arrive in the order they complete).
type slowRequests struct {
	over  time.Duration
	first time.Time   // the phase's first send
	slow  []time.Time // when each slow request was sent
}

func (s *slowRequests) add(res *vegeta.Result) {
	if s.first.IsZero() || res.Timestamp.Before(s.first) {
		s.first = res.Timestamp
	}
	if res.Latency > s.over {
		s.slow = append(s.slow, res.Timestamp)
	}
}

// tail describes a phase's slow requests: how many, and the largest burst of them. One
// burst as large as the one per cent a p99 allows means one stall decided it (a collection
// cycle, a wave of lookups, a neighbour on the machine); slow requests spread thinly mean a
// steady cost.
type tail struct {
	over    time.Duration
	slow    int
	burst   int           // slow requests in the largest burst
	burstAt time.Duration // when it started, from the phase's first send
}

func (s *slowRequests) tail() tail {
	slow := slices.SortedFunc(slices.Values(s.slow), time.Time.Compare)
	t := tail{over: s.over, slow: len(slow)}
	for i := 0; i < len(slow); {
		j := i + 1
		for j < len(slow) && slow[j].Sub(slow[j-1]) < burstGap {
			j++
		}
		if j-i > t.burst {
			t.burst, t.burstAt = j-i, slow[i].Sub(s.first)
		}
		i = j
	}
	return t
}

func (t tail) String() string {
	if t.slow == 0 {
		return fmt.Sprintf("none over %v", t.over)
	}
	return fmt.Sprintf("%d over %v, the largest burst %d at %.2fs", t.slow, t.over, t.burst, t.burstAt.Seconds())
}

func (l *latencyFile) close() {
	if l == nil {
		return
	}
	if err := errors.Join(l.w.Flush(), l.f.Close()); err != nil {
		log.Printf("latencies: %v", err)
	}
}
