package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/secretbox"
	"github.com/provider/coreapi/internal/webhook"
)

// Delivery statuses (webhook_deliveries.status).
const (
	deliveryPending   = "pending"
	deliverySucceeded = "succeeded"
	deliveryFailed    = "failed"
	deliveryAbandoned = "abandoned"
)

// webhookClaimBatch is how many deliveries a worker claims and sends at once.
const webhookClaimBatch = 16

// WebhookWorker delivers queued webhook events. Deliveries are written with their events (the
// outbox, see publishWebhookEvent); a worker claims due ones with FOR UPDATE SKIP LOCKED and
// leases each for one attempt, sends it signed, and records the attempt. A delivery is retried
// with the policy's backoff until a 2xx answer or MaxAttempts; an endpoint whose delivery
// fails its last attempt with no success to that endpoint since the delivery's first attempt
// (about a day of failure) is disabled. A crash between sending and recording leaves the lease
// to expire and the attempt to be made again: delivery is at least once, and receivers
// de-duplicate on webhook-id, the event id.
type WebhookWorker struct {
	db       *DB
	box      *secretbox.Box
	sender   *webhook.Sender
	logger   *slog.Logger
	interval time.Duration
}

// NewWebhookWorker returns a worker over d that looks for due deliveries every interval and
// sends them under policy; box opens the endpoints' secrets.
func NewWebhookWorker(d *DB, box *secretbox.Box, policy webhook.Policy, logger *slog.Logger, interval time.Duration) *WebhookWorker {
	return &WebhookWorker{db: d, box: box, sender: webhook.NewSender(policy), logger: logger, interval: interval}
}

// Run delivers due deliveries until ctx is done. Attempts in flight when ctx ends finish
// (each is bounded by the policy's timeout) and are recorded.
func (w *WebhookWorker) Run(ctx context.Context) {
	ticker := time.NewTicker(w.interval)
	defer ticker.Stop()
	for {
		if _, err := w.WorkDue(ctx); err != nil && ctx.Err() == nil {
			w.logger.Error("webhooks: claiming deliveries", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// WorkDue makes every attempt that is due now and returns how many it made.
func (w *WebhookWorker) WorkDue(ctx context.Context) (int, error) {
	policy := w.sender.Policy()
	lease := policy.Timeout + 30*time.Second
	n := 0
	for ctx.Err() == nil {
		claimed, err := w.db.queries(ctx).WebhookDeliveryClaim(ctx, dbq.WebhookDeliveryClaimParams{
			Batch: webhookClaimBatch, LeaseSeconds: lease.Seconds(),
		})
		if err != nil {
			return n, translate(err)
		}
		if len(claimed) == 0 {
			return n, nil
		}
		var wg sync.WaitGroup
		for _, d := range claimed {
			wg.Go(func() {
				// The attempt is finished and recorded even when ctx ends meanwhile.
				if err := w.attempt(context.WithoutCancel(ctx), d); err != nil {
					w.logger.Error("webhooks: attempt", "delivery_id", d.ID, "event_id", d.EventID, "error", err)
				}
			})
		}
		wg.Wait()
		n += len(claimed)
	}
	return n, nil
}

// attempt makes the attempt of delivery d that its claim counted, and records it.
func (w *WebhookWorker) attempt(ctx context.Context, d dbq.WebhookDelivery) error {
	q := w.db.queries(ctx)
	row, err := q.WebhookDeliveryGetForSend(ctx, d.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // the endpoint was deleted meanwhile
	}
	if err != nil {
		return err
	}
	if row.EndpointStatus != core.WebhookEndpointEnabled {
		_, err := q.WebhookDeliveryFinishAttempt(ctx, dbq.WebhookDeliveryFinishAttemptParams{
			ID: d.ID, Attempts: d.Attempts, Status: deliveryAbandoned, NextAttemptAt: d.NextAttemptAt,
			LastError: nonEmpty("The endpoint was disabled."),
		})
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	}
	secret, err := w.box.Open(row.Secret, d.EndpointID[:])
	if err != nil {
		return fmt.Errorf("open the secret of endpoint %s: %w", d.EndpointID, err)
	}
	ev := row.WebhookEvent
	body, err := json.Marshal(webhookEventBody{ID: ev.ID, Type: ev.Type, CreatedAt: ev.CreatedAt, OrganizationID: ev.OrganizationID, Data: ev.Data})
	if err != nil {
		return err
	}
	a := w.sender.Send(ctx, webhook.Delivery{URL: row.Url, Secret: string(secret), EventID: ev.ID.String(), Body: body})
	if !a.Succeeded {
		w.logger.Warn("webhooks: attempt failed", "delivery_id", d.ID, "event_id", ev.ID, "endpoint_id", d.EndpointID,
			"attempt", d.Attempts, "status_code", a.StatusCode, "error", a.Error)
	}
	return w.db.WithTx(ctx, func(q *dbq.Queries) error { return w.record(ctx, q, d, a) })
}

// record stores the outcome a of the attempt of d and its consequences: the next attempt, the
// end of the delivery, and the endpoint's run of failures (disabling it when sustained).
func (w *WebhookWorker) record(ctx context.Context, q *dbq.Queries, d dbq.WebhookDelivery, a webhook.Attempt) error {
	policy := w.sender.Policy()
	params := dbq.WebhookDeliveryFinishAttemptParams{ID: d.ID, Attempts: d.Attempts, Status: deliverySucceeded, NextAttemptAt: a.At}
	switch {
	case a.Succeeded:
	case int(d.Attempts) >= policy.MaxAttempts:
		params.Status, params.LastError = deliveryFailed, &a.Error
	default:
		params.Status, params.LastError = deliveryPending, &a.Error
		params.NextAttemptAt = time.Now().Add(policy.Backoff(int(d.Attempts)))
	}
	if _, err := q.WebhookDeliveryFinishAttempt(ctx, params); errors.Is(err, pgx.ErrNoRows) {
		return nil // deleted with its endpoint, or a later attempt was claimed after our lease ran out
	} else if err != nil {
		return err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	var statusCode *int32
	if a.StatusCode != 0 {
		c := int32(a.StatusCode)
		statusCode = &c
	}
	if err := q.WebhookDeliveryAttemptInsert(ctx, dbq.WebhookDeliveryAttemptInsertParams{
		ID: id, OrganizationID: d.OrganizationID, DeliveryID: d.ID, Attempt: d.Attempts, AttemptedAt: a.At,
		Succeeded: a.Succeeded, StatusCode: statusCode, LatencyMs: int32(a.Latency.Milliseconds()), Error: nonEmpty(a.Error),
	}); err != nil {
		return err
	}
	endpoint := dbq.WebhookEndpointMarkSucceededParams{OrganizationID: d.OrganizationID, ID: d.EndpointID}
	if a.Succeeded {
		return q.WebhookEndpointMarkSucceeded(ctx, endpoint)
	}
	since, err := q.WebhookEndpointMarkFailed(ctx, dbq.WebhookEndpointMarkFailedParams{
		OrganizationID: d.OrganizationID, ID: d.EndpointID, AttemptedAt: a.At,
	})
	if errors.Is(err, pgx.ErrNoRows) || since == nil {
		return nil // the endpoint is being deleted
	}
	if err != nil || params.Status != deliveryFailed {
		return err
	}
	reason := fmt.Sprintf("Every delivery attempt failed since %s: event %s was attempted %d times over about a day without a 2xx answer (last: %s).",
		since.UTC().Format(time.RFC3339), d.EventID, d.Attempts, a.Error)
	disabled, err := q.WebhookEndpointDisable(ctx, dbq.WebhookEndpointDisableParams{
		OrganizationID: d.OrganizationID, ID: d.EndpointID, DeliveryID: d.ID, DisabledReason: &reason,
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // already disabled, or a later attempt succeeded
	}
	if err != nil {
		return err
	}
	if err := q.WebhookDeliveryAbandonByEndpoint(ctx, dbq.WebhookDeliveryAbandonByEndpointParams{
		OrganizationID: d.OrganizationID, EndpointID: d.EndpointID,
	}); err != nil {
		return err
	}
	w.logger.Warn("webhooks: endpoint disabled", "endpoint_id", d.EndpointID, "organization_id", d.OrganizationID, "reason", reason)
	after := webhookEndpointFromRow(disabled)
	return audit(ctx, q, core.AuditEntry{
		OrganizationID: &d.OrganizationID, Action: "webhook_endpoint.disabled", ResourceType: "webhook_endpoint",
		ResourceID: d.EndpointID.String(), After: after, Reason: "sustained delivery failure",
	})
}

// SweepWebhookEvents deletes webhook events older than retention whose deliveries are all
// finished, with their deliveries and attempts.
func SweepWebhookEvents(ctx context.Context, d *DB, retention time.Duration, logger *slog.Logger) {
	n, err := d.queries(ctx).WebhookEventSweep(ctx, time.Now().Add(-retention))
	if err != nil {
		logger.Error("webhooks: sweeping old events", "error", err)
		return
	}
	if n > 0 {
		logger.Info("webhooks: swept old events", "events", n)
	}
}
