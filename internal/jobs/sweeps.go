package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/provider/coreapi/internal/postgres"
)

// The renewal run and the sweeps run as River periodic jobs: the elected leader among the
// processes inserts them on their schedule (and once when it starts leading), and any process
// works them. The renewal run starts every renewalInterval.
func periodicJobs(renewalInterval time.Duration) []*river.PeriodicJob {
	every := func(interval time.Duration, args river.JobArgs) *river.PeriodicJob {
		return river.NewPeriodicJob(river.PeriodicInterval(interval),
			func() (river.JobArgs, *river.InsertOpts) { return args, nil },
			&river.PeriodicJobOpts{ID: args.Kind(), RunOnStart: true})
	}
	return []*river.PeriodicJob{
		every(10*time.Minute, SweepIdempotencyKeysArgs{}),
		every(time.Hour, SweepWebhookEventsArgs{}),
		every(renewalInterval, BillDueArgs{}),
	}
}

// SweepIdempotencyKeysArgs is the job that deletes expired idempotency records.
type SweepIdempotencyKeysArgs struct{}

// Kind implements river.JobArgs.
func (SweepIdempotencyKeysArgs) Kind() string { return "sweep_idempotency_keys" }

// InsertOpts implements river.JobArgsWithInsertOpts: a failed sweep waits for the next one.
func (SweepIdempotencyKeysArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queueMaintenance, MaxAttempts: 1}
}

type sweepIdempotencyKeysWorker struct {
	river.WorkerDefaults[SweepIdempotencyKeysArgs]
	db     *postgres.DB
	logger *slog.Logger
}

func (w *sweepIdempotencyKeysWorker) Work(ctx context.Context, _ *river.Job[SweepIdempotencyKeysArgs]) error {
	postgres.SweepIdempotencyKeys(ctx, w.db, w.logger)
	return nil
}

// SweepWebhookEventsArgs is the job that deletes finished webhook events past their retention.
type SweepWebhookEventsArgs struct{}

// Kind implements river.JobArgs.
func (SweepWebhookEventsArgs) Kind() string { return "sweep_webhook_events" }

// InsertOpts implements river.JobArgsWithInsertOpts: a failed sweep waits for the next one.
func (SweepWebhookEventsArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queueMaintenance, MaxAttempts: 1}
}

type sweepWebhookEventsWorker struct {
	river.WorkerDefaults[SweepWebhookEventsArgs]
	db        *postgres.DB
	retention time.Duration
	logger    *slog.Logger
}

// A sweep deletes webhook events in batches of webhookSweepBatch, each its own short
// statement, and at most webhookSweepBatches of them per run: a backlog (a lowered retention,
// a sweep that could not run) goes over several hourly runs instead of one long one.
const (
	webhookSweepBatch   = 5000
	webhookSweepBatches = 20
)

func (w *sweepWebhookEventsWorker) Work(ctx context.Context, _ *river.Job[SweepWebhookEventsArgs]) error {
	var swept int64
	for range webhookSweepBatches {
		n, err := w.db.SweepWebhookEvents(ctx, w.retention, webhookSweepBatch)
		swept += n
		if err != nil {
			w.logger.Error("webhooks: sweeping old events", "error", err, "events", swept)
			return err
		}
		if n < webhookSweepBatch {
			break
		}
	}
	if swept > 0 {
		w.logger.Info("webhooks: swept old events", "events", swept)
	}
	return nil
}
