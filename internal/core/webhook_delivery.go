package core

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// Webhook delivery outcomes, as the API shows them. A delivery abandoned when its endpoint was
// disabled is failed too: it did not succeed, and recover queues it again.
const (
	WebhookDeliveryPending   = "pending"
	WebhookDeliverySucceeded = "succeeded"
	WebhookDeliveryFailed    = "failed"
)

// MaxAttemptsListed is how many attempts of a delivery its listing shows: the latest ones.
const MaxAttemptsListed = 25

// WebhookEventRecord is a stored webhook event: every event an organization's changes
// produced, whether or not an endpoint receives it, kept for the retention period. Data is
// the event's data as it was rendered when it was published.
type WebhookEventRecord struct {
	ID             uuid.UUID
	Type           EventType
	CreatedAt      time.Time
	OrganizationID uuid.UUID
	Data           json.RawMessage
}

// WebhookEventFilter selects events for WebhookDeliveryService.ListEvents.
type WebhookEventFilter struct {
	OrganizationID *uuid.UUID // nil: every event the caller may see
	Type           *string
	CreatedAfter   *time.Time // at or after
	CreatedBefore  *time.Time // strictly before
	Cursor         *string    // the next_cursor of the previous page
	Limit          int
}

// WebhookDelivery is the delivery of one event to one endpoint, with its latest attempts.
type WebhookDelivery struct {
	ID            uuid.UUID
	CreatedAt     time.Time
	UpdatedAt     time.Time
	EndpointID    uuid.UUID
	EventID       uuid.UUID
	EventType     string
	Status        string // WebhookDeliveryPending, …Succeeded or …Failed
	AttemptCount  int
	NextAttemptAt *time.Time // when pending
	LastError     *string
	CompletedAt   *time.Time
	// Attempts are the latest attempts (at most MaxAttemptsListed), newest first.
	Attempts []WebhookDeliveryAttempt
}

// WebhookDeliveryAttempt is one attempt of a delivery: what the receiver answered, or why
// there was no answer.
type WebhookDeliveryAttempt struct {
	Attempt      int
	AttemptedAt  time.Time
	Succeeded    bool
	StatusCode   *int // nil when there was no answer
	DurationMs   int
	ResponseBody *string // the answer's first bytes (at most 1 KiB)
	Error        *string
}

// WebhookDeliveryFilter selects the deliveries of one endpoint.
type WebhookDeliveryFilter struct {
	EndpointID uuid.UUID
	Status     *string // an outcome: WebhookDeliveryPending, …Succeeded or …Failed
	EventType  *string
	Cursor     *string
	Limit      int
}

// WebhookDeliveryService shows an organization what its changes published and what became of
// each delivery, and sends deliveries again. An organization principal sees only its own
// events and endpoints (another's id is ENotFound); the operator sees every organization's.
type WebhookDeliveryService interface {
	// ListEvents returns a page of events, newest first, and the cursor of the next page.
	// Another organization's id is EForbidden.
	ListEvents(ctx context.Context, f WebhookEventFilter) ([]*WebhookEventRecord, *string, error)
	// FindEventByID returns the event or ENotFound (swept events too).
	FindEventByID(ctx context.Context, id uuid.UUID) (*WebhookEventRecord, error)
	// StreamEvents returns the events of f's organization, oldest id first (the event
	// stream's look for new events; the caller has checked it may act for the organization).
	StreamEvents(ctx context.Context, f EventStreamFilter) ([]*WebhookEventRecord, error)
	// ListDeliveries returns a page of an endpoint's deliveries, newest first, with their
	// latest attempts. An unknown endpoint is ENotFound.
	ListDeliveries(ctx context.Context, f WebhookDeliveryFilter) ([]*WebhookDelivery, *string, error)
	// ResendDelivery queues one attempt of the delivery now, whatever its outcome so far (a
	// pending one keeps the rest of its schedule), and returns how many deliveries it queued
	// (1). An unknown endpoint or delivery is ENotFound; a disabled endpoint is
	// EInvalidTransition.
	ResendDelivery(ctx context.Context, endpointID, deliveryID uuid.UUID) (int, error)
	// RecoverDeliveries queues again, each with a fresh schedule, every delivery to the
	// endpoint created at or after since that did not succeed (failed, or abandoned when the
	// endpoint was disabled), adds a delivery of each event since then that the endpoint
	// subscribes to and never had one of (published while it was disabled), and returns how
	// many it queued. A disabled endpoint is EInvalidTransition.
	RecoverDeliveries(ctx context.Context, endpointID uuid.UUID, since time.Time) (int, error)
}
