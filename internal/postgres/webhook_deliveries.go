package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/webhook"
)

// Delivery statuses (webhook_deliveries.status).
const (
	deliveryPending   = "pending"
	deliverySucceeded = "succeeded"
	deliveryFailed    = "failed"
	deliveryAbandoned = "abandoned"
)

// A webhook delivery is written with its event (the outbox, see publishWebhookEvent) with a
// job for its first attempt; internal/jobs makes the attempts. webhook_deliveries stays the
// record of each delivery (its status, attempts and their outcomes), and these are its
// storage steps: start an attempt, then record its outcome.

// WebhookAttempt is an attempt of a delivery that has started: what to send, and where.
type WebhookAttempt struct {
	OrganizationID uuid.UUID
	DeliveryID     uuid.UUID
	EndpointID     uuid.UUID
	EventID        uuid.UUID
	// Attempt is the attempt's number, from 1.
	Attempt int
	URL     string
	// SealedSecret is the endpoint's signing secret, sealed; open it with the endpoint id as
	// its context.
	SealedSecret []byte
	// SealedPreviousSecret is the secret SealedSecret replaced, sealed the same way, while its
	// grace period lasts; nil otherwise.
	SealedPreviousSecret []byte
	// Body is the document's WebhookEvent, as sent.
	Body []byte

	nextAttemptAt time.Time
	// attemptLimit is the last attempt of a delivery sent again by hand (resend, recover);
	// nil on the policy's own schedule.
	attemptLimit *int32
}

// StartWebhookAttempt counts the next attempt of a pending delivery and returns what it sends.
// requeues is the delivery's count of re-queues when the job was queued. It returns nil when
// there is nothing to attempt: the delivery is finished or gone, or was queued again since
// (another job makes its attempts), or its endpoint is disabled (the delivery is then
// abandoned). eventID is the delivery's event.
func (d *DB) StartWebhookAttempt(ctx context.Context, organizationID, eventID, deliveryID uuid.UUID, requeues int32) (*WebhookAttempt, error) {
	q := d.queries(ctx)
	del, err := q.WebhookDeliveryStartAttempt(ctx, dbq.WebhookDeliveryStartAttemptParams{
		OrganizationID: organizationID, EventID: eventID, ID: deliveryID, Requeues: requeues,
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, translate(err)
	}
	row, err := q.WebhookDeliveryGetForSend(ctx, dbq.WebhookDeliveryGetForSendParams{OrganizationID: organizationID, EventID: eventID, ID: del.ID})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil // the endpoint was deleted meanwhile
	}
	if err != nil {
		return nil, translate(err)
	}
	if row.EndpointStatus != core.WebhookEndpointEnabled {
		_, err := q.WebhookDeliveryFinishAttempt(ctx, dbq.WebhookDeliveryFinishAttemptParams{
			OrganizationID: organizationID, EventID: eventID, ID: del.ID, Attempts: del.Attempts, Status: deliveryAbandoned, NextAttemptAt: del.NextAttemptAt,
			LastError: nonEmpty("The endpoint was disabled."),
		})
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return nil, translate(err)
		}
		return nil, nil
	}
	ev := row.WebhookEvent
	body, err := webhookEventFromRow(ev).DeliveryBody()
	if err != nil {
		return nil, err
	}
	return &WebhookAttempt{
		OrganizationID: del.OrganizationID, DeliveryID: del.ID, EndpointID: del.EndpointID, EventID: ev.ID,
		Attempt: int(del.Attempts), URL: row.Url, SealedSecret: row.Secret, SealedPreviousSecret: row.PreviousSecret, Body: body, nextAttemptAt: del.NextAttemptAt,
		attemptLimit: del.AttemptLimit,
	}, nil
}

// WebhookAttemptOutcome is what recording an attempt decided.
type WebhookAttemptOutcome struct {
	// RetryAt is when the next attempt is due; zero when the delivery is finished.
	RetryAt time.Time
	// DisabledReason is set when the attempt's failure disabled the endpoint.
	DisabledReason string
}

// RecordWebhookAttempt stores the result r of attempt a and its consequences, in one
// transaction: the next attempt (due after the policy's backoff, or a 429's or 503's
// Retry-After), the end of the delivery, and the endpoint's run of failures. When the
// delivery's last attempt fails and no attempt to its endpoint has succeeded since its first
// one (about a day of failure), or at once when the receiver answers 410 Gone, the endpoint is
// disabled and its pending deliveries abandoned; a delivery sent again by hand (resend,
// recover) ends at its own attempt limit and disables the endpoint only on a 410. Nothing is
// recorded when the delivery is gone or a later attempt has started meanwhile.
func (d *DB) RecordWebhookAttempt(ctx context.Context, a *WebhookAttempt, r webhook.Attempt, policy webhook.Policy) (WebhookAttemptOutcome, error) {
	var out WebhookAttemptOutcome
	err := d.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		params := dbq.WebhookDeliveryFinishAttemptParams{OrganizationID: a.OrganizationID, EventID: a.EventID, ID: a.DeliveryID, Attempts: int32(a.Attempt), Status: deliverySucceeded, NextAttemptAt: r.At}
		switch {
		case r.Succeeded:
		case r.Gone() || a.Attempt >= a.lastAttempt(policy):
			params.Status, params.LastError = deliveryFailed, &r.Error
		default:
			params.Status, params.LastError = deliveryPending, &r.Error
			params.NextAttemptAt = time.Now().Add(policy.RetryDelay(a.scheduleAttempt(policy), r))
		}
		if _, err := q.WebhookDeliveryFinishAttempt(ctx, params); errors.Is(err, pgx.ErrNoRows) {
			return nil // deleted with its endpoint, or a later attempt has started
		} else if err != nil {
			return err
		}
		if params.Status == deliveryPending {
			out.RetryAt = params.NextAttemptAt
		}
		id, err := uuid.NewV7()
		if err != nil {
			return err
		}
		var statusCode *int32
		if r.StatusCode != 0 {
			c := int32(r.StatusCode)
			statusCode = &c
		}
		if err := q.WebhookDeliveryAttemptInsert(ctx, dbq.WebhookDeliveryAttemptInsertParams{
			ID: id, OrganizationID: a.OrganizationID, EventID: a.EventID, DeliveryID: a.DeliveryID, Attempt: int32(a.Attempt), AttemptedAt: r.At,
			Succeeded: r.Succeeded, StatusCode: statusCode, LatencyMs: int32(r.Latency.Milliseconds()), Error: nonEmpty(r.Error),
			ResponseBody: nonEmpty(r.ResponseBody),
		}); err != nil {
			return err
		}
		if r.Succeeded {
			return q.WebhookEndpointMarkSucceeded(ctx, dbq.WebhookEndpointMarkSucceededParams{
				OrganizationID: a.OrganizationID, ID: a.EndpointID, SucceededAt: r.At.Add(r.Latency),
			})
		}
		if params.Status != deliveryFailed || (a.attemptLimit != nil && !r.Gone()) {
			return nil
		}
		out.DisabledReason, err = d.disableFailingEndpoint(ctx, q, a, r)
		return err
	})
	return out, err
}

// scheduleAttempt is the number of attempt a within its delivery's current schedule, from 1:
// a recovered delivery starts the policy's schedule again (its first retry comes after
// RetryBase, not after the cap its earlier attempts reached).
func (a *WebhookAttempt) scheduleAttempt(policy webhook.Policy) int {
	return max(a.Attempt-max(a.lastAttempt(policy)-policy.MaxAttempts, 0), 1)
}

// lastAttempt is the number of the attempt after which the delivery fails for good.
func (a *WebhookAttempt) lastAttempt(policy webhook.Policy) int {
	if a.attemptLimit != nil {
		return int(*a.attemptLimit)
	}
	return policy.MaxAttempts
}
