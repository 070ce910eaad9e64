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

// webhookConcurrency is how many attempts a worker makes at once: a slow endpoint holds one
// slot for at most the policy's timeout while the others go on.
const webhookConcurrency = 32

// WebhookWorker delivers queued webhook events. Deliveries are written with their events (the
// outbox, see publishWebhookEvent); a worker claims due ones with FOR UPDATE SKIP LOCKED and
// leases each for one attempt, sends it signed, and records the attempt. A delivery is retried
// with the policy's backoff until a 2xx answer or MaxAttempts; when its last attempt fails and
// no attempt to its endpoint has succeeded since its first one (about a day of failure), the
// endpoint is disabled. A crash between sending and recording leaves the lease to expire and
// the attempt to be made again: delivery is at least once, and receivers de-duplicate on
// webhook-id, the event id.
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

// Run delivers due deliveries until ctx is done, then waits for the attempts in flight: each
// finishes (bounded by the policy's timeout) and is recorded.
func (w *WebhookWorker) Run(ctx context.Context) {
	var inflight sync.WaitGroup
	defer inflight.Wait()
	slots := make(chan struct{}, webhookConcurrency)
	ticker := time.NewTicker(w.interval)
	defer ticker.Stop()
	for {
		if err := w.start(ctx, slots, &inflight); err != nil && ctx.Err() == nil {
			w.logger.Error("webhooks: claiming deliveries", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// start claims as many due deliveries as there are free slots and starts their attempts.
// Only Run's goroutine takes slots, so the free ones stay free until taken here.
func (w *WebhookWorker) start(ctx context.Context, slots chan struct{}, inflight *sync.WaitGroup) error {
	lease := w.sender.Policy().Timeout + 30*time.Second
	for ctx.Err() == nil {
		free := cap(slots) - len(slots)
		if free == 0 {
			return nil
		}
		claimed, err := w.db.queries(ctx).WebhookDeliveryClaim(ctx, dbq.WebhookDeliveryClaimParams{
			Batch: int32(free), LeaseSeconds: lease.Seconds(),
		})
		if err != nil {
			return translate(err)
		}
		for _, d := range claimed {
			slots <- struct{}{}
			inflight.Go(func() {
				defer func() { <-slots }()
				// The attempt is finished and recorded even when ctx ends meanwhile.
				if err := w.attempt(context.WithoutCancel(ctx), d); err != nil {
					w.logger.Error("webhooks: attempt", "delivery_id", d.ID, "event_id", d.EventID, "error", err)
				}
			})
		}
		if len(claimed) < free {
			return nil
		}
	}
	return nil
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
	if a.Succeeded {
		return q.WebhookEndpointMarkSucceeded(ctx, dbq.WebhookEndpointMarkSucceededParams{
			OrganizationID: d.OrganizationID, ID: d.EndpointID, SucceededAt: a.At.Add(a.Latency),
		})
	}
	if params.Status != deliveryFailed {
		return nil
	}
	reason := fmt.Sprintf("Event %s failed all %d delivery attempts over about a day, and no delivery to the endpoint succeeded meanwhile (last: %s).",
		d.EventID, d.Attempts, a.Error)
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
