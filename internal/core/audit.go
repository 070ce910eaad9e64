package core

import (
	"context"

	"github.com/google/uuid"
)

// AuditEntry is one state change to append to the audit trail. The actor and the request
// id come from the context of the change.
type AuditEntry struct {
	OrganizationID *uuid.UUID // the tenant the resource belongs to; nil for provider-wide changes
	Action         string     // "<resource>.<verb>", e.g. "subscription.suspended"
	ResourceType   string     // e.g. "subscription"
	ResourceID     string
	Before, After  any    // summaries of the resource around the change (JSON-encoded); nil when none
	Reason         string // optional, e.g. the reason given to suspend; kept in After as "reason"
}

type requestIDKey struct{}

// WithRequestID returns a context carrying the id of the request being served, so audit
// records and logs can name it.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestIDFrom returns the request id of ctx, or "" outside a request.
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}
