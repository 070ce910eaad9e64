package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/provider/coreapi/internal/postgres"
)

// Retry policy of a provisioning job whose attempt failed: exponential backoff from one
// second, capped at five minutes, for at most maxProvisioningAttempts attempts; then River
// discards the job and the subscription stays provisioning for an operator to look at.
const (
	maxProvisioningAttempts = 10
	maxProvisioningBackoff  = 5 * time.Minute
)

// ProvisionArgs is the job that completes the provisioning of a new subscription, inserted in
// the transaction that creates it.
type ProvisionArgs struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	SubscriptionID uuid.UUID `json:"subscription_id"`
}

// Kind implements river.JobArgs.
func (ProvisionArgs) Kind() string { return "provision_subscription" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (ProvisionArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queueProvisioning, MaxAttempts: maxProvisioningAttempts}
}

// provisionWorker provisions the subscription in one transaction; provisioning twice is a
// no-op, so a job run again after its process died does no harm.
type provisionWorker struct {
	river.WorkerDefaults[ProvisionArgs]
	db     *postgres.DB
	queue  *Queue
	logger *slog.Logger
}

func (w *provisionWorker) Work(ctx context.Context, job *river.Job[ProvisionArgs]) error {
	err := w.db.ProvisionSubscription(ctx, job.Args.OrganizationID, job.Args.SubscriptionID)
	return w.queue.attemptOutcome(ctx, w.logger, err, "provisioning: attempt failed",
		"job_id", job.ID, "subscription_id", job.Args.SubscriptionID, "attempt", job.Attempt)
}

// attemptOutcome is what a worker whose work ran in one transaction returns for its error
// err: nil; a snooze when the process is stopping (the transaction rolled back, and the job
// goes back to the queue at once, this attempt not counted); else err, logged as msg with
// attrs, for River to retry.
func (q *Queue) attemptOutcome(ctx context.Context, logger *slog.Logger, err error, msg string, attrs ...any) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil && q.stopping.Load() {
		return river.JobSnooze(0)
	}
	logger.Error(msg, append(attrs, "error", err)...)
	return err
}

// NextRetry backs off exponentially from one second to maxProvisioningBackoff.
func (w *provisionWorker) NextRetry(job *river.Job[ProvisionArgs]) time.Time {
	return time.Now().Add(provisioningBackoff(job.Attempt))
}

// provisioningBackoff is the delay after failed attempt number attempt (from 1).
func provisioningBackoff(attempt int) time.Duration {
	return min(time.Second<<min(max(attempt-1, 0), 16), maxProvisioningBackoff)
}
