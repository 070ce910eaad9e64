package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// Renewals (docs/design.md, "Renewals and test clocks"). A subscription has a billing step due
// when its renewal arrives (the view subscription_billing_steps says which) or, cancelled, when
// the period already invoiced ends. The wall-clock worker (internal/jobs, BillDue) takes the
// steps of organizations on no test clock; a test clock's advance takes its organization's.
// Both take each step through billingStep, at the organization's billing time (billingNow's, read
// with the row lock).

// renewalReadBatches is how many batches of each worker BillDue reads the due steps for at a
// time. A read costs PostgreSQL a scan and sort of every due step (the view's order is no
// index's), so it is made rarely: at 100,000 due renewals one took 0.8 s, which with reads of
// 800 steps (one batch of 50 per worker, before) was a millisecond of CPU per renewal.
const renewalReadBatches = 10

// BillDue takes every billing step due by the wall clock, of every organization on no test
// clock, oldest first, and returns how many it took. It reads the due steps renewalReadBatches
// batches (renewalBatchSize steps) per worker at a time and takes each batch on a goroutine and a
// connection of its own: the batch's plain renewals in one transaction (renewBatch), its other
// steps (and all of them, when that transaction fails) each in a transaction of its own
// (billingStep). Any number of processes may run it at once: a step is taken under its
// subscription's row lock (one that another run or a request holds is skipped, and stays due
// for a later read), only if it is still due then, and subscription_renewals refuses a second
// renewal of a period. A step that fails is reported (with the others) and left for the next
// run; the others go on. While the API is busy the run gives way to it (renewalgiveway.go).
func (d *DB) BillDue(ctx context.Context) (int, error) {
	workers := d.renewalWorkers()
	giving := d.givingWay()
	taken := 0
	var errs []error
	for {
		rows, err := d.queries(ctx).BillingStepsDueAnyOrganization(ctx, dbq.BillingStepsDueAnyOrganizationParams{Now: now(), MaxRows: int32(renewalBatchSize * renewalReadBatches * workers)})
		if err != nil {
			return taken, errors.Join(append(errs, err)...)
		}
		took, failed := d.takeSteps(withBatchCatalogue(ctx), rows, workers, giving)
		taken += took
		errs = append(errs, failed...)
		// A subscription several periods behind comes back once per period, and a full batch
		// may hide more: read again while steps are being taken. A read without progress
		// (nothing due, or only failing or locked steps) would come back unchanged.
		if took == 0 || ctx.Err() != nil {
			return taken, errors.Join(errs...)
		}
	}
}

// renewalWorkers is how many batches BillDue takes at once: Renewals.Concurrency, or by default
// half the pool's connections (at least one), so a run never holds more than half the pool
// and requests keep the rest.
func (d *DB) renewalWorkers() int {
	if d.Renewals.Concurrency > 0 {
		return d.Renewals.Concurrency
	}
	return max(1, int(d.Pool.Config().MaxConns)/2)
}

// takeSteps takes the billing steps of rows in batches of renewalBatchSize, on workers
// goroutines, giving way to the API as giving says, skipping a subscription locked by anyone
// else, and returns how many it took and the errors of those that failed.
func (d *DB) takeSteps(ctx context.Context, rows []dueStep, workers int, giving *givingWay) (int, []error) {
	var (
		mu    sync.Mutex
		taken int
		errs  []error
		wg    sync.WaitGroup
	)
	batches := make(chan []dueStep)
	for range min(workers, (len(rows)+renewalBatchSize-1)/renewalBatchSize) {
		wg.Go(func() {
			for batch := range batches {
				took, failed := giving.take(ctx, batch, d.takeBatch)
				mu.Lock()
				taken += took
				errs = append(errs, failed...)
				mu.Unlock()
			}
		})
	}
	for batch := range slices.Chunk(rows, renewalBatchSize) {
		if ctx.Err() != nil {
			break
		}
		batches <- batch
	}
	close(batches)
	wg.Wait()
	return taken, errs
}

// takeBatch takes the steps of batch: its plain renewals together (renewBatch), then the rest
// one at a time, and returns how many it took and the errors of the steps that failed. way,
// when not nil, is how the batch transaction gives way to the API. A batch transaction that
// fails is logged, not reported: its steps are then taken one at a time, and each reports its
// own failure.
func (d *DB) takeBatch(ctx context.Context, batch []dueStep, way *batchGivingWay) (int, []error) {
	if d.renewStepByStep {
		return d.takeOneByOne(ctx, batch)
	}
	taken, rest, err := d.renewBatch(ctx, batch, way)
	if err != nil && ctx.Err() == nil {
		slog.WarnContext(ctx, "renewal batch failed; its steps are taken one at a time", "steps", len(batch), "error", err)
	}
	took, errs := d.takeOneByOne(ctx, rest)
	return taken + took, errs
}

// takeOneByOne takes each of steps in a transaction of its own (billingStep) and returns how
// many it took and the errors of those that failed.
func (d *DB) takeOneByOne(ctx context.Context, steps []dueStep) (int, []error) {
	taken := 0
	var errs []error
	for _, r := range steps {
		if ctx.Err() != nil {
			return taken, append(errs, ctx.Err())
		}
		took, err := d.billingStep(ctx, r.OrganizationID, r.ID, skipLocked)
		if err != nil {
			errs = append(errs, fmt.Errorf("subscription %s: %w", r.ID, err))
		} else if took {
			taken++
		}
	}
	return taken, errs
}

// stepLock is how billingStep takes its subscription's row lock.
type stepLock int

const (
	// waitForLock waits for whoever holds the lock: a test clock's advance takes every step
	// of its organization, in order.
	waitForLock stepLock = iota
	// skipLocked leaves a subscription someone holds alone (the step is not taken, and stays
	// due): the wall-clock run, whose other workers and other runs are taking other steps.
	skipLocked
)

// lockForBillingStep locks subscription id of organization org as lock says and returns it
// with the organization's billing time (billingNow) in one statement; pgx.ErrNoRows when
// there is no such subscription or, skipLocked, someone else holds it. Its product is held
// shared first, as for every service start (lockForServiceStart): a dunning retry that
// succeeds recovers the subscription.
func lockForBillingStep(ctx context.Context, q *dbq.Queries, org, id uuid.UUID, lock stepLock) (dbq.Subscription, time.Time, error) {
	if _, err := q.ProductLockForSubscription(ctx, dbq.ProductLockForSubscriptionParams{OrganizationID: org, ID: id}); err != nil {
		return dbq.Subscription{}, time.Time{}, err
	}
	if lock == skipLocked {
		r, err := q.BillingStepClaim(ctx, dbq.BillingStepClaimParams{WallClock: now(), OrganizationID: org, ID: id})
		return r.Subscription, r.BillingTime.UTC(), err
	}
	r, err := q.BillingStepLock(ctx, dbq.BillingStepLockParams{WallClock: now(), OrganizationID: org, ID: id})
	return r.Subscription, r.BillingTime.UTC(), err
}

// billingStep takes the billing step of subscription id of organization org that is due at
// the organization's billing time, in a transaction of its own (a savepoint within a clock's
// advance), and reports whether there was one: it locks the row (as lock says; a row skipped
// is a step not taken), checks the step is still due, then ends the service of a cancelled
// subscription, renews a live one for one period, or takes its dunning step (dunning.go).
func (d *DB) billingStep(ctx context.Context, org, id uuid.UUID, lock stepLock) (bool, error) {
	took, serviceChanged := false, false
	err := d.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		row, at, err := lockForBillingStep(ctx, q, org, id, lock)
		if lock == skipLocked && errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		due, err := q.BillingStepDue(ctx, dbq.BillingStepDueParams{OrganizationID: org, ID: id, Now: at})
		if err != nil || !due {
			return err
		}
		before, err := subscriptionFromRow(row)
		if err != nil {
			return err
		}
		after := *before
		switch {
		case before.ServiceEndDue(at):
			after.EndService(at)
			took, serviceChanged = true, true
			if err := d.issueFinalInvoice(ctx, q, before, at); err != nil {
				return err
			}
			return d.recordBillingStep(ctx, q, before, &after, at, "subscription.terminated", core.EventSubscriptionTerminated, "")
		case before.RenewalDue(at):
			if err := d.renew(ctx, q, &after, at); err != nil {
				return err
			}
			took = true
			return d.recordBillingStep(ctx, q, before, &after, at, "subscription.renewed", core.EventSubscriptionRenewed, "")
		}
		took, serviceChanged, err = d.dunningStep(ctx, q, before, at)
		return err
	})
	if serviceChanged {
		d.credentialsChanged(ctx) // the product's next operation obeys the new service status
	}
	return took, err
}

// recordBillingStep stores after, the state a billing step at at moved before to, with its
// audit action (and reason, when not empty) and publishes event.
func (d *DB) recordBillingStep(ctx context.Context, q *dbq.Queries, before, after *core.Subscription, at time.Time, action string, event core.EventType, reason string) error {
	after.UpdatedAt = at
	sub, err := updateSubscription(ctx, q, after)
	if err != nil {
		return err
	}
	return d.recordSubscriptionChange(ctx, q, before, sub, action, event, reason)
}

// recordSubscriptionChange records the move of a subscription from before to sub, as stored:
// its audit action (and reason, when not empty), and publishes event.
func (d *DB) recordSubscriptionChange(ctx context.Context, q *dbq.Queries, before, sub *core.Subscription, action string, event core.EventType, reason string) error {
	if err := audit(ctx, q, core.AuditEntry{
		OrganizationID: &sub.OrganizationID,
		Action:         action,
		ResourceType:   "subscription",
		ResourceID:     sub.ID.String(),
		Before:         before,
		After:          sub,
		Reason:         reason,
	}); err != nil {
		return err
	}
	return d.publish(ctx, q, sub.OrganizationID, event, sub)
}

// renew renews sub for one period at at (core.Subscription.Renew) on its current plan: it
// issues the period's invoice, with the usage of the period it closes, when something is due, and records the renewal, whose primary
// key refuses a second renewal of the period.
func (d *DB) renew(ctx context.Context, q *dbq.Queries, sub *core.Subscription, at time.Time) error {
	plan, err := billingPlan(ctx, q, sub.PlanID)
	if err != nil {
		return err
	}
	usage, err := periodUsage(ctx, q, sub, plan)
	if err != nil {
		return err
	}
	renewal, err := sub.Renew(plan, usage, at)
	if err != nil {
		return fmt.Errorf("renewal of subscription %s at %s: %w", sub.ID, at.Format(time.RFC3339), err)
	}
	var invoiceID *uuid.UUID
	if renewal.Invoice != nil {
		inv, err := d.issueInvoice(ctx, q, sub, renewal.Invoice)
		if err != nil {
			return err
		}
		invoiceID = &inv.ID
	}
	return q.SubscriptionRenewalInsert(ctx, dbq.SubscriptionRenewalInsertParams{
		OrganizationID: sub.OrganizationID,
		SubscriptionID: sub.ID,
		PeriodStart:    pgtype.Date{Time: renewal.PeriodStart, Valid: true},
		PeriodEnd:      pgtype.Date{Time: renewal.PeriodEnd, Valid: true},
		InvoiceID:      invoiceID,
		RenewedAt:      at,
	})
}
