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
	schedule := periodicSchedule(renewalInterval)
	jobs := make([]*river.PeriodicJob, len(schedule))
	for i, p := range schedule {
		args := p.args
		jobs[i] = river.NewPeriodicJob(river.PeriodicInterval(p.every),
			func() (river.JobArgs, *river.InsertOpts) { return args, nil },
			&river.PeriodicJobOpts{ID: args.Kind(), RunOnStart: true})
	}
	return jobs
}

type periodic struct {
	every time.Duration
	args  river.JobArgs
}

func periodicSchedule(renewalInterval time.Duration) []periodic {
	return []periodic{
		{10 * time.Minute, SweepIdempotencyKeysArgs{}},
		{time.Hour, MaintainPartitionsArgs{}},
		{renewalInterval, BillDueArgs{}},
	}
}

// PeriodicKinds are the kinds of the jobs River queues on a schedule, whatever requests do.
func PeriodicKinds() []string {
	schedule := periodicSchedule(time.Hour)
	kinds := make([]string, len(schedule))
	for i, p := range schedule {
		kinds[i] = p.args.Kind()
	}
	return kinds
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

// MaintainPartitionsArgs is the job that keeps the time partitions of the append-only tables
// (request logs, audit events, growth events, webhook events with their deliveries and
// attempts, usage events): it creates those ahead and drops those past retention
// (postgres.MaintainPartitions). Hourly, so a day's partition is made a week
// ahead many times over and dropped within an hour of its retention ending.
type MaintainPartitionsArgs struct{}

// Kind implements river.JobArgs.
func (MaintainPartitionsArgs) Kind() string { return "maintain_partitions" }

// InsertOpts implements river.JobArgsWithInsertOpts: a failed run waits for the next one.
func (MaintainPartitionsArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queueMaintenance, MaxAttempts: 1}
}

type maintainPartitionsWorker struct {
	river.WorkerDefaults[MaintainPartitionsArgs]
	db        *postgres.DB
	retention postgres.Retention
	logger    *slog.Logger
}

func (w *maintainPartitionsWorker) Work(ctx context.Context, _ *river.Job[MaintainPartitionsArgs]) error {
	created, dropped, err := w.db.MaintainPartitions(ctx, time.Now(), w.retention)
	for _, p := range created {
		w.logger.Info("partitions: created", "table", p.Table, "partition", p.Name, "from", p.From, "to", p.To)
	}
	for _, p := range dropped {
		w.logger.Info("partitions: dropped past retention", "table", p.Table, "partition", p.Name, "to", p.To)
	}
	if err != nil {
		w.logger.Error("partitions: maintenance", "error", err)
	}
	return err
}
