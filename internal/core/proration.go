package core

import (
	"fmt"
	"math/big"
	"time"
)

// ProrationInvoice is the invoice a change of plan issues at once (docs/design.md,
// "Proration"): before is the subscription on plan old, after the same after the change at
// now to plan next (ActionChangePlan keeps the billing anchor). Its lines, in order:
//
//   - the usage of the period so far on old (usage, from the period's start or the last change
//     of plan: Subscription.UsageSoFar), rated on its own at old (RateSegment), in arrears: the
//     new plan rates only what follows;
//   - the recurring fee of next for the rest of its own period, now to after's renewal;
//   - when the recurring fee of old for the current period was invoiced (feeInvoiced: in
//     advance, so never during a trial), its unused part, now to the period's end, credited.
//
// Fees are proportional to the second: fee × remaining seconds / the period's seconds, rounded
// half-up. The credit never takes the invoice below zero: what exceeds the charges goes to the
// organization's credit balance (BalanceCredit), which later invoices use. Returns nil when
// the change charges and credits nothing (a change during a trial, to a free plan, without
// usage). The error is RateSegment's (usage too large to rate).
func ProrationInvoice(before *Subscription, old *Plan, after *Subscription, next *Plan, feeInvoiced bool, usage Usage, now time.Time) (*BillingInvoice, error) {
	inv, err := prorationDraft(before, old, after, next, feeInvoiced, usage, now)
	if err != nil || len(inv.Lines) == 0 {
		return nil, err
	}
	return inv, nil
}

// UpcomingChangeInvoice is the invoice a change from before (on old) to after (on next) at
// now would issue (ProrationInvoice), as a draft, which has no line when it would issue none
// (also when next is old: no change).
func UpcomingChangeInvoice(before *Subscription, old *Plan, after *Subscription, next *Plan, feeInvoiced bool, usage Usage, now time.Time) (*BillingInvoice, error) {
	inv, err := prorationDraft(before, old, after, next, feeInvoiced, usage, now)
	if err != nil {
		return nil, err
	}
	return asDraft(inv), nil
}

// prorationDraft is ProrationInvoice, also when it has no line.
func prorationDraft(before *Subscription, old *Plan, after *Subscription, next *Plan, feeInvoiced bool, usage Usage, now time.Time) (*BillingInvoice, error) {
	start := dateOf(now)
	d := &invoiceDraft{plan: next, start: start, end: start}
	if old.ID == next.ID { // no change
		return d.issue(false, now), nil
	}
	if err := d.rateSegment(before, old, usage, now); err != nil {
		return nil, err
	}
	if charge, chargeFrom, chargeTo := unusedFee(after, next, now); charge > 0 {
		d.end = lastDay(start, chargeTo)
		d.prorated(fmt.Sprintf("%s, %s to %s (%s)", next.Name, now.Format(time.RFC3339), chargeTo.Format(time.RFC3339), fraction(now, chargeFrom, chargeTo)), charge)
	}
	excess := d.creditUnusedFee(before, old, feeInvoiced, now)
	return d.issueCrediting(excess, CreditProration, now), nil
}

// FinalInvoice is the invoice that closes the billing of s, on plan, its current plan, when
// its service ends at now (docs/design.md, "The last invoice"): the usage not rated yet
// (Subscription.UsageSoFar, usage), in arrears. At the end of the period (a cancellation that
// took effect at the period's end) it is rated as a renewal rates it (RateUsage, with the
// minimum_spend top-up); earlier (a termination) as a part of a period (RateSegment), and the
// recurring fee's unused part is credited as a plan change credits it (when feeInvoiced),
// never below zero, the rest going to the credit balance. Returns nil when nothing is rated
// or credited; the error is RateUsage's (usage too large to rate).
func (s *Subscription) FinalInvoice(plan *Plan, usage Usage, feeInvoiced bool, now time.Time) (*BillingInvoice, error) {
	start := dateOf(now)
	d := &invoiceDraft{plan: plan, start: start, end: start}
	if end := s.periodEnd(); end != nil && !now.Before(*end) {
		if from, to, ok := s.UsageSoFar(plan, now); ok {
			return ArrearsInvoice(plan, usage, from, to, now)
		}
		return nil, nil
	}
	if err := d.rateSegment(s, plan, usage, now); err != nil {
		return nil, err
	}
	excess := d.creditUnusedFee(s, plan, feeInvoiced, now)
	if len(d.lines) == 0 {
		return nil, nil
	}
	return d.issueCrediting(excess, CreditTermination, now), nil
}

// ArrearsInvoice is the invoice, issued at now, of usage, the usage on plan of a whole period
// from from up to to (excluded) that no renewal billed: rated as the renewal at to would have
// rated it (RateUsage, with the minimum_spend top-up), in arrears, without fees. Returns nil when
// nothing is rated; the error is RateUsage's.
func ArrearsInvoice(plan *Plan, usage Usage, from, to, now time.Time) (*BillingInvoice, error) {
	start := dateOf(from)
	d := &invoiceDraft{plan: plan, start: start, end: start}
	var err error
	if d.lines, err = RateUsage(plan, usage, start, lastDay(start, to)); err != nil || len(d.lines) == 0 {
		return nil, err
	}
	return d.issueCrediting(0, "", now), nil
}

// rateSegment appends the usage of s on plan not rated yet at now, rated as a part of a
// period (RateSegment), or returns RateSegment's error.
func (d *invoiceDraft) rateSegment(s *Subscription, plan *Plan, usage Usage, now time.Time) error {
	from, to, ok := s.UsageSoFar(plan, now)
	if !ok {
		return nil
	}
	lines, err := RateSegment(plan, usage, dateOf(from), lastDay(dateOf(from), to))
	d.lines = append(d.lines, lines...)
	return err
}

// creditUnusedFee appends the credit of the unused part at now of the recurring fee of s on
// plan for its current period, when that fee was invoiced (feeInvoiced), as a proration line
// that takes the draft's net amount to zero at most, and returns what it could not take off:
// the part of the credit that goes to the credit balance.
func (d *invoiceDraft) creditUnusedFee(s *Subscription, plan *Plan, feeInvoiced bool, now time.Time) int64 {
	credit, from, to := unusedFee(s, plan, now)
	if !feeInvoiced || credit <= 0 {
		return 0
	}
	var net int64
	for _, l := range d.lines {
		net += l.Amount
	}
	taken := min(credit, net)
	description := fmt.Sprintf("Unused time on %s, %s to %s (%s)", plan.Name, now.Format(time.RFC3339), to.Format(time.RFC3339), fraction(now, from, to))
	if taken < credit {
		description += fmt.Sprintf("; %d to the credit balance", credit-taken)
	}
	end := d.end
	d.start, d.end = dateOf(now), lastDay(dateOf(now), to)
	d.prorated(description, -taken)
	d.end = maxTime(end, d.end)
	return credit - taken
}

// issueCrediting issues the draft (without the plan's discounts) at now, its period spanning
// its lines', and records excess, a credit it could not take off, as the credit the invoice
// gives the credit balance, for reason.
func (d *invoiceDraft) issueCrediting(excess int64, reason string, now time.Time) *BillingInvoice {
	d.spanLines()
	inv := d.issue(false, now)
	if excess > 0 {
		inv.BalanceCredit, inv.BalanceCreditReason = excess, reason
	}
	return inv
}

// spanLines makes the draft's period that of its lines, from the first day of any to the last
// (unchanged when it has none).
func (d *invoiceDraft) spanLines() {
	for i, l := range d.lines {
		if i == 0 {
			d.start, d.end = l.PeriodStart, l.PeriodEnd
		}
		d.start, d.end = minTime(d.start, l.PeriodStart), maxTime(d.end, l.PeriodEnd)
	}
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
// that falls after now, tax-exclusive: 0 when s is in its trial or has no period (periodEnd),
// or the plan has no fee. A tax-inclusive fee is prorated at its gross amount and its net
// part carved out of that (netAmount), as its invoice line was.
func unusedFee(s *Subscription, plan *Plan, now time.Time) (amount int64, from, to time.Time) {
	end := s.periodEnd()
	if end == nil || plan.RecurringFee == nil || *plan.RecurringFee <= 0 {
		return 0, time.Time{}, time.Time{}
	}
	to = *end
	from, ok := plan.PreviousRenewal(s.BillingAnchorAt, to)
	if !ok || now.Before(from) {
		return 0, time.Time{}, time.Time{}
	}
	gross := Prorate(*plan.RecurringFee, to.Sub(now), to.Sub(from))
	return netAmount(plan.feePrice(PriceRecurringFee), gross, VATPercent(plan.Currency)), from, to
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
