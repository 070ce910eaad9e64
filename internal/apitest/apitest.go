// Package apitest runs the whole server over real HTTP against a fresh PostgreSQL database
// and checks every response a test receives against openapi/openapi.yaml: status, headers and
// body. Any drift between the server and the document fails the test that saw it.
package apitest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/httpapi"
	"github.com/provider/coreapi/internal/jobs"
	"github.com/provider/coreapi/internal/metrics"
	"github.com/provider/coreapi/internal/pgtest"
	"github.com/provider/coreapi/internal/postgres"
	"github.com/provider/coreapi/internal/secretbox"
	"github.com/provider/coreapi/internal/webhook"
)

// OperatorToken is the development bearer of the operator.
const OperatorToken = "dev:operator"

// OrgToken is the development bearer of organization id.
func OrgToken(id fmt.Stringer) string { return "dev:org:" + id.String() }

// Env is one running server with its own database.
type Env struct {
	t    testing.TB
	URL  string
	Pool *pgxpool.Pool
	// DB is the server's database; tests may set its Quotas between requests.
	DB     *postgres.DB
	dsn    string
	doc    *openapi3.T
	router routers.Router
	HTTP   *http.Client // validates every response against the document
	// Handler is the server's whole handler, for benchmarks that serve requests in process.
	Handler http.Handler
	// InFlight counts the requests the server serves; its renewal run gives way to them, as
	// in production.
	InFlight *httpapi.InFlight

	stopWorkers func()
	logs        *postgres.RequestLogWriter
}

// WebhookPolicy is the webhook delivery policy of test servers (Development follows the
// configuration): a schedule of milliseconds instead of a day, so retries, failures and
// disabling happen within a test.
var WebhookPolicy = webhook.Policy{
	Timeout:     5 * time.Second,
	MaxAttempts: 4,
	RetryBase:   40 * time.Millisecond,
	RetryCap:    200 * time.Millisecond,
	// Long enough that a test can read the attempt a Retry-After put off in the database.
	MaxRetryAfter: time.Hour,
}

// testPollInterval is how often the job queue of a test server looks for due jobs.
const testPollInterval = 100 * time.Millisecond

// StopWorkers stops the server's job queue (provisioning, webhook delivery, sweeps) and waits
// for the jobs in flight, as a process being stopped would: what it has not done stays queued
// in the database for a Sibling to do. The HTTP server keeps serving; jobs its requests queue
// wait for another process.
func (e *Env) StopWorkers() { e.stopWorkers() }

// WithCredentialCache makes the server cache credentials as the production server does
// (postgres.CredentialCache, listening for changes), trusting an entry at most ttl.
func WithCredentialCache(ttl time.Duration) func(*httpapi.Config) {
	return func(cfg *httpapi.Config) { cfg.Services.Credentials = credentialCacheOption{ttl: ttl} }
}

// credentialCacheOption marks the Config of WithCredentialCache until start builds the cache.
type credentialCacheOption struct {
	core.CredentialService
	ttl time.Duration
}

// New starts a server in development mode over a fresh database. Options adjust the
// configuration before the server starts.
func New(t testing.TB, options ...func(*httpapi.Config)) *Env {
	t.Helper()
	return start(t, pgtest.NewDatabase(t), options)
}

// Sibling starts another server process-alike (its own pool, handler and in-memory state)
// on the same database as e, as a second process behind a load balancer would be.
func (e *Env) Sibling(options ...func(*httpapi.Config)) *Env {
	e.t.Helper()
	return start(e.t, e.dsn, options)
}

func start(t testing.TB, dsn string, options []func(*httpapi.Config)) *Env {
	t.Helper()
	ctx := context.Background()
	log := &testLog{t: t}
	t.Cleanup(func() { log.mu.Lock(); log.done = true; log.mu.Unlock() })
	logger := slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg := httpapi.Config{Logger: logger, Development: true}
	for _, o := range options {
		o(&cfg)
	}
	var poolOptions []func(*pgxpool.Config)
	if cfg.Tracing != nil { // statements are spans of the requests, as in production
		poolOptions = append(poolOptions, postgres.WithTracing(cfg.Tracing))
	}
	db, err := postgres.Open(ctx, dsn, poolOptions...)
	if err != nil {
		t.Fatalf("apitest: %v", err)
	}
	t.Cleanup(db.Close)
	db.Events = httpapi.EventEncoder{}
	box, err := secretbox.New(secretbox.DevelopmentKey())
	if err != nil {
		t.Fatalf("apitest: %v", err)
	}
	logs := postgres.NewRequestLogWriter(db, logger)
	t.Cleanup(func() { _ = logs.Close(context.Background()) }) // before db.Close: cleanups run last-in first-out
	m := metrics.New()
	if err := m.RegisterPool(db.Pool.Stat); err != nil {
		t.Fatalf("apitest: %v", err)
	}
	if err := jobs.RegisterMetrics(m, db); err != nil {
		t.Fatalf("apitest: %v", err)
	}
	cfg.Ready, cfg.RequestLogs, cfg.Metrics = db.Ping, logs, m
	if cfg.InFlight == nil {
		cfg.InFlight = httpapi.NewInFlight(httpapi.DefaultQuiet)
	}
	db.Requests = cfg.InFlight
	hooks := WebhookPolicy
	hooks.Development, hooks.Tracing = cfg.Development, cfg.Tracing
	cache, _ := cfg.Services.Credentials.(credentialCacheOption)
	if cfg.Services.Organizations == nil {
		cfg.Services = postgres.NewServices(db, box, hooks)
	}
	// The job queue runs as in production, polling more often so tests see the effects of
	// retries and scheduled attempts (e.g. webhooks redelivered) promptly. Not much more often:
	// every queue of every Env polls, and at 20 ms the polls of a few Envs took most of a core
	// under the race detector.
	queue, err := jobs.New(db, jobs.Config{Logger: logger, Box: box, Webhooks: hooks, PollInterval: testPollInterval})
	if err != nil {
		t.Fatalf("apitest: %v", err)
	}
	db.Jobs = queue
	if err := queue.Start(ctx); err != nil {
		t.Fatalf("apitest: %v", err)
	}
	cacheCtx, stopCache := context.WithCancel(ctx)
	var cacheDone sync.WaitGroup
	if cache.ttl > 0 {
		credentials := postgres.NewCredentialCache(db, cache.ttl, logger)
		cfg.Services.Credentials = credentials
		cacheDone.Go(func() { credentials.Run(cacheCtx) })
		for deadline := time.Now().Add(10 * time.Second); !credentials.Listening(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("apitest: the credential cache is not listening after 10 s")
			}
		}
	}
	var stopOnce sync.Once
	stop := func() {
		stopOnce.Do(func() {
			if err := queue.Stop(context.Background()); err != nil {
				t.Errorf("apitest: stop the job queue: %v", err)
			}
			stopCache()
			cacheDone.Wait()
		})
	}
	t.Cleanup(stop)
	handler, err := httpapi.NewHandler(ctx, cfg)
	if err != nil {
		t.Fatalf("apitest: %v", err)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)

	v, err := validationRouter()
	if err != nil {
		t.Fatalf("apitest: %v", err)
	}
	e := &Env{t: t, URL: srv.URL, Pool: db.Pool, DB: db, dsn: dsn, doc: v.doc, router: v.router, Handler: handler, InFlight: cfg.InFlight, stopWorkers: stop, logs: logs}
	e.HTTP = &http.Client{Transport: &validatingTransport{env: e, next: srv.Client().Transport}}
	return e
}

// Client returns the generated SDK client authenticating with token.
func (e *Env) Client(token string) *api.ClientWithResponses {
	e.t.Helper()
	c, err := api.NewClientWithResponses(e.URL, api.WithHTTPClient(e.HTTP),
		api.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
			r.Header.Set("Authorization", "Bearer "+token)
			return nil
		}))
	if err != nil {
		e.t.Fatalf("apitest: client: %v", err)
	}
	return c
}

// Response is a received, already validated response.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a map for assertions.
func (r *Response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("response body is not a JSON object: %v: %s", err, r.Body)
	}
	return m
}

// Request describes a raw call; raw calls reach inputs the generated client cannot send.
type Request struct {
	Method, Path string
	Token        string // bearer; empty sends no Authorization header
	Body         string // sent verbatim
	ContentType  string // default application/json when Body is set
	Header       http.Header
}

// Do sends req and returns the validated response.
func (e *Env) Do(req Request) *Response {
	e.t.Helper()
	var body io.Reader
	if req.Body != "" {
		body = strings.NewReader(req.Body)
	}
	r, err := http.NewRequest(req.Method, e.URL+req.Path, body)
	if err != nil {
		e.t.Fatalf("apitest: %v", err)
	}
	for k, v := range req.Header {
		r.Header[k] = v
	}
	if req.Body != "" {
		ct := req.ContentType
		if ct == "" {
			ct = "application/json"
		}
		r.Header.Set("Content-Type", ct)
	}
	if req.Token != "" {
		r.Header.Set("Authorization", "Bearer "+req.Token)
	}
	resp, err := e.HTTP.Do(r)
	if err != nil {
		e.t.Fatalf("apitest: %s %s: %v", req.Method, req.Path, err)
	}
	defer resp.Body.Close()
	if isEventStream(resp) {
		return &Response{Status: resp.StatusCode, Header: resp.Header, Body: firstEvent(resp.Body)}
	}
	b, _ := io.ReadAll(resp.Body)
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// firstEvent reads a stream (text/event-stream) up to the end of its first event, which Do
// returns as the body: a stream has no end to read to. Tests that follow a stream open it
// with HTTP instead.
func firstEvent(stream io.Reader) []byte {
	var b []byte
	r := bufio.NewReader(stream)
	for {
		line, err := r.ReadBytes('\n')
		b = append(b, line...)
		if err != nil || bytes.HasSuffix(b, []byte("\n\n")) {
			return b
		}
	}
}

// Count returns the number of rows of a query, e.g. "SELECT count(*) FROM organizations".
func (e *Env) Count(query string, args ...any) int {
	e.t.Helper()
	var n int
	if err := e.Pool.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		e.t.Fatalf("apitest: %s: %v", query, err)
	}
	return n
}

// Exec runs a statement against the test database, e.g. to move a key's expiry into the past.
func (e *Env) Exec(sql string, args ...any) {
	e.t.Helper()
	if _, err := e.Pool.Exec(context.Background(), sql, args...); err != nil {
		e.t.Fatalf("apitest: %s: %v", sql, err)
	}
}

// validationHost is the server the validation router knows: requests to any test server are
// routed as if sent to it, so that one router serves every Env of the process.
const validationHost = "apitest.invalid"

// validation is the document and a router over its operations at validationHost.
type validation struct {
	doc    *openapi3.T
	router routers.Router
}

// validationRouter returns the validation of the process, built once (the document is shared
// with the servers and must not change).
var validationRouter = sync.OnceValues(func() (validation, error) {
	shared, err := httpapi.LoadDocument()
	if err != nil {
		return validation{}, err
	}
	doc := *shared // a shallow copy: only Servers differs
	doc.Servers = openapi3.Servers{{URL: "http://" + validationHost}}
	router, err := gorillamux.NewRouter(&doc)
	if err != nil {
		return validation{}, fmt.Errorf("router: %w", err)
	}
	return validation{doc: &doc, router: router}, nil
})

// atValidationHost returns req as sent to validationHost, for finding its route.
func atValidationHost(req *http.Request) *http.Request {
	at := *req
	u := *req.URL
	u.Host = validationHost
	at.URL = &u
	at.Host = validationHost
	return &at
}

type validatingTransport struct {
	env  *Env
	next http.RoundTripper
}

// RoundTrip sends the request and validates the response against the document.
func (v *validatingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil {
		reqBody, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	resp, err := v.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if isEventStream(resp) {
		// A stream has no end to read to: its status and headers are validated, and its
		// events are the test's to read and check as they arrive.
		v.env.validateStream(req, reqBody, resp)
		return resp, nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	v.env.validate(req, reqBody, resp, body)
	return resp, nil
}

// isEventStream tells a successful server-sent events response (text/event-stream).
func isEventStream(resp *http.Response) bool {
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return resp.StatusCode < 300 && ct == "text/event-stream"
}

// validateStream validates the status and headers of a stream, and that the operation
// documents the stream's content type; kin-openapi would read the body to its end.
func (e *Env) validateStream(req *http.Request, reqBody []byte, resp *http.Response) {
	e.t.Helper()
	where := fmt.Sprintf("%s %s -> %d", req.Method, req.URL.Path, resp.StatusCode)
	route, _, err := e.router.FindRoute(atValidationHost(req))
	if err != nil {
		e.t.Errorf("%s: a stream from no operation of openapi.yaml", where)
		return
	}
	documented := route.Operation.Responses.Status(resp.StatusCode)
	if documented == nil || documented.Value.Content.Get("text/event-stream") == nil {
		e.t.Errorf("%s: openapi.yaml documents no text/event-stream response", where)
	}
	e.validate(req, reqBody, resp, nil)
}

func (e *Env) validate(req *http.Request, reqBody []byte, resp *http.Response, body []byte) {
	e.t.Helper()
	where := fmt.Sprintf("%s %s -> %d", req.Method, req.URL.Path, resp.StatusCode)
	if resp.Header.Get("Request-Id") == "" {
		e.t.Errorf("%s: no Request-Id header", where)
	}
	if resp.StatusCode >= 400 && !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
		e.t.Errorf("%s: error response has Content-Type %q, want application/problem+json: %s", where, resp.Header.Get("Content-Type"), body)
	}
	route, params, err := e.router.FindRoute(atValidationHost(req))
	if err != nil {
		// Not an operation of the document (health endpoints, unknown paths and methods):
		// errors must still be Problems.
		if resp.StatusCode >= 400 {
			e.validateProblem(where, body)
		}
		return
	}
	req = req.Clone(req.Context())
	req.Body = io.NopCloser(bytes.NewReader(reqBody))
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 resp.StatusCode,
		Header:                 resp.Header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		// A stream's body is not read: its status and headers are validated.
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true, ExcludeResponseBody: isEventStream(resp)},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		e.t.Errorf("%s: response does not match openapi.yaml: %v\nbody: %s", where, err, body)
	}
}

func (e *Env) validateProblem(where string, body []byte) {
	e.t.Helper()
	var p any
	if err := json.Unmarshal(body, &p); err != nil {
		e.t.Errorf("%s: error body is not JSON: %s", where, body)
		return
	}
	if err := e.doc.Components.Schemas["Problem"].Value.VisitJSON(p); err != nil {
		e.t.Errorf("%s: error body is not a Problem: %v: %s", where, err, body)
	}
}

// testLog shows the server's warnings and errors in the output of the test that caused them.
type testLog struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done {
		l.t.Logf("server: %s", bytes.TrimSpace(p))
	}
	return len(p), nil
}

// FlushRequestLogs waits until the request logs of every request answered so far are
// stored: they are written asynchronously, in batches.
func (e *Env) FlushRequestLogs() {
	e.t.Helper()
	if err := e.logs.Flush(context.Background()); err != nil {
		e.t.Fatalf("apitest: flush request logs: %v", err)
	}
}
