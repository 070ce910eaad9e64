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
	APIKeyID       *uuid.UUID
	Operation      *string // the operationId the contract matched
	IdempotencyKey *string // the Idempotency-Key header sent
	// Request and Response are the bodies, redacted and bounded (NewRequestLogBody); nil
	// when none were captured.
	Request, Response *RequestLogBody
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
	l.APIKeyID = p.APIKeyID
	if route != "" {
		l.Route = &route
	}
	if errorCode != "" {
		l.ErrorCode = &errorCode
	}
	return l
}

// SetIdempotencyKey records the Idempotency-Key header k sent with the request, when it is
// one the service could have honoured (1..255 characters of text).
func (l *RequestLog) SetIdempotencyKey(k string) {
	if k != "" && len(k) <= 255 && storable(k) == k {
		l.IdempotencyKey = &k
	}
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
	APIKeyID       *uuid.UUID
	Operation      *string // an operationId
	IdempotencyKey *string
	Cursor         *string
	Limit          int
}

// RequestLogService lists request logs. Recording them is postgres.RequestLogWriter's job,
// off the request path.
type RequestLogService interface {
	// ListRequestLogs returns a page of logs, newest first, and the cursor of the next page.
	// An organization principal naming another organization gets EForbidden.
	ListRequestLogs(ctx context.Context, f RequestLogFilter) ([]*RequestLog, *string, error)
	// GetRequestLog returns one log with its bodies: of the caller's organization, or of any
	// for the operator. Another organization's log is ENotFound, as an unknown id.
	GetRequestLog(ctx context.Context, id uuid.UUID) (*RequestLog, error)
}

// Bodies of logged requests and responses are captured up to RequestLogBodyCapture bytes,
// the most that is redacted (a larger body is only described), and stored up to
// RequestLogBodyLimit bytes of their redacted text.
const (
	RequestLogBodyCapture = 64 << 10
	RequestLogBodyLimit   = 16 << 10
)

// Why a captured body was not stored (RequestLogBody.Omitted).
const (
	BodyUnsupportedContentType = "unsupported_content_type" // not JSON or a form: cannot be redacted
	BodyTooLarge               = "too_large"                // more than RequestLogBodyCapture bytes
	BodyInvalid                = "invalid"                  // JSON or a form that does not parse
)

// RequestLogBody is one body of a logged request or response as it is stored: redacted by
// RedactBody, at most RequestLogBodyLimit bytes, or only described.
type RequestLogBody struct {
	ContentType *string
	Size        int64   // bytes the body had as it travelled
	Body        *string // nil when empty or omitted
	Truncated   bool    // Body is the first RequestLogBodyLimit bytes of the redacted body
	Omitted     *string // why Body is nil although the body was not empty
}

// NewRequestLogBody makes the stored form of a body of size bytes whose first bytes,
// captured, were seen (all of them unless size exceeds RequestLogBodyCapture). Secrets never
// reach the result: a body that cannot be redacted is described, not kept.
func NewRequestLogBody(contentType string, captured []byte, size int64) RequestLogBody {
	b := RequestLogBody{Size: size}
	if contentType != "" {
		ct := truncateUTF8(storable(contentType), 255)
		b.ContentType = &ct
	}
	omit := func(why string) RequestLogBody { b.Omitted = &why; return b }
	switch {
	case size == 0:
		return b
	case size > int64(len(captured)) || len(captured) > RequestLogBodyCapture:
		return omit(BodyTooLarge)
	case !Redactable(contentType):
		return omit(BodyUnsupportedContentType)
	}
	// One byte past the limit tells that the text was cut.
	redacted, ok := redactBody(contentType, captured, RequestLogBodyLimit+1)
	if !ok {
		return omit(BodyInvalid)
	}
	text := storable(redacted)
	if len(text) > RequestLogBodyLimit {
		text, b.Truncated = truncateUTF8(text, RequestLogBodyLimit), true
	}
	if text != "" {
		b.Body = &text
	}
	return b
}

// truncateUTF8 is the longest prefix of s of at most n bytes that ends on a whole character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// storable makes a client-chosen path storable as text: a percent-encoded NUL or invalid
// UTF-8 byte would otherwise fail the whole batch of logs it is written with.
func storable(s string) string {
	if utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}
