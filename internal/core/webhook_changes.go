package core

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"
)

// DefaultWebhookSecretGrace is how long, unless the rotation says otherwise, a replaced secret
// keeps signing deliveries beside the new one.
const DefaultWebhookSecretGrace = 24 * time.Hour

// WebhookEndpointUpdate is a partial update of an endpoint; unset fields stay as they are.
type WebhookEndpointUpdate struct {
	URL           Field[string]
	EnabledEvents Field[[]string]
	Description   Field[string] // a nil Value clears it
	Status        Field[string] // WebhookEndpointEnabled or WebhookEndpointDisabled
}

// disabledByRequest is the disabled_reason of an endpoint disabled with updateWebhookEndpoint.
const disabledByRequest = "Disabled through the API (updateWebhookEndpoint)."

// WebhookEndpointChange is what an update did to an endpoint.
type WebhookEndpointChange struct {
	Changed   bool // something differs: the endpoint is written
	Disabled  bool // it moved from enabled to disabled
	Reenabled bool // it moved from disabled to enabled: its failure state is cleared
}

// Apply applies in to e and says what changed. Enabling a disabled endpoint clears its
// disabled_reason; disabling one gives the reason disabledByRequest. Apply does not touch
// UpdatedAt nor check the URL (the delivery policy does).
func (e *WebhookEndpoint) Apply(in WebhookEndpointUpdate) WebhookEndpointChange {
	var c WebhookEndpointChange
	if in.URL.Set && *in.URL.Value != e.URL {
		e.URL, c.Changed = *in.URL.Value, true
	}
	if in.EnabledEvents.Set && !slices.Equal(*in.EnabledEvents.Value, e.EnabledEvents) {
		e.EnabledEvents, c.Changed = *in.EnabledEvents.Value, true
	}
	if in.Description.Set && !equalPtr(in.Description.Value, e.Description) {
		e.Description, c.Changed = in.Description.Value, true
	}
	if in.Status.Set && *in.Status.Value != e.Status {
		e.Status, c.Changed = *in.Status.Value, true
		if e.Status == WebhookEndpointDisabled {
			reason := disabledByRequest
			e.DisabledReason, c.Disabled = &reason, true
		} else {
			e.DisabledReason, c.Reenabled = nil, true
		}
	}
	return c
}

// WebhookSecretRotation is the answer of a rotation: the new secret, shown once, and until
// when the replaced one still signs (nil: it stopped at once).
type WebhookSecretRotation struct {
	EndpointID              uuid.UUID
	Secret                  string
	PreviousSecretExpiresAt *time.Time
}

// WebhookEndpointChanger changes registered endpoints (part of WebhookService).
type WebhookEndpointChanger interface {
	// UpdateWebhookEndpoint applies a partial update: a new URL is checked by the delivery
	// policy as at registration (EValidation naming /url, nothing changed). Enabling a
	// disabled endpoint clears its failure state. Another organization's id is ENotFound.
	UpdateWebhookEndpoint(ctx context.Context, id uuid.UUID, in WebhookEndpointUpdate) (*WebhookEndpoint, error)
	// RotateWebhookSecret gives the endpoint a new signing secret; the replaced one keeps
	// signing beside it for grace (0: not at all; a rotation within an earlier grace period
	// ends that one).
	RotateWebhookSecret(ctx context.Context, id uuid.UUID, grace time.Duration) (*WebhookSecretRotation, error)
}
