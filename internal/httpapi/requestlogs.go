package httpapi

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/core"
)

// RequestLogSink receives a log of every request that got past authentication. Record is
// called on the request path once the response is written, so it must not block;
// postgres.RequestLogWriter queues and writes in batches.
type RequestLogSink interface {
	Record(core.RequestLog)
}

// recordRequest hands the finished request to sink when a principal was authenticated, with
// the operation, the Idempotency-Key and both bodies (redacted and bounded: never a header).
// reqBody is nil when the request body was not captured.
func recordRequest(sink RequestLogSink, info *requestInfo, r *http.Request, rec *responseRecorder, reqBody *bodyCapture, start time.Time) {
	if sink == nil || info.principal == nil {
		return
	}
	status := rec.status
	if status == 0 { // nothing written: net/http answers 200
		status = http.StatusOK
	}
	l := core.NewRequestLog(info.principal, core.RequestIDFrom(r.Context()), r.Method, r.URL.Path,
		info.route, status, start, time.Since(start), info.errorCode)
	if info.op != nil && info.op.route.Operation.OperationID != "" {
		l.Operation = &info.op.route.Operation.OperationID
	}
	l.SetIdempotencyKey(r.Header.Get("Idempotency-Key"))
	if reqBody != nil && rec.body != nil {
		request := reqBody.stored(r.Header.Get("Content-Type"))
		response := rec.body.stored(rec.Header().Get("Content-Type"))
		l.Request, l.Response = &request, &response
	}
	sink.Record(l)
}

// bodyCapture keeps the first core.RequestLogBodyCapture bytes of a body that pass through
// it, and counts them all.
//
// Captures are kept between requests (bodyCaptures): a request's two are taken when it
// starts and given back once its log is made (recordRequest), which holds nothing of them —
// the log's bodies are redacted copies. Nothing writes into them in between but the request's
// handler, which, as net/http requires, neither writes its response nor reads its body once
// it has returned: the request's deadline ends its work, it does not abandon a running
// handler.
type bodyCapture struct {
	kept []byte
	size int64
}

// bodyCaptures keeps captures between requests; each keeps at most
// core.RequestLogBodyCapture bytes, so what the pool holds is bounded.
var bodyCaptures = sync.Pool{New: func() any { return new(bodyCapture) }}

func newBodyCapture() *bodyCapture {
	c := bodyCaptures.Get().(*bodyCapture)
	c.kept, c.size = c.kept[:0], 0
	return c
}

// release gives c back for another request; c is not used after it.
func (c *bodyCapture) release() {
	if c != nil {
		bodyCaptures.Put(c)
	}
}

func (c *bodyCapture) keep(p []byte) {
	c.size += int64(len(p))
	if room := core.RequestLogBodyCapture - len(c.kept); room > 0 {
		c.kept = append(c.kept, p[:min(room, len(p))]...)
	}
}

// stored is the body as its log stores it: redacted and bounded.
func (c *bodyCapture) stored(contentType string) core.RequestLogBody {
	return core.NewRequestLogBody(contentType, c.kept, c.size)
}

// capturedBody reads a request body through a bodyCapture.
type capturedBody struct {
	io.ReadCloser
	capture *bodyCapture
}

func (b capturedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.capture.keep(p[:n])
	return n, err
}

// captureRequestBody makes r's body, as the handlers read it, also kept in the returned capture.
func captureRequestBody(r *http.Request) *bodyCapture {
	c := newBodyCapture()
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = capturedBody{ReadCloser: r.Body, capture: c}
	}
	return c
}

// GetRequestLog implements GET /v1/request-logs/{id}.
func (s *Server) GetRequestLog(ctx context.Context, req api.GetRequestLogRequestObject) (api.GetRequestLogResponseObject, error) {
	l, err := s.cfg.Services.RequestLogs.GetRequestLog(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.GetRequestLog200JSONResponse{Body: api.RequestLogDetail{
		Log:            toAPIRequestLog(l),
		Operation:      nullableFrom(l.Operation),
		ApiKeyId:       nullableFrom(l.APIKeyID),
		IdempotencyKey: nullableFrom(l.IdempotencyKey),
		Request:        nullableFrom(toAPIRequestLogBody(l.Request)),
		Response:       nullableFrom(toAPIRequestLogBody(l.Response)),
	}}, nil
}

func toAPIRequestLogBody(b *core.RequestLogBody) *api.RequestLogBody {
	if b == nil {
		return nil
	}
	return &api.RequestLogBody{
		ContentType: nullableFrom(b.ContentType),
		Size:        b.Size,
		Body:        nullableFrom(b.Body),
		Truncated:   b.Truncated,
		Omitted:     nullableFrom((*api.RequestLogBodyOmitted)(b.Omitted)),
	}
}

// ListRequestLogs implements GET /v1/request-logs.
func (s *Server) ListRequestLogs(ctx context.Context, req api.ListRequestLogsRequestObject) (api.ListRequestLogsResponseObject, error) {
	p := req.Params
	org, err := organizationParam(ctx, p.OrganizationId)
	if err != nil {
		return nil, err
	}
	logs, next, err := s.cfg.Services.RequestLogs.ListRequestLogs(ctx, core.RequestLogFilter{
		OrganizationID: org,
		StatusClass:    enumPtr(p.StatusClass),
		Method:         enumPtr(p.Method),
		PathPrefix:     p.Path,
		Since:          p.Since,
		Until:          p.Until,
		APIKeyID:       p.ApiKeyId,
		Operation:      p.Operation,
		IdempotencyKey: p.IdempotencyKey,
		Cursor:         p.Cursor,
		Limit:          valueOr(p.Limit, defaultLimit),
	})
	if err != nil {
		return nil, err
	}
	items := make([]api.RequestLog, len(logs))
	for i, l := range logs {
		items[i] = toAPIRequestLog(l)
	}
	return api.ListRequestLogs200JSONResponse{Body: api.RequestLogList{Items: items, NextCursor: nullableFrom(next)}}, nil
}

func toAPIRequestLog(l *core.RequestLog) api.RequestLog {
	var org *string
	if l.OrganizationID != nil {
		s := l.OrganizationID.String()
		org = &s
	}
	return api.RequestLog{
		Id:             l.ID,
		RequestId:      l.RequestID,
		OccurredAt:     l.OccurredAt,
		PrincipalType:  api.PrincipalType(l.PrincipalType),
		OrganizationId: nullableFrom(org),
		KeyPrefix:      nullableFrom(l.KeyPrefix),
		Method:         api.HttpMethod(l.Method),
		Path:           l.Path,
		Route:          nullableFrom(l.Route),
		Status:         l.Status,
		LatencyMs:      l.Latency.Milliseconds(),
		ErrorCode:      nullableFrom(l.ErrorCode),
	}
}
