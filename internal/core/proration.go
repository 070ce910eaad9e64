package core

import (
	"fmt"
	"math/big"
	"time"
)

// ProrationInvoice is the invoice a change of plan issues at once (docs/design.md,
// "Proration"): before is the subscription on plan old, after the same after the change at
// now to plan next (ActionChangePlan keeps the billing anchor). When the recurring fee of old
// for the current period was invoiced (feeInvoiced: in advance, so never during a trial), the
// unused part, now to the period's end, is credited; the recurring fee of next is charged for the
// rest of its own period, now to after's renewal. Both are proportional to the second:
// fee × remaining seconds / the period's seconds, rounded half-up. The charge comes first,
// then the credit, which never takes the invoice below zero (what exceeds the charge is not
// carried over). Returns nil when nothing is charged (a change during a trial, to a free
// plan).
func ProrationInvoice(before *Subscription, old *Plan, after *Subscription, next *Plan, feeInvoiced bool, now time.Time) *BillingInvoice {
	inv := prorationDraft(before, old, after, next, feeInvoiced, now)
	if len(inv.Lines) == 0 {
		return nil
	}
	return inv
}

// UpcomingChangeInvoice is the invoice a change from before (on old) to after (on next) at
// now would issue (ProrationInvoice), as a draft, which has no line when it would issue none
// (also when next is old: no change).
func UpcomingChangeInvoice(before *Subscription, old *Plan, after *Subscription, next *Plan, feeInvoiced bool, now time.Time) *BillingInvoice {
	return asDraft(prorationDraft(before, old, after, next, feeInvoiced, now))
}

// prorationDraft is ProrationInvoice, also when it has no line.
func prorationDraft(before *Subscription, old *Plan, after *Subscription, next *Plan, feeInvoiced bool, now time.Time) *BillingInvoice {
	charge, chargeFrom, chargeTo := unusedFee(after, next, now)
	credit, creditFrom, creditTo := unusedFee(before, old, now)
	if !feeInvoiced {
		credit = 0
	}
	if old.ID == next.ID { // no change
		charge, credit = 0, 0
	}
	start := dateOf(now)
	d := &invoiceDraft{plan: next, start: start, end: lastDay(start, chargeTo)}
	if charge > 0 {
		d.prorated(fmt.Sprintf("%s, %s to %s (%s)", next.Name, now.Format(time.RFC3339), chargeTo.Format(time.RFC3339), fraction(now, chargeFrom, chargeTo)), charge)
	}
	if credit = min(credit, charge); credit > 0 {
		d.end = lastDay(start, creditTo)
		d.prorated(fmt.Sprintf("Unused time on %s, %s to %s (%s)", old.Name, now.Format(time.RFC3339), creditTo.Format(time.RFC3339), fraction(now, creditFrom, creditTo)), -credit)
		d.end = lastDay(start, chargeTo)
	}
	return d.issue(false, now)
}

// lastDay is the last day of a part of a period from start up to to (excluded): the day
// before to's, or start itself when to falls on it or the next day.
func lastDay(start, to time.Time) time.Time {
	if to.IsZero() {
		return start
	}
	end := dateOf(to).AddDate(0, 0, -1)
	if end.Before(start) {
		return start
	}
	return end
}

// prorated appends a proration line of amount for the draft's days.
func (d *invoiceDraft) prorated(description string, amount int64) {
	d.line(PriceRecurringFee, nil, description, amount)
	d.lines[len(d.lines)-1].Proration = true
}

// unusedFee is the part of the recurring fee of s on plan for its current period, from to to,
// that falls after now: 0 when s is in its trial or does not renew, or the plan has no fee.
func unusedFee(s *Subscription, plan *Plan, now time.Time) (amount int64, from, to time.Time) {
	if s.RenewsAt == nil || plan.RecurringFee == nil || *plan.RecurringFee <= 0 {
		return 0, time.Time{}, time.Time{}
	}
	to = *s.RenewsAt
	from, ok := plan.PreviousRenewal(s.BillingAnchorAt, to)
	if !ok || now.Before(from) {
		return 0, time.Time{}, time.Time{}
	}
	return Prorate(*plan.RecurringFee, to.Sub(now), to.Sub(from)), from, to
}

// Prorate is fee × part / whole, both counted in whole seconds, rounded half-up (part <=
// whole, whole > 0).
func Prorate(fee int64, part, whole time.Duration) int64 {
	p, w := int64(part/time.Second), int64(whole/time.Second)
	if w <= 0 {
		return 0
	}
	n := new(big.Int).Mul(big.NewInt(fee), big.NewInt(2*p))
	n.Add(n, big.NewInt(w))
	return n.Quo(n, big.NewInt(2*w)).Int64()
}

// fraction describes the share of the period from..to that remains at now, in seconds.
func fraction(now, from, to time.Time) string {
	return fmt.Sprintf("%d of %d seconds", int64(to.Sub(now)/time.Second), int64(to.Sub(from)/time.Second))
}
