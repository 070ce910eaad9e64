package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/provider/coreapi/internal/postgres"
)

// DefaultRenewalInterval is how often, by default, the renewal run looks for renewals that
// have arrived and cancelled services whose period has ended.
const DefaultRenewalInterval = time.Minute

// BillDueArgs is the periodic renewal run (postgres.DB.BillDue): every billing step due by
// the wall clock, of every organization on no test clock.
type BillDueArgs struct{}

// Kind implements river.JobArgs.
func (BillDueArgs) Kind() string { return "bill_due" }

// InsertOpts implements river.JobArgsWithInsertOpts: a failed run waits for the next one,
// which takes up what it left (a step is due until it is taken).
func (BillDueArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queueBilling, MaxAttempts: 1}
}

type billDueWorker struct {
	river.WorkerDefaults[BillDueArgs]
	db     *postgres.DB
	logger *slog.Logger
}

// Work runs the renewal run. Runs may overlap across processes (a run outlasting the interval,
// or one whose process died): each step is taken once whatever the number of runs.
func (w *billDueWorker) Work(ctx context.Context, _ *river.Job[BillDueArgs]) error {
	n, err := w.db.BillDue(ctx)
	if n > 0 {
		w.logger.Info("renewals: billing steps taken", "steps", n)
	}
	if err != nil {
		w.logger.Error("renewals: billing steps failed", "error", err)
	}
	return err
}
