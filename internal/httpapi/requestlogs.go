package httpapi

import (
	"context"
	"net/http"
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

// recordRequest hands the finished request to sink when a principal was authenticated.
func recordRequest(sink RequestLogSink, info *requestInfo, r *http.Request, status int, start time.Time) {
	if sink == nil || info.principal == nil {
		return
	}
	if status == 0 { // nothing written: net/http answers 200
		status = http.StatusOK
	}
	sink.Record(core.NewRequestLog(info.principal, core.RequestIDFrom(r.Context()), r.Method, r.URL.Path,
		info.route, status, start, time.Since(start), info.errorCode))
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
