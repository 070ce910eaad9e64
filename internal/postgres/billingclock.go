package postgres

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// billingNow is the time billing uses for organization org: the frozen time of its test clock,
// or the wall clock when it is on none. Every billing decision (a subscription's start, a plan
// selection's invoice, a renewal, the end of a cancelled service) takes its time from here, so
// an organization on a clock is never billed by the wall clock. Called in a transaction, it
// reads the clock as that transaction sees it: each step of a clock's advance bills at the
// time the advance has reached. No clock (no row) is the wall clock; a read that fails
// otherwise answers the wall clock too, but it has aborted the transaction, which therefore
// commits nothing billed at that time (every caller reads it in a transaction). A billing
// step reads the same time with its subscription's lock, in one statement (BillingStepLock).
func (d *DB) billingNow(ctx context.Context, org uuid.UUID) time.Time {
	frozen, err := d.queries(ctx).TestClockFrozenTime(ctx, org)
	if err != nil {
		return now()
	}
	return frozen.UTC()
}
