package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"regexp"
	"runtime/debug"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/metrics"
)

// requestInfo is shared by the layers of one request: inner layers fill it in for the access
// log of the outermost one, and handlers read the raw headers strict requests do not carry.
type requestInfo struct {
	route      string      // path template of the operation, once the contract found it
	header     http.Header // the request headers
	remoteAddr string      // the peer address: throttling of failed authentication, IP rules
	// principal is the authenticated caller, once the contract knows it; errorCode the code
	// of the problem answered, if any. Both feed the request log.
	principal *core.Principal
	errorCode string
	// log is the server's logger; logger adds the request id when something is logged.
	log *slog.Logger
	// connection is the request's context before the request timeout: it ends when the
	// client goes away. Streams outlive the timeout and end with it instead.
	connection context.Context
	// gate and op are the contract and operation that admitted the request, for a stream
	// to check its credential again (recheckCredential).
	gate *contract
	op   *operation
	// inFlight counts the request among the API's requests in flight until leaveInFlight.
	inFlight *InFlight
}

// noteRequest records on the request's shared info what the request log needs to know.
func noteRequest(ctx context.Context, note func(*requestInfo)) {
	if info, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		note(info)
	}
}

// setRoute names the route template of the request being served, for logs and metrics.
func setRoute(ctx context.Context, template string) {
	if info, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		info.route = template
	}
}

// remoteAddr returns the peer address of the request being served.
func remoteAddr(ctx context.Context) string {
	if info, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		return info.remoteAddr
	}
	return ""
}

// requestHeader returns the headers of the request being served.
func requestHeader(ctx context.Context) http.Header {
	if info, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		return info.header
	}
	return http.Header{}
}

type requestInfoKey struct{}

// requestTimeout bounds the work of one request: past it, database calls fail and the
// client gets 503 unavailable (retryable) rather than waiting on a stuck dependency.
const requestTimeout = 30 * time.Second

// A client may send its own Request-Id to correlate logs. It is never adopted as the
// request's id (a client could name another tenant's request, and the id would then point
// at two requests): the access log records it beside the server's, when it has this shape.
var clientRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{8,128}$`)

// withRequestContext gives each request its id (echoed in the Request-Id header of every
// response), a logger carrying it, panic recovery, an access log line and its metrics, and a
// request log for sink once a principal was authenticated; it counts the request in flight
// (nil: uncounted) while it is served.
func withRequestContext(base *slog.Logger, m *metrics.Metrics, sink RequestLogSink, tracer trace.Tracer, inFlight *InFlight, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := "req_" + uuid.Must(uuid.NewV7()).String()
		clientID := r.Header.Get("Request-Id")
		if !clientRequestID.MatchString(clientID) {
			clientID = ""
		}
		ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
		defer cancel()
		ctx = core.WithRequestID(ctx, id)
		inFlight.enter()
		info := &requestInfo{header: r.Header, remoteAddr: r.RemoteAddr, log: base, connection: r.Context(), inFlight: inFlight}
		defer info.leaveInFlight()
		ctx = context.WithValue(ctx, requestInfoKey{}, info)
		// chi's routers below find their route context here: without one, the first would
		// copy the request once more to carry it.
		rctx := routeContexts.Get().(*chi.Context)
		rctx.Reset()
		defer routeContexts.Put(rctx)
		ctx = context.WithValue(ctx, chi.RouteCtxKey, rctx)
		var span trace.Span
		if tracer != nil {
			ctx, span = startRequestSpan(ctx, tracer, r, id)
		}
		r = r.WithContext(ctx)
		rec := &responseRecorder{ResponseWriter: w, requestID: id}
		var reqBody *bodyCapture
		if sink != nil { // the request log keeps the bodies
			reqBody, rec.body = captureRequestBody(r), newBodyCapture()
		}
		rec.Header().Set("Request-Id", id)

		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				logger(ctx).Error("panic", "panic", p, "stack", string(debug.Stack()))
				if !rec.wroteHeader {
					writeProblem(rec, r, core.Errorf(core.EInternal, "An unexpected error occurred; it has been logged."))
				}
			}
			elapsed := time.Since(start)
			status := rec.status
			if status == 0 { // the handler wrote nothing: net/http answers 200
				status = http.StatusOK
			}
			if span != nil {
				endRequestSpan(span, r.Method, info.route, status)
			}
			m.ObserveRequest(r.Method, info.route, status, elapsed)
			accessLog(ctx, base.Handler(), r, info.route, status, rec.bytes, elapsed, id, clientID)
			recordRequest(sink, info, r, rec, reqBody, start)
			reqBody.release()
			rec.body.release()
		}()
		next.ServeHTTP(rec, r)
	})
}

// startRequestSpan starts the server span of request r with id: a child of the trace the
// client's traceparent names, if any. It carries the method, the request id and the path
// (this API's paths carry ids, never secrets), never a header or the query.
func startRequestSpan(ctx context.Context, tracer trace.Tracer, r *http.Request, id string) (context.Context, trace.Span) {
	ctx = propagation.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(r.Header))
	return tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
		semconv.HTTPRequestMethodKey.String(r.Method),
		semconv.URLPath(r.URL.Path),
		attribute.String("request_id", id)))
}

// endRequestSpan names the span after the route template the contract found ("GET
// /v1/events/{id}"; the method alone for a path of no operation) and records the status.
func endRequestSpan(span trace.Span, method, route string, status int) {
	if route != "" {
		span.SetName(method + " " + route)
		span.SetAttributes(semconv.HTTPRoute(route))
	}
	span.SetAttributes(semconv.HTTPResponseStatusCode(status))
	if status >= 500 {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
	span.End()
}

// accessLog writes the request's access line to h. It hands h the record itself rather than
// calling the logger, which would walk the stack for a source location this line never
// shows (2 µs a request, docs/performance.md).
// clientID is the Request-Id the client sent, if any.
func accessLog(ctx context.Context, h slog.Handler, r *http.Request, route string, status int, bytes int64, elapsed time.Duration, id, clientID string) {
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	line := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
	// The path only, never the query: nothing secret travels in this API's paths.
	line.AddAttrs(
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.String("route", route),
		slog.Int("status", status),
		slog.Int64("bytes", bytes),
		slog.Duration("duration", elapsed),
		slog.String("request_id", id))
	if clientID != "" {
		line.AddAttrs(slog.String("client_request_id", clientID))
	}
	_ = h.Handle(ctx, line) // as Logger.Log: a handler's error has nowhere to go
}

// responseRecorder captures the status for the access log. It also restores the Request-Id
// header before the status line is written: generated strict responses declare Request-Id
// and set it from a field handlers leave empty, and the id is the middleware's to give.
type responseRecorder struct {
	http.ResponseWriter
	requestID   string
	status      int
	bytes       int64
	wroteHeader bool
	body        *bodyCapture // what was written, for the request log; nil when none is kept
}

func (r *responseRecorder) WriteHeader(status int) {
	if r.wroteHeader {
		return
	}
	r.wroteHeader = true
	r.status = status
	r.Header().Set("Request-Id", r.requestID)
	r.ResponseWriter.WriteHeader(status)
}

func (r *responseRecorder) Write(b []byte) (int, error) {
	if !r.wroteHeader {
		r.WriteHeader(http.StatusOK)
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	if r.body != nil {
		r.body.keep(b[:n])
	}
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *responseRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
