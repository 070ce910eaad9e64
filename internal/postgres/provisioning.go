package postgres

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/metrics"
)

// Retry policy of a provisioning job whose attempt failed: exponential backoff from one
// second, capped at five minutes, for at most maxProvisioningAttempts attempts.
const (
	maxProvisioningAttempts = 10
	maxProvisioningBackoff  = 5 * time.Minute
)

// ProvisioningWorker completes the provisioning of new subscriptions. Jobs live in
// provisioning_jobs, written in the transaction that creates the subscription; a worker claims
// one with FOR UPDATE SKIP LOCKED and provisions the subscription and completes the job in one
// transaction. A crash at any point leaves the job pending for the next attempt, and any number
// of workers in any number of processes share the queue without taking a job twice.
type ProvisioningWorker struct {
	db       *DB
	logger   *slog.Logger
	interval time.Duration
}

// NewProvisioningWorker returns a worker over d that looks for due jobs every interval.
func NewProvisioningWorker(d *DB, logger *slog.Logger, interval time.Duration) *ProvisioningWorker {
	return &ProvisioningWorker{db: d, logger: logger, interval: interval}
}

// Run works due jobs until ctx is done. A job in progress when ctx ends is rolled back and
// stays pending.
func (w *ProvisioningWorker) Run(ctx context.Context) {
	ticker := time.NewTicker(w.interval)
	defer ticker.Stop()
	for {
		if _, err := w.WorkDue(ctx); err != nil && ctx.Err() == nil {
			w.logger.Error("provisioning: claiming jobs", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// WorkDue runs every job that is due now and returns how many it ran (successfully or not).
func (w *ProvisioningWorker) WorkDue(ctx context.Context) (int, error) {
	n := 0
	for ctx.Err() == nil {
		ran, err := w.workOne(ctx)
		if err != nil || !ran {
			return n, err
		}
		n++
	}
	return n, nil
}

// workOne claims and runs one due job; ran is false when none is due.
func (w *ProvisioningWorker) workOne(ctx context.Context) (ran bool, err error) {
	var job dbq.ProvisioningJob
	var jobErr error
	err = w.db.WithTx(ctx, func(q *dbq.Queries) error {
		var claimErr error
		job, claimErr = q.ProvisioningJobClaim(ctx)
		if errors.Is(claimErr, pgx.ErrNoRows) {
			return nil
		}
		if claimErr != nil {
			return claimErr
		}
		ran = true
		if jobErr = provision(ctx, w.db, q, job); jobErr != nil {
			return jobErr
		}
		return q.ProvisioningJobComplete(ctx, job.ID)
	})
	if jobErr == nil {
		return ran, err
	}
	if ctx.Err() != nil {
		return ran, nil // shutting down: the job stays pending
	}
	// The attempt rolled back; record it so the job backs off, in a transaction of its own.
	backoff := min(time.Duration(math.Pow(2, float64(job.Attempts)))*time.Second, maxProvisioningBackoff)
	msg := jobErr.Error()
	w.logger.Error("provisioning: attempt failed", "job_id", job.ID, "subscription_id", job.SubscriptionID,
		"attempt", job.Attempts+1, "retry_in", backoff, "error", jobErr)
	return ran, translate(w.db.queries(ctx).ProvisioningJobRetry(ctx, dbq.ProvisioningJobRetryParams{
		ID:             job.ID,
		LastError:      &msg,
		BackoffSeconds: backoff.Seconds(),
		MaxAttempts:    maxProvisioningAttempts,
	}))
}

// provision completes the provisioning of the job's subscription: the sandbox needs no
// external resources, so its service becomes active. A subscription suspended or terminated
// while it waited keeps that state; the job is done either way. The service becoming active
// publishes subscription.activated.
func provision(ctx context.Context, d *DB, q *dbq.Queries, job dbq.ProvisioningJob) error {
	row, err := q.SubscriptionGetByIDForUpdate(ctx, dbq.SubscriptionGetByIDForUpdateParams{ID: job.SubscriptionID, OrganizationID: &job.OrganizationID})
	if err != nil {
		return err
	}
	before, err := subscriptionFromRow(row)
	if err != nil {
		return err
	}
	if before.ServiceStatus != core.ServiceProvisioning {
		return nil
	}
	after := *before
	after.ServiceStatus = core.ServiceActive
	after.UpdatedAt = now()
	sub, err := updateSubscription(ctx, q, &after)
	if err != nil {
		return err
	}
	if err := audit(ctx, q, core.AuditEntry{
		OrganizationID: &sub.OrganizationID,
		Action:         "subscription.provisioned",
		ResourceType:   "subscription",
		ResourceID:     sub.ID.String(),
		Before:         before,
		After:          sub,
	}); err != nil {
		return err
	}
	return d.publish(ctx, q, sub.OrganizationID, core.EventSubscriptionActivated, sub)
}

// RegisterProvisioningMetrics exposes the depth of the provisioning queue as the gauge
// coreapi_provisioning_jobs_pending, read from PostgreSQL at every scrape (-1 when the
// database does not answer in time).
func RegisterProvisioningMetrics(m *metrics.Metrics, d *DB) error {
	return m.GaugeFunc("provisioning_jobs_pending", "Provisioning jobs waiting to run or be retried, across every process.", func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		n, err := dbq.New(d.Pool).ProvisioningJobCountPending(ctx)
		if err != nil {
			return -1
		}
		return float64(n)
	})
}
