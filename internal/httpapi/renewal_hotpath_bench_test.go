package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
	"github.com/provider/coreapi/internal/pgtest"
	"github.com/provider/coreapi/internal/postgres"
)

// BenchmarkHotPathsDuringRenewal measures two hot paths of the API, in process through the
// whole handler, without a renewal run and while one goes, in the same process and database
// (docs/performance.md, "Renewals"): GET /v1/organizations/{id} and POST /v1/growth/events,
// each with an API key (the credential cache on, as in production), one request after
// another. The run is the wall-clock renewal run (DB.BillDue) of the server's own pool,
// configured as the server is (RENEWAL_CONCURRENCY, RENEWAL_BUSY_SHARE; unset, their
// defaults) and giving way to the requests the server counts in flight, over
// RENEWAL_HOTPATH_N (default 3000) rated subscriptions due, seeded as BenchmarkRenewal's. It
// reports each path's median and 99th percentile latency without the run (measured before
// and after it) and during it, and the ratios during/without.
//
//	go test -run '^$' -bench BenchmarkHotPathsDuringRenewal -benchtime 1x ./internal/httpapi/
func BenchmarkHotPathsDuringRenewal(b *testing.B) {
	n := 3000
	if s := os.Getenv("RENEWAL_HOTPATH_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			b.Fatalf("RENEWAL_HOTPATH_N=%q: a positive count", s)
		}
	}
	renewals, err := postgres.RenewalSettingsFromEnv(os.Getenv)
	if err != nil {
		b.Fatal(err)
	}
	env := apitest.New(b, apitest.WithCredentialCache(5*time.Second))
	env.StopWorkers() // the run measured is the only one: none of the job queue's own
	env.DB.Renewals = renewals
	org := createOrganization(b, env, minimalOrganization)["id"].(string)
	plan := ratedPlan(b, env, "null")
	pgtest.SeedDueRenewals(b, env.Pool, uuid.MustParse(org), uuid.MustParse(plan), n)
	paths := hotPaths(b, env, org)
	// RENEWAL_HOTPATH_GAP (a duration such as 150ms) sends each round of requests that long
	// after the last: sparse traffic, quiet long enough for the run to go at full speed
	// between requests (httpapi.DefaultQuiet), instead of one request after another.
	if s := os.Getenv("RENEWAL_HOTPATH_GAP"); s != "" {
		if paths.gap, err = time.ParseDuration(s); err != nil || paths.gap < 0 {
			b.Fatalf("RENEWAL_HOTPATH_GAP=%q: a duration such as 150ms", s)
		}
	}

	idleRounds := hotPathIdleRounds
	if paths.gap > 0 {
		idleRounds = hotPathSparseIdleRounds
	}
	idle := paths.sample(b, idleRounds, nil, nil)
	// The run's pauses, to tell the requests a batch overlapped from those it did not.
	pausing := new(runPhase)
	env.DB.RenewalPause = func(ctx context.Context, d time.Duration) {
		pausing.turn()
		defer pausing.turn()
		postgres.Sleep(ctx, d)
	}
	done := make(chan error, 1)
	pool, gc := env.DB.Pool.Stat(), readGC()
	start := time.Now()
	go func() {
		taken, err := env.DB.BillDue(context.Background())
		if err == nil && taken != n {
			err = fmt.Errorf("took %d of %d", taken, n)
		}
		done <- err
	}()
	during := paths.sample(b, 0, done, pausing)
	run := time.Since(start)
	poolAfter := env.DB.Pool.Stat()
	gcAfter := readGC()
	idle.add(paths.sample(b, idleRounds, nil, nil))
	b.StopTimer()

	b.ReportMetric(float64(n)/run.Seconds(), "invoices/s")
	b.ReportMetric(float64(gcAfter.cycles-gc.cycles)*1000/float64(n), "gc-cycles/1000-invoices")
	for i, name := range paths.names {
		without, with := idle.percentiles(i), during.percentiles(i)
		b.ReportMetric(float64(with[0])/float64(without[0]), name+"-p50-ratio")
		b.ReportMetric(float64(with[1])/float64(without[1]), name+"-p99-ratio")
		b.Logf("%s: without a run p50 %v p99 %v (%d requests); during the run p50 %v p99 %v (%d requests); ratio p50 %.2f, p99 %.2f",
			name, without[0], without[1], len(idle.latencies[i]), with[0], with[1], len(during.latencies[i]),
			float64(with[0])/float64(without[0]), float64(with[1])/float64(without[1]))
	}
	// Whether what slows a request is sharing the machine with a batch: the requests a batch
	// overlapped (any part of them outside the run's pauses) against those it did not.
	for i, name := range paths.names {
		overlapped, clear := during.split(i, during.overlapped)
		b.Logf("%s during the run: %d requests overlapped a batch: p50 %v p99 %v; %d did not: p50 %v p99 %v",
			name, len(overlapped), percentile(overlapped, 0.5), percentile(overlapped, 0.99),
			len(clear), percentile(clear, 0.5), percentile(clear, 0.99))
	}
	// Whether what slows a request is the garbage collection of what the run allocates: the
	// requests during which a collection began or ended, against the others.
	b.Logf("garbage collection during the run: %d cycles, %d MB allocated (%.0f kB an invoice)",
		gcAfter.cycles-gc.cycles, (gcAfter.allocated-gc.allocated)>>20, float64(gcAfter.allocated-gc.allocated)/1024/float64(n))
	for i, name := range paths.names {
		collected, clear := during.split(i, during.collected)
		b.Logf("%s during the run: %d requests met a collection: p50 %v p99 %v; %d did not: p50 %v p99 %v",
			name, len(collected), percentile(collected, 0.5), percentile(collected, 0.99),
			len(clear), percentile(clear, 0.5), percentile(clear, 0.99))
	}
	// Whether anyone (the run's workers or the requests) found the pool empty during the run.
	b.Logf("renewal run: %d invoices in %v (%.0f/s), settings %+v (0: the default), a pool of %d; during it %d acquires, %d waited for a connection (%v in all)",
		n, run.Round(time.Millisecond), float64(n)/run.Seconds(), renewals, env.DB.Pool.Config().MaxConns,
		poolAfter.AcquireCount()-pool.AcquireCount(), poolAfter.EmptyAcquireCount()-pool.EmptyAcquireCount(),
		(poolAfter.EmptyAcquireWaitTime() - pool.EmptyAcquireWaitTime()).Round(time.Millisecond))
}

// hotPathIdleRounds is how many requests of each path BenchmarkHotPathsDuringRenewal sends
// before the run and again after it: a 99th percentile of 1,000 is the 10th slowest.
const hotPathIdleRounds = 500

// hotPathSparseIdleRounds is how many it sends before and after with RENEWAL_HOTPATH_GAP: 100
// rounds of 150 ms take 15 s.
const hotPathSparseIdleRounds = 100

// hotPathSet is the requests BenchmarkHotPathsDuringRenewal times, by name.
type hotPathSet struct {
	env   *apitest.Env
	names []string
	// request builds the i-th request of a path (a fresh body each time).
	request []func(i int) *http.Request
	status  []int
	// gap is how long each round of requests waits after the last; 0: none.
	gap time.Duration
}

// hotPaths makes the API keys (enough that none is refused for its rate) and the requests of
// organization org.
func hotPaths(b *testing.B, env *apitest.Env, org string) *hotPathSet {
	keys := benchKeys(b, env, org, 32, `"organizations:read","growth-events:write"`)
	withKey := func(r *http.Request, i int) *http.Request {
		r.Header.Set("Authorization", keys[i%len(keys)])
		return r
	}
	return &hotPathSet{
		env:   env,
		names: []string{"get-organization", "post-growth-event"},
		request: []func(int) *http.Request{
			func(i int) *http.Request {
				return withKey(httptest.NewRequest(http.MethodGet, "/v1/organizations/"+org, nil), i)
			},
			func(i int) *http.Request {
				r := httptest.NewRequest(http.MethodPost, "/v1/growth/events", strings.NewReader(fmt.Sprintf(
					`{"event_name":"page_view","organization_id":%q,"anonymous_id":"visitor-%06d","traffic_type":"load_test","product":"einvoice","source":"bench","page_path":"/pricing"}`, org, i)))
				r.Header.Set("Content-Type", "application/json")
				return withKey(r, i)
			},
		},
		status: []int{http.StatusOK, http.StatusAccepted},
	}
}

// hotPathSample is the latencies of each path's requests, whether a garbage collection cycle
// began or ended during each and, during a run, whether a batch of the run overlapped each.
type hotPathSample struct {
	latencies  [][]time.Duration
	collected  [][]bool
	overlapped [][]bool
}

// gcCounts is how many garbage collection cycles the process has completed, and how many
// bytes it has allocated.
type gcCounts struct{ cycles, allocated uint64 }

func readGC() gcCounts {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return gcCounts{cycles: s[0].Value.Uint64(), allocated: s[1].Value.Uint64()}
}

// runPhase is whether a renewal run is pausing, and how many pauses it began: a request is
// clear of the run's batches when both are the same at its start and end, and it was pausing.
type runPhase struct{ state atomic.Int64 } // pauses begun × 2, + 1 while pausing

// turn marks a pause's start (the state becomes odd) or its end (even).
func (p *runPhase) turn() { p.state.Add(1) }

// sample sends the paths' requests in turn, one at a time, count rounds, or until done
// answers when done is not nil (then a failed run fails the benchmark); with the run's phase,
// it notes which requests a batch overlapped.
func (s *hotPathSet) sample(b *testing.B, count int, done <-chan error, run *runPhase) *hotPathSample {
	out := &hotPathSample{latencies: make([][]time.Duration, len(s.names)), collected: make([][]bool, len(s.names)), overlapped: make([][]bool, len(s.names))}
	w := &discardResponse{header: http.Header{}}
	for i := 0; done != nil || i < count; i++ {
		if s.gap > 0 && i > 0 {
			time.Sleep(s.gap)
		}
		if done != nil {
			select {
			case err := <-done:
				if err != nil {
					b.Fatalf("renewal run: %v", err)
				}
				return out
			default:
			}
		}
		for p, request := range s.request {
			r := request(i)
			clear(w.header)
			w.status = 0
			var phase int64
			if run != nil {
				phase = run.state.Load()
			}
			gc := readGC().cycles
			start := time.Now()
			s.env.Handler.ServeHTTP(w, r)
			out.latencies[p] = append(out.latencies[p], time.Since(start))
			out.collected[p] = append(out.collected[p], readGC().cycles != gc)
			if run != nil {
				out.overlapped[p] = append(out.overlapped[p], phase%2 == 0 || run.state.Load() != phase)
			}
			if w.status != s.status[p] {
				b.Fatalf("%s: status %d", s.names[p], w.status)
			}
		}
	}
	return out
}

// split is the latencies of path i's requests that by marks (overlapped or collected), and
// of the others.
func (s *hotPathSample) split(i int, by [][]bool) (marked, clear []time.Duration) {
	for j, l := range s.latencies[i] {
		if by[i][j] {
			marked = append(marked, l)
		} else {
			clear = append(clear, l)
		}
	}
	return marked, clear
}

// add adds the latencies of o to s.
func (s *hotPathSample) add(o *hotPathSample) {
	for i := range s.latencies {
		s.latencies[i] = append(s.latencies[i], o.latencies[i]...)
		s.collected[i] = append(s.collected[i], o.collected[i]...)
	}
}

// percentiles is the median and 99th percentile latency of path i.
func (s *hotPathSample) percentiles(i int) [2]time.Duration {
	return [2]time.Duration{percentile(s.latencies[i], 0.50), percentile(s.latencies[i], 0.99)}
}

// percentile is the q-quantile of latencies (0 when there are none).
func percentile(latencies []time.Duration, q float64) time.Duration {
	if len(latencies) == 0 {
		return 0
	}
	l := slices.Clone(latencies)
	slices.Sort(l)
	return l[min(len(l)-1, int(q*float64(len(l))))]
}
