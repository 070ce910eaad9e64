package core

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// AuditEvent is one recorded state change.
type AuditEvent struct {
	ID             uuid.UUID
	OccurredAt     time.Time
	OrganizationID *uuid.UUID
	ActorType      string
	ActorID        *string
	ActorKeyPrefix *string
	Action         string
	ResourceType   string
	ResourceID     string
	RequestID      *string
	Before, After  json.RawMessage // JSON objects, or nil
}

// AuditFilter selects audit events; nil fields match everything.
type AuditFilter struct {
	OrganizationID *uuid.UUID
	ResourceType   *string
	ResourceID     *string
	Action         *string
	Since, Until   *time.Time
	Cursor         *string
	Limit          int
}

// AuditService reads the audit trail (audit records are written by the services that make
// the changes, in their transactions).
type AuditService interface {
	// ListAuditEvents returns a page of events, newest first, and the next page's cursor.
	// An organization principal sees only its own organization's events.
	ListAuditEvents(ctx context.Context, f AuditFilter) ([]AuditEvent, *string, error)
}
