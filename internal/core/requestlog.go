package core

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// RequestLog is one authenticated request as its caller can later review it.
type RequestLog struct {
	ID             uuid.UUID
	RequestID      string
	OccurredAt     time.Time // when the request arrived
	PrincipalType  string    // Principal.ActorType
	OrganizationID *uuid.UUID
	KeyPrefix      *string
	Method         string
	Path           string
	Route          *string // the operation's path template
	Status         int
	Latency        time.Duration
	ErrorCode      *string // the problem code of an error response
}

// NewRequestLog describes a finished request of principal p.
func NewRequestLog(p *Principal, requestID, method, path, route string, status int, start time.Time, latency time.Duration, errorCode string) RequestLog {
	l := RequestLog{
		RequestID: requestID, OccurredAt: start, PrincipalType: p.ActorType(),
		Method: method, Path: storable(path), Status: status, Latency: latency,
	}
	if !p.IsOperator() {
		id := p.OrganizationID
		l.OrganizationID = &id
	}
	if p.KeyPrefix != "" {
		l.KeyPrefix = &p.KeyPrefix
	}
	if route != "" {
		l.Route = &route
	}
	if errorCode != "" {
		l.ErrorCode = &errorCode
	}
	return l
}

// RequestLogFilter selects logs for RequestLogService.ListRequestLogs.
type RequestLogFilter struct {
	// OrganizationID names the organization whose logs to list. nil: the caller's own
	// requests (for the operator, the operator's own).
	OrganizationID *uuid.UUID
	StatusClass    *string // "2xx" … "5xx"
	Method         *string
	PathPrefix     *string
	Since, Until   *time.Time
	Cursor         *string
	Limit          int
}

// RequestLogService lists request logs. Recording them is postgres.RequestLogWriter's job,
// off the request path.
type RequestLogService interface {
	// ListRequestLogs returns a page of logs, newest first, and the cursor of the next page.
	// An organization principal naming another organization gets EForbidden.
	ListRequestLogs(ctx context.Context, f RequestLogFilter) ([]*RequestLog, *string, error)
}

// storable makes a client-chosen path storable as text: a percent-encoded NUL or invalid
// UTF-8 byte would otherwise fail the whole batch of logs it is written with.
func storable(s string) string {
	if utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}
