package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/webhook"
	"github.com/provider/coreapi/internal/webhook/signature"
)

// UpdateWebhookEndpoint implements core.WebhookEndpointChanger. The new URL is checked before
// anything is locked, so a refused one changes nothing.
func (s *WebhookService) UpdateWebhookEndpoint(ctx context.Context, id uuid.UUID, in core.WebhookEndpointUpdate) (*core.WebhookEndpoint, error) {
	if in.URL.Set {
		if err := s.checkURL(ctx, *in.URL.Value); err != nil {
			return nil, err
		}
	}
	var updated *core.WebhookEndpoint
	err := s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		row, err := lockedEndpoint(ctx, q, id)
		if err != nil {
			return err
		}
		before := webhookEndpointFromRow(row)
		e := *before
		change := e.Apply(in)
		if !change.Changed {
			updated = before
			return nil
		}
		row, err = q.WebhookEndpointUpdate(ctx, dbq.WebhookEndpointUpdateParams{
			OrganizationID: e.OrganizationID, ID: id, Url: e.URL, Description: e.Description, EnabledEvents: e.EnabledEvents,
			Status: e.Status, DisabledReason: e.DisabledReason, Reenabled: change.Reenabled,
		})
		if err != nil {
			return err
		}
		updated = webhookEndpointFromRow(row)
		if err := audit(ctx, q, core.AuditEntry{
			OrganizationID: &e.OrganizationID, Action: "webhook_endpoint.updated", ResourceType: "webhook_endpoint",
			ResourceID: id.String(), Before: before, After: updated,
		}); err != nil {
			return err
		}
		if change.Disabled {
			return s.db.endpointDisabled(ctx, q, updated)
		}
		return s.db.publish(ctx, q, e.OrganizationID, core.EventWebhookEndpointUpdated, updated)
	})
	if err != nil {
		return nil, err
	}
	return updated, nil
}

// RotateWebhookSecret implements core.WebhookEndpointChanger. The replaced secret is kept
// sealed, as the current one, only when it has a grace period.
func (s *WebhookService) RotateWebhookSecret(ctx context.Context, id uuid.UUID, grace time.Duration) (*core.WebhookSecretRotation, error) {
	secret := signature.NewSecret()
	var rotation *core.WebhookSecretRotation
	err := s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		row, err := lockedEndpoint(ctx, q, id)
		if err != nil {
			return err
		}
		params := dbq.WebhookEndpointRotateSecretParams{
			OrganizationID: row.OrganizationID, ID: id, Secret: s.box.Seal([]byte(secret), id[:]),
		}
		if grace > 0 {
			micros := grace.Microseconds()
			params.PreviousSecret, params.GraceMicroseconds = row.Secret, &micros
		}
		row, err = q.WebhookEndpointRotateSecret(ctx, params)
		if err != nil {
			return err
		}
		rotation = &core.WebhookSecretRotation{EndpointID: id, Secret: secret, PreviousSecretExpiresAt: row.PreviousSecretExpiresAt}
		rotated := webhookEndpointFromRow(row)
		if err := audit(ctx, q, core.AuditEntry{
			OrganizationID: &row.OrganizationID, Action: "webhook_endpoint.secret_rotated", ResourceType: "webhook_endpoint",
			ResourceID: id.String(), After: rotated, Reason: "grace period " + grace.String(),
		}); err != nil {
			return err
		}
		return s.db.publish(ctx, q, row.OrganizationID, core.EventWebhookEndpointSecretRotated, rotated)
	})
	if err != nil {
		return nil, err
	}
	return rotation, nil
}

// checkURL refuses a URL the delivery policy does not allow, as a validation error at /url.
func (s *WebhookService) checkURL(ctx context.Context, url string) error {
	if err := s.policy.CheckURL(ctx, url); err != nil {
		msg := err.Error()
		return &core.Error{Code: core.EValidation, Message: "The webhook URL is not allowed: " + msg,
			Fields: []core.FieldError{{Location: "body", Pointer: "/url", Code: "url_not_allowed", Message: msg}}}
	}
	return nil
}

// lockedEndpoint locks an endpoint the caller may see, or answers ENotFound having locked
// nothing (another organization's endpoint is never locked).
func lockedEndpoint(ctx context.Context, q *dbq.Queries, id uuid.UUID) (dbq.WebhookEndpoint, error) {
	visible, err := visibleEndpoint(ctx, q, id)
	if err != nil {
		return visible, err
	}
	row, err := q.WebhookEndpointGetForUpdate(ctx, dbq.WebhookEndpointGetForUpdateParams{OrganizationID: visible.OrganizationID, ID: id})
	return row, notFoundAs(err, "Webhook endpoint %s does not exist.", id)
}

// endpointDisabled is what follows every disabling of endpoint e, in its transaction: its
// pending deliveries are abandoned (a disabled endpoint receives nothing more) and the
// organization is told with webhook_endpoint.disabled.
func (d *DB) endpointDisabled(ctx context.Context, q *dbq.Queries, e *core.WebhookEndpoint) error {
	if err := q.WebhookDeliveryAbandonByEndpoint(ctx, dbq.WebhookDeliveryAbandonByEndpointParams{
		OrganizationID: e.OrganizationID, EndpointID: e.ID,
	}); err != nil {
		return err
	}
	return d.publish(ctx, q, e.OrganizationID, core.EventWebhookEndpointDisabled, e)
}

// disableFailingEndpoint disables the endpoint of attempt a after its delivery failed for good
// with outcome r: at once when the receiver answered 410 Gone, otherwise when no attempt to
// the endpoint has succeeded (and it was not enabled again) since the delivery's first
// attempt. It returns the reason, or "" when the endpoint stays as it is.
func (d *DB) disableFailingEndpoint(ctx context.Context, q *dbq.Queries, a *WebhookAttempt, r webhook.Attempt) (string, error) {
	var (
		reason, why string
		row         dbq.WebhookEndpoint
		err         error
	)
	if r.Gone() {
		reason = fmt.Sprintf("The endpoint answered 410 Gone to event %s.", a.EventID)
		why = "the receiver answered 410 Gone"
		row, err = q.WebhookEndpointDisableGone(ctx, dbq.WebhookEndpointDisableGoneParams{
			OrganizationID: a.OrganizationID, ID: a.EndpointID, DisabledReason: &reason,
		})
	} else {
		reason = fmt.Sprintf("Event %s failed all %d delivery attempts over about a day, and no delivery to the endpoint succeeded meanwhile (last: %s).",
			a.EventID, a.Attempt, r.Error)
		why = "sustained delivery failure"
		row, err = q.WebhookEndpointDisable(ctx, dbq.WebhookEndpointDisableParams{
			OrganizationID: a.OrganizationID, ID: a.EndpointID, EventID: a.EventID, DeliveryID: a.DeliveryID, DisabledReason: &reason,
		})
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil // already disabled, or a later attempt succeeded
	}
	if err != nil {
		return "", err
	}
	disabled := webhookEndpointFromRow(row)
	if err := audit(ctx, q, core.AuditEntry{
		OrganizationID: &a.OrganizationID, Action: "webhook_endpoint.disabled", ResourceType: "webhook_endpoint",
		ResourceID: a.EndpointID.String(), After: disabled, Reason: why,
	}); err != nil {
		return "", err
	}
	return reason, d.endpointDisabled(ctx, q, disabled)
}
