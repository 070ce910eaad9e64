package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/provider/coreapi/internal/postgres"
	"github.com/provider/coreapi/internal/secretbox"
	"github.com/provider/coreapi/internal/webhook"
)

// DeliverWebhookArgs is the job that makes the attempts of one webhook delivery. It is
// inserted with the delivery, in the transaction of the event; webhook_deliveries keeps the
// delivery's status and every attempt's outcome.
type DeliverWebhookArgs struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	// EventID is the delivery's event, its partition key (migration 00620 gave it to the jobs
	// v1.2.0 queued without it).
	EventID    uuid.UUID `json:"event_id"`
	DeliveryID uuid.UUID `json:"delivery_id"`
	// Requeues is the delivery's count of re-queues (resend, recover) when the job was queued:
	// a job queued before the latest re-queue does nothing.
	Requeues int32 `json:"requeues,omitempty"`
}

// Kind implements river.JobArgs.
func (DeliverWebhookArgs) Kind() string { return "deliver_webhook" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (DeliverWebhookArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queueWebhooks}
}

// webhookWorker makes one attempt of a delivery per run: it counts the attempt, sends the
// event signed, and records the outcome. A failed attempt with attempts left snoozes the job
// until the policy's backoff has passed (a snooze is not one of River's attempts: the
// delivery's own count decides when it fails for good, and the endpoint is disabled after
// sustained failure, see postgres.RecordWebhookAttempt). A process dying between sending and
// recording leaves the job running until River rescues it, and the attempt is made again:
// delivery is at least once, and receivers de-duplicate on webhook-id, the event id. River
// retries a run that failed for another reason (the database unavailable, say).
type webhookWorker struct {
	river.WorkerDefaults[DeliverWebhookArgs]
	db     *postgres.DB
	box    *secretbox.Box
	sender *webhook.Sender
	logger *slog.Logger
}

func (w *webhookWorker) Work(ctx context.Context, job *river.Job[DeliverWebhookArgs]) error {
	// An attempt begun is made and recorded even when the process stops meanwhile; the
	// policy's timeout bounds it.
	ctx = context.WithoutCancel(ctx)
	a, err := w.db.StartWebhookAttempt(ctx, job.Args.OrganizationID, job.Args.EventID, job.Args.DeliveryID, job.Args.Requeues)
	if err != nil || a == nil {
		return err
	}
	d := webhook.Delivery{URL: a.URL, EventID: a.EventID.String(), Body: a.Body}
	if d.Secret, err = w.openSecret(a, a.SealedSecret); err != nil {
		return err
	}
	if d.PreviousSecret, err = w.openSecret(a, a.SealedPreviousSecret); err != nil {
		return err
	}
	r := w.sender.Send(ctx, d)
	if !r.Succeeded {
		w.logger.Warn("webhooks: attempt failed", "delivery_id", a.DeliveryID, "event_id", a.EventID, "endpoint_id", a.EndpointID,
			"attempt", a.Attempt, "status_code", r.StatusCode, "error", r.Error)
	}
	out, err := w.db.RecordWebhookAttempt(ctx, a, r, w.sender.Policy())
	if err != nil {
		w.logger.Error("webhooks: recording an attempt", "delivery_id", a.DeliveryID, "event_id", a.EventID, "error", err)
		return err
	}
	if out.DisabledReason != "" {
		w.logger.Warn("webhooks: endpoint disabled", "endpoint_id", a.EndpointID, "organization_id", a.OrganizationID, "reason", out.DisabledReason)
	}
	if !out.RetryAt.IsZero() {
		return river.JobSnooze(max(time.Until(out.RetryAt), 0))
	}
	return nil
}

// openSecret opens a sealed secret of a's endpoint; nil (no previous secret) opens to "".
func (w *webhookWorker) openSecret(a *postgres.WebhookAttempt, sealed []byte) (string, error) {
	if sealed == nil {
		return "", nil
	}
	secret, err := w.box.Open(sealed, a.EndpointID[:])
	if err != nil {
		return "", fmt.Errorf("open a secret of endpoint %s: %w", a.EndpointID, err)
	}
	return string(secret), nil
}
