package postgres

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// Request logs are written in batches off the request path. The queue bounds memory
// (about 300 bytes an entry); when the database falls that far behind, new entries are
// dropped and counted rather than slowing requests down.
const (
	requestLogQueue    = 10_000
	requestLogMaxBatch = 1_000
	requestLogLinger   = 50 * time.Millisecond
)

// RequestLogWriter records request logs asynchronously: Record never blocks, and Close
// writes everything recorded before it, so a graceful shutdown loses nothing.
type RequestLogWriter struct {
	batcher *batcher[dbq.RequestLogInsertBatchParams]
	logger  *slog.Logger
	dropped atomic.Int64
}

// NewRequestLogWriter starts a writer over d; Close stops it.
func NewRequestLogWriter(d *DB, logger *slog.Logger) *RequestLogWriter {
	w := &RequestLogWriter{logger: logger}
	w.batcher = newBatcher(requestLogQueue, requestLogMaxBatch, requestLogLinger,
		func(ctx context.Context, rows []dbq.RequestLogInsertBatchParams) error {
			if n := w.dropped.Swap(0); n > 0 {
				w.logger.Warn("request logs dropped: the queue was full", "dropped", n)
			}
			if _, err := dbq.New(d.Pool).RequestLogInsertBatch(ctx, rows); err != nil {
				w.logger.Error("writing request logs", "count", len(rows), "error", err)
				return err
			}
			return nil
		})
	return w
}

// Record queues l for writing.
func (w *RequestLogWriter) Record(l core.RequestLog) {
	if !w.batcher.offer(requestLogRow(l)) {
		w.dropped.Add(1)
	}
}

// Flush waits until every log recorded before it is written.
func (w *RequestLogWriter) Flush(ctx context.Context) error { return w.batcher.flush(ctx) }

// Close writes every queued log and stops the writer. Call it after the HTTP server has
// drained, so no request records after it.
func (w *RequestLogWriter) Close(ctx context.Context) error { return w.batcher.close(ctx) }

func requestLogRow(l core.RequestLog) dbq.RequestLogInsertBatchParams {
	return dbq.RequestLogInsertBatchParams{
		ID:             uuid.Must(uuid.NewV7()),
		OrganizationID: storedOrganization(l.OrganizationID), // the operator's own requests: uuid.Nil
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
	}
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
	q := s.db.queries(ctx)
	filtered := f.StatusClass != nil || f.Method != nil || f.PathPrefix != nil || f.Since != nil || f.Until != nil
	walk, err := pageRange(after, filtered, func(before uuid.UUID, skip int32) (uuid.UUID, error) {
		return q.RequestLogScanFloor(ctx, dbq.RequestLogScanFloorParams{OrganizationID: params.OrganizationID, Before: before, Skip: skip})
	})
	if err != nil {
		return nil, nil, err
	}
	params.Before, params.Floor = walk.before, walk.floor
	rows, err := q.RequestLogList(ctx, params)
	if err != nil {
		return nil, nil, translate(err)
	}
	logs := make([]*core.RequestLog, len(rows))
	for i, r := range rows {
		logs[i] = requestLogFromRow(r)
	}
	logs, next := windowPage(logs, f.Limit, func(l *core.RequestLog) uuid.UUID { return l.ID }, walk)
	return logs, next, nil
}

func requestLogFromRow(r dbq.RequestLog) *core.RequestLog {
	l := &core.RequestLog{
		ID: r.ID, RequestID: r.RequestID, OccurredAt: r.OccurredAt, PrincipalType: r.PrincipalType,
		KeyPrefix: r.KeyPrefix, Method: r.Method, Path: r.Path, Route: r.Route,
		Status: int(r.Status), Latency: time.Duration(r.LatencyMs) * time.Millisecond, ErrorCode: r.ErrorCode,
		OrganizationID: shownOrganization(r.OrganizationID),
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
