package postgres

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// Request logs are written in batches off the request path. The queue bounds memory: about
// 300 bytes an entry, and the captured bodies (up to 2 × core.RequestLogBodyLimit an entry)
// at most requestLogBodyBudget bytes in all. When the database falls behind, entries past the
// budget are queued without their bodies, and entries past the queue are dropped; both are
// counted and logged rather than slowing requests down.
const (
	requestLogQueue      = 10_000
	requestLogMaxBatch   = 1_000
	requestLogLinger     = 50 * time.Millisecond
	requestLogBodyBudget = 32 << 20
)

// RequestLogWriter records request logs asynchronously: Record never blocks, and Close
// writes everything recorded before it, so a graceful shutdown loses nothing.
type RequestLogWriter struct {
	batcher *batcher[requestLogRows]
	logger  *slog.Logger
	dropped atomic.Int64
	// bodyBytes is what the queued entries' bodies hold; bodyBudget its bound.
	bodyBytes  atomic.Int64
	bodyBudget int64
	shed       atomic.Int64 // entries queued without their bodies since the last report
}

// NewRequestLogWriter starts a writer over d; Close stops it.
func NewRequestLogWriter(d *DB, logger *slog.Logger) *RequestLogWriter {
	return newRequestLogWriter(d, logger, requestLogBodyBudget)
}

func newRequestLogWriter(d *DB, logger *slog.Logger, bodyBudget int64) *RequestLogWriter {
	w := &RequestLogWriter{logger: logger, bodyBudget: bodyBudget}
	w.batcher = newBatcher(requestLogQueue, requestLogMaxBatch, requestLogLinger,
		func(ctx context.Context, rows []requestLogRows) error {
			defer w.release(rows)
			w.reportLosses()
			if err := writeRequestLogs(ctx, d, rows); err != nil {
				w.logger.Error("writing request logs", "count", len(rows), "error", err)
				return err
			}
			return nil
		})
	return w
}

// requestLogRows is one log to write: its row and, when they were captured, its bodies'.
type requestLogRows struct {
	log    dbq.RequestLogInsertBatchParams
	bodies *dbq.RequestLogBodiesInsertBatchParams
}

// bodySize is the memory the row's bodies hold.
func (r requestLogRows) bodySize() int64 {
	if r.bodies == nil {
		return 0
	}
	return int64(textLen(r.bodies.RequestBody) + textLen(r.bodies.ResponseBody))
}

func textLen(s *string) int {
	if s == nil {
		return 0
	}
	return len(*s)
}

// writeRequestLogs copies a batch of logs and their bodies in one transaction, so a log is
// never shown without the bodies it was written with.
func writeRequestLogs(ctx context.Context, d *DB, rows []requestLogRows) error {
	logs := make([]dbq.RequestLogInsertBatchParams, len(rows))
	var bodies []dbq.RequestLogBodiesInsertBatchParams
	for i, r := range rows {
		logs[i] = r.log
		if r.bodies != nil {
			bodies = append(bodies, *r.bodies)
		}
	}
	if len(bodies) == 0 {
		_, err := dbq.New(d.Pool).RequestLogInsertBatch(ctx, logs)
		return err
	}
	return pgx.BeginFunc(ctx, d.Pool, func(tx pgx.Tx) error {
		q := dbq.New(tx)
		if _, err := q.RequestLogInsertBatch(ctx, logs); err != nil {
			return err
		}
		_, err := q.RequestLogBodiesInsertBatch(ctx, bodies)
		return err
	})
}

// Record queues l for writing, without its bodies when the queued bodies already hold the
// budget.
func (w *RequestLogWriter) Record(l core.RequestLog) {
	row := requestLogRow(l)
	if size := row.bodySize(); size > 0 {
		if w.bodyBytes.Add(size) > w.bodyBudget {
			w.bodyBytes.Add(-size)
			row.bodies = nil
			w.shed.Add(1)
		}
	}
	if !w.batcher.offer(row) {
		w.release([]requestLogRows{row})
		w.dropped.Add(1)
	}
}

// release returns the budget the bodies of rows held, once they are written or dropped.
func (w *RequestLogWriter) release(rows []requestLogRows) {
	var size int64
	for _, r := range rows {
		size += r.bodySize()
	}
	w.bodyBytes.Add(-size)
}

// reportLosses logs what the queue's bounds cost since the last report.
func (w *RequestLogWriter) reportLosses() {
	if n := w.dropped.Swap(0); n > 0 {
		w.logger.Warn("request logs dropped: the queue was full", "dropped", n)
	}
	if n := w.shed.Swap(0); n > 0 {
		w.logger.Warn("request logs queued without their bodies: the queued bodies were at their memory budget",
			"logs", n, "budget_bytes", w.bodyBudget)
	}
}

// Flush waits until every log recorded before it is written.
func (w *RequestLogWriter) Flush(ctx context.Context) error { return w.batcher.flush(ctx) }

// Close writes every queued log and stops the writer. Call it after the HTTP server has
// drained, so no request records after it.
func (w *RequestLogWriter) Close(ctx context.Context) error { return w.batcher.close(ctx) }

func requestLogRow(l core.RequestLog) requestLogRows {
	id, org := uuid.Must(uuid.NewV7()), storedOrganization(l.OrganizationID) // the operator's own requests: uuid.Nil
	rows := requestLogRows{log: dbq.RequestLogInsertBatchParams{
		ID:             id,
		OrganizationID: org,
		RequestID:      l.RequestID,
		OccurredAt:     l.OccurredAt,
		PrincipalType:  l.PrincipalType,
		KeyPrefix:      l.KeyPrefix,
		Method:         l.Method,
		Path:           l.Path,
		Route:          l.Route,
		Status:         int16(l.Status),
		LatencyMs:      l.Latency.Milliseconds(),
		ErrorCode:      l.ErrorCode,
		ApiKeyID:       l.APIKeyID,
		Operation:      l.Operation,
		IdempotencyKey: l.IdempotencyKey,
	}}
	if l.Request != nil && l.Response != nil {
		rows.bodies = &dbq.RequestLogBodiesInsertBatchParams{
			OrganizationID: org, ID: id,
			RequestContentType: l.Request.ContentType, RequestSize: l.Request.Size, RequestBody: l.Request.Body,
			RequestTruncated: l.Request.Truncated, RequestOmitted: l.Request.Omitted,
			ResponseContentType: l.Response.ContentType, ResponseSize: l.Response.Size, ResponseBody: l.Response.Body,
			ResponseTruncated: l.Response.Truncated, ResponseOmitted: l.Response.Omitted,
		}
	}
	return rows
}

// RequestLogService implements core.RequestLogService.
type RequestLogService struct{ db *DB }

var _ core.RequestLogService = (*RequestLogService)(nil)

// NewRequestLogService returns the request log service over d.
func NewRequestLogService(d *DB) *RequestLogService { return &RequestLogService{db: d} }

// statusClasses maps a status class to its range of statuses.
var statusClasses = map[string][2]int16{"2xx": {200, 299}, "3xx": {300, 399}, "4xx": {400, 499}, "5xx": {500, 599}}

// ListRequestLogs implements core.RequestLogService.
func (s *RequestLogService) ListRequestLogs(ctx context.Context, f core.RequestLogFilter) ([]*core.RequestLog, *string, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, nil, err
	}
	params := dbq.RequestLogListParams{
		OrganizationID: p.OrganizationID, // uuid.Nil for the operator: its own requests
		Method:         f.Method,
		PathPrefix:     f.PathPrefix,
		Since:          f.Since,
		Until:          f.Until,
		ApiKeyID:       f.APIKeyID,
		Operation:      f.Operation,
		IdempotencyKey: f.IdempotencyKey,
		RowLimit:       int32(f.Limit) + 1,
	}
	if f.OrganizationID != nil {
		if err := p.ActsFor(*f.OrganizationID, "organization_id"); err != nil {
			return nil, nil, err
		}
		params.OrganizationID = *f.OrganizationID
	}
	if f.StatusClass != nil {
		r := statusClasses[*f.StatusClass]
		params.StatusMin, params.StatusMax = &r[0], &r[1]
	}
	after, err := afterCursor(f.Cursor)
	if err != nil {
		return nil, nil, err
	}
	filtered := f.StatusClass != nil || f.Method != nil || f.PathPrefix != nil || f.Since != nil || f.Until != nil ||
		f.APIKeyID != nil || f.Operation != nil || f.IdempotencyKey != nil
	var walk keyRange
	var rows []dbq.RequestLog
	err = s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		if err := q.KeysetListPlanSettings(ctx); err != nil {
			return err
		}
		if walk, err = pageRange(after, filtered, func(before uuid.UUID, skip int32) (uuid.UUID, error) {
			return q.RequestLogScanFloor(ctx, dbq.RequestLogScanFloorParams{OrganizationID: params.OrganizationID, Before: before, Skip: skip})
		}); err != nil {
			return err
		}
		params.Before, params.Floor = walk.before, walk.floor
		rows, err = q.RequestLogList(ctx, params)
		return err
	})
	if err != nil {
		return nil, nil, err // WithTx translates
	}
	logs := make([]*core.RequestLog, len(rows))
	for i, r := range rows {
		logs[i] = requestLogFromRow(r)
	}
	logs, next := windowPage(logs, f.Limit, func(l *core.RequestLog) uuid.UUID { return l.ID }, walk)
	return logs, next, nil
}

// GetRequestLog implements core.RequestLogService.
func (s *RequestLogService) GetRequestLog(ctx context.Context, id uuid.UUID) (*core.RequestLog, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	q := s.db.queries(ctx)
	var row dbq.RequestLog
	if p.IsOperator() {
		row, err = q.RequestLogGetAnyOrganization(ctx, id)
	} else {
		row, err = q.RequestLogGet(ctx, dbq.RequestLogGetParams{OrganizationID: p.OrganizationID, ID: id})
	}
	if err != nil {
		return nil, translate(err)
	}
	l := requestLogFromRow(row)
	bodies, err := q.RequestLogBodiesGet(ctx, dbq.RequestLogBodiesGetParams{OrganizationID: row.OrganizationID, ID: id})
	switch {
	case errors.Is(err, pgx.ErrNoRows): // none captured
	case err != nil:
		return nil, translate(err)
	default:
		l.Request = &core.RequestLogBody{ContentType: bodies.RequestContentType, Size: bodies.RequestSize,
			Body: bodies.RequestBody, Truncated: bodies.RequestTruncated, Omitted: bodies.RequestOmitted}
		l.Response = &core.RequestLogBody{ContentType: bodies.ResponseContentType, Size: bodies.ResponseSize,
			Body: bodies.ResponseBody, Truncated: bodies.ResponseTruncated, Omitted: bodies.ResponseOmitted}
	}
	return l, nil
}

func requestLogFromRow(r dbq.RequestLog) *core.RequestLog {
	l := &core.RequestLog{
		ID: r.ID, RequestID: r.RequestID, OccurredAt: r.OccurredAt, PrincipalType: r.PrincipalType,
		KeyPrefix: r.KeyPrefix, Method: r.Method, Path: r.Path, Route: r.Route,
		Status: int(r.Status), Latency: time.Duration(r.LatencyMs) * time.Millisecond, ErrorCode: r.ErrorCode,
		OrganizationID: shownOrganization(r.OrganizationID),
		APIKeyID:       r.ApiKeyID, Operation: r.Operation, IdempotencyKey: r.IdempotencyKey,
	}
	return l
}

// storedOrganization is the organization_id under which request logs and audit events of
// organization org are stored: rows of no organization (the operator's own requests,
// provider-wide events) under the nil UUID, since the column is part of their key.
func storedOrganization(org *uuid.UUID) uuid.UUID {
	if org == nil {
		return uuid.Nil
	}
	return *org
}

// shownOrganization reverses storedOrganization.
func shownOrganization(org uuid.UUID) *uuid.UUID {
	if org == uuid.Nil {
		return nil
	}
	return &org
}
