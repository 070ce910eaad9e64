package core

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Webhook endpoint statuses.
const (
	WebhookEndpointEnabled  = "enabled"
	WebhookEndpointDisabled = "disabled"
)

// WebhookEndpoint is a URL of an organization that receives signed webhook events. Its secret
// is never part of it: only NewWebhookEndpoint, at registration, carries it. The JSON form is
// its audit summary.
type WebhookEndpoint struct {
	ID             uuid.UUID `json:"id"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
	OrganizationID uuid.UUID `json:"organization_id"`
	URL            string    `json:"url"`
	Description    *string   `json:"description"`
	EnabledEvents  []string  `json:"enabled_events"`
	Status         string    `json:"status"`
	DisabledReason *string   `json:"disabled_reason"`
}

// NewWebhookEndpoint is a registered endpoint with its signing secret (`whsec_…`), shown once.
type NewWebhookEndpoint struct {
	WebhookEndpoint
	Secret string
}

// WebhookEndpointCreate is the input of WebhookService.CreateWebhookEndpoint.
type WebhookEndpointCreate struct {
	OrganizationID uuid.UUID // one the caller may act for (Principal.ActsFor)
	URL            string
	EnabledEvents  []string
	Description    *string
}

// WebhookEndpointFilter selects endpoints for WebhookService.ListWebhookEndpoints.
type WebhookEndpointFilter struct {
	OrganizationID *uuid.UUID // nil: every endpoint the caller may see
	Cursor         *string    // the next_cursor of the previous page
	Limit          int
}

// WebhookTest is a queued test event.
type WebhookTest struct {
	EventID    uuid.UUID
	EndpointID uuid.UUID
	Type       EventType
}

// WebhookService manages webhook endpoints. Events are not sent by it: every state change
// publishes its event in its own transaction, and background workers deliver them. An
// organization principal sees only its own endpoints (another's id is ENotFound).
type WebhookService interface {
	// CreateWebhookEndpoint registers an endpoint and returns it with its signing secret. A
	// URL refused by the delivery policy (not https, or a private, loopback or link-local
	// target outside development mode) is EValidation naming /url; another organization's
	// id, or one that does not exist, is ENotFound.
	CreateWebhookEndpoint(ctx context.Context, in WebhookEndpointCreate) (*NewWebhookEndpoint, error)
	// ListWebhookEndpoints returns a page of endpoints in creation order and the cursor of the
	// next page. Another organization's id is EForbidden.
	ListWebhookEndpoints(ctx context.Context, f WebhookEndpointFilter) ([]*WebhookEndpoint, *string, error)
	// FindWebhookEndpointByID returns the endpoint or ENotFound.
	FindWebhookEndpointByID(ctx context.Context, id uuid.UUID) (*WebhookEndpoint, error)
	// DeleteWebhookEndpoint deletes the endpoint and drops its pending deliveries (ENotFound
	// when there is none).
	DeleteWebhookEndpoint(ctx context.Context, id uuid.UUID) error
	// SendWebhookTest queues a webhook_endpoint.test event for the endpoint alone, whatever
	// its enabled events. A disabled endpoint is EInvalidTransition.
	SendWebhookTest(ctx context.Context, id uuid.UUID) (*WebhookTest, error)
	WebhookEndpointChanger
}
