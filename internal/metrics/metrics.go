// Package metrics is the server's Prometheus instrumentation: HTTP traffic by route template
// and status, the PostgreSQL connection pool, idempotency replays and rate-limit refusals,
// plus hooks through which other packages (webhook delivery, background workers) register
// their own gauges and counters on the same registry.
//
// Each Metrics has its own registry, so several servers in one process (tests, siblings)
// never collide on the global default registry.
package metrics

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every metric of the server.
const Namespace = "coreapi"

// UnmatchedRoute labels requests that matched no route, so unknown paths cannot inflate the
// number of time series.
const UnmatchedRoute = "unmatched"

// Metrics holds the collectors of one server. A nil *Metrics records nothing.
type Metrics struct {
	registry    *prometheus.Registry
	requests    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	replays     prometheus.Counter
	rateLimited *prometheus.CounterVec

	mu       sync.Mutex
	counters map[string]*prometheus.CounterVec
	// served keeps the request counter and histogram of each (method, route, status) seen,
	// so a request finds them with one lookup instead of hashing its labels twice.
	served sync.Map // servedLabels → servedSeries
}

type servedLabels struct {
	method, route string
	status        int
}

type servedSeries struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// New returns the server's metrics with the Go runtime and process collectors registered.
func New() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "http_requests_total",
			Help: "HTTP requests served, by method, route template and status code.",
		}, []string{"method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "http_request_duration_seconds",
			Help:    "Time to serve an HTTP request, by method, route template and status code.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"method", "route", "status"}),
		replays: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Name: "idempotency_replays_total",
			Help: "Responses replayed from the idempotency store to a retried request.",
		}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "rate_limit_refusals_total",
			Help: "Requests refused with 429 rate_limited by this process, by rate-limit policy.",
		}, []string{"policy"}),
		counters: map[string]*prometheus.CounterVec{},
	}
	m.registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.duration, m.replays, m.rateLimited,
	)
	return m
}

// Handler serves the metrics in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// Registry is the registry every collector of this server belongs to.
func (m *Metrics) Registry() *prometheus.Registry { return m.registry }

// knownMethods bounds the method label; anything else is "other".
var knownMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodOptions: true,
}

// ObserveRequest records one served request. route is the path template (e.g.
// /v1/subscriptions/{id}), or "" when no route matched.
func (m *Metrics) ObserveRequest(method, route string, status int, elapsed time.Duration) {
	if m == nil {
		return
	}
	if !knownMethods[method] {
		method = "other"
	}
	if route == "" {
		route = UnmatchedRoute
	}
	key := servedLabels{method, route, status}
	v, ok := m.served.Load(key)
	if !ok {
		code := strconv.Itoa(status)
		v, _ = m.served.LoadOrStore(key, servedSeries{
			requests: m.requests.WithLabelValues(method, route, code),
			duration: m.duration.WithLabelValues(method, route, code),
		})
	}
	series := v.(servedSeries)
	series.requests.Inc()
	series.duration.Observe(elapsed.Seconds())
}

// IdempotencyReplayed counts one response replayed to a retry.
func (m *Metrics) IdempotencyReplayed() {
	if m != nil {
		m.replays.Inc()
	}
}

// RateLimited counts one request refused by the rate limit of policy.
func (m *Metrics) RateLimited(policy string) {
	if m != nil {
		m.rateLimited.WithLabelValues(policy).Inc()
	}
}

// GaugeFunc registers a gauge whose value fn reports at every scrape, e.g. the depth of a
// durable queue. name is prefixed with the namespace ("webhook_queue_depth" becomes
// coreapi_webhook_queue_depth). fn must be quick and safe for concurrent use.
func (m *Metrics) GaugeFunc(name, help string, fn func() float64) error {
	if m == nil {
		return nil
	}
	g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help}, fn)
	if err := m.registry.Register(g); err != nil {
		return fmt.Errorf("metrics: register %s: %w", name, err)
	}
	return nil
}

// CounterVec returns the counter called name with the given labels, registering it on first
// use, e.g. CounterVec("webhook_deliveries_total", "…", "outcome"). Asking again for the same
// name returns the same counter, so several workers in one process share it.
func (m *Metrics) CounterVec(name, help string, labels ...string) (*prometheus.CounterVec, error) {
	if m == nil {
		// Callers without metrics still get a usable counter; it is simply never exposed.
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, labels), nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.counters[name]; ok {
		return c, nil
	}
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, labels)
	if err := m.registry.Register(c); err != nil {
		return nil, fmt.Errorf("metrics: register %s: %w", name, err)
	}
	m.counters[name] = c
	return c, nil
}

// RegisterPool exposes the statistics of a pgx connection pool; stat is usually
// (*pgxpool.Pool).Stat.
func (m *Metrics) RegisterPool(stat func() *pgxpool.Stat) error {
	if m == nil {
		return nil
	}
	return m.registry.Register(&poolCollector{stat: stat})
}

// poolCollector reads pgxpool.Stat at every scrape.
type poolCollector struct {
	stat func() *pgxpool.Stat
}

func poolDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "db_pool", name), help, nil, nil)
}

var (
	poolAcquired     = poolDesc("acquired_connections", "Connections currently in use by a request or worker.")
	poolIdle         = poolDesc("idle_connections", "Idle connections in the pool.")
	poolTotal        = poolDesc("total_connections", "Connections open (acquired, idle and being established).")
	poolMax          = poolDesc("max_connections", "Maximum size of the pool.")
	poolAcquires     = poolDesc("acquires_total", "Successful connection acquisitions.")
	poolEmptyWaits   = poolDesc("empty_acquires_total", "Acquisitions that had to wait because the pool had no idle connection.")
	poolCanceled     = poolDesc("canceled_acquires_total", "Acquisitions cancelled by their context while waiting.")
	poolAcquireTime  = poolDesc("acquire_wait_seconds_total", "Total time spent acquiring connections.")
	poolNewConns     = poolDesc("new_connections_total", "Connections opened.")
	poolLifetimeDrop = poolDesc("max_lifetime_destroys_total", "Connections closed for reaching their maximum lifetime.")
	poolIdleDrop     = poolDesc("max_idle_destroys_total", "Connections closed for idling too long.")
)

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{poolAcquired, poolIdle, poolTotal, poolMax, poolAcquires, poolEmptyWaits,
		poolCanceled, poolAcquireTime, poolNewConns, poolLifetimeDrop, poolIdleDrop} {
		ch <- d
	}
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stat()
	gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	gauge(poolAcquired, float64(s.AcquiredConns()))
	gauge(poolIdle, float64(s.IdleConns()))
	gauge(poolTotal, float64(s.TotalConns()))
	gauge(poolMax, float64(s.MaxConns()))
	counter(poolAcquires, float64(s.AcquireCount()))
	counter(poolEmptyWaits, float64(s.EmptyAcquireCount()))
	counter(poolCanceled, float64(s.CanceledAcquireCount()))
	counter(poolAcquireTime, s.AcquireDuration().Seconds())
	counter(poolNewConns, float64(s.NewConnsCount()))
	counter(poolLifetimeDrop, float64(s.MaxLifetimeDestroyCount()))
	counter(poolIdleDrop, float64(s.MaxIdleDestroyCount()))
}
