package core

import (
	"time"

	"github.com/google/uuid"
)

// Dunning (docs/design.md, "Dunning"): what happens to a subscription whose invoice is unpaid
// at its due_at.
//
//   - At due_at the subscription's billing becomes overdue.
//   - At due_at + each delay of DunningSchedule a retry charges the payment method on file
//     for what is still due. The first failing retry moves billing to in_dunning and the
//     commercial status to past_due; the last one writes the subscription off: billing
//     written_off, the invoice uncollectible, commercial paused, the service suspended.
//   - A payment of everything due on the invoice, at any point (a retry that succeeds, or
//     POST /v1/invoices/{id}/payments, even once it is uncollectible), or its void, recovers
//     the subscription: billing current, commercial active, the service resumed.

// DunningSchedule is when the retries of an overdue invoice fall, after its due_at: the
// sandbox schedule, in days, so that test clocks exercise it.
var DunningSchedule = []time.Duration{3 * 24 * time.Hour, 5 * 24 * time.Hour, 7 * 24 * time.Hour}

// SuspendedByBilling is the SuspendedBy of a service suspended by a write-off: no lifecycle
// action resumes it, only the payment of the invoice written off.
const SuspendedByBilling = "billing"

// Dunning is the dunning of one unpaid invoice of a subscription.
type Dunning struct {
	// InvoiceID is the invoice being dunned; nil while billing is current.
	InvoiceID *uuid.UUID `json:"invoice_id,omitempty"`
	// Retries is how many retries have failed.
	Retries int `json:"retries,omitempty"`
	// NextAt is when the next retry falls due; nil when none will (current, written off).
	NextAt *time.Time `json:"next_at,omitempty"`
}

// DunningRetryDue reports whether the next retry of s's dunning has fallen due at now.
func (s *Subscription) DunningRetryDue(now time.Time) bool {
	return s.Dunning.NextAt != nil && !s.Dunning.NextAt.After(now) && s.ServiceStatus != ServiceTerminated
}

// BecomeOverdue starts the dunning of inv, unpaid at its due_at: billing overdue, the first
// retry scheduled (event EventSubscriptionOverdue).
func (s *Subscription) BecomeOverdue(inv *BillingInvoice) {
	s.BillingStatus = BillingOverdue
	s.Dunning = Dunning{InvoiceID: &inv.ID, NextAt: retryAt(inv, 0)}
}

// FailRetry records that the retry due at now failed: the first failure puts billing in
// dunning and the subscription commercially past due, the last one writes it off at now
// (WriteOff). inv is the invoice dunned. It reports whether s is written off (event
// EventSubscriptionWrittenOff, else EventSubscriptionPaymentRetryFailed).
func (s *Subscription) FailRetry(inv *BillingInvoice, now time.Time) (writtenOff bool) {
	s.Dunning.Retries++
	if s.Dunning.Retries >= len(DunningSchedule) {
		s.WriteOff(now)
		return true
	}
	s.BillingStatus = BillingInDunning
	if s.CommercialStatus == CommercialActive {
		s.CommercialStatus = CommercialPastDue
	}
	s.Dunning.NextAt = retryAt(inv, s.Dunning.Retries)
	return false
}

// WriteOff writes s off at now: billing written_off, no further retry, commercially paused
// (a cancelled subscription stays cancelled) and its running service suspended by billing. A
// service already suspended (by the operator, say) stays suspended by whoever did it. The
// caller marks the invoice uncollectible.
func (s *Subscription) WriteOff(now time.Time) {
	s.BillingStatus, s.Dunning.NextAt = BillingWrittenOff, nil
	if s.CommercialStatus == CommercialActive || s.CommercialStatus == CommercialPastDue {
		s.CommercialStatus = CommercialPaused
	}
	switch s.ServiceStatus {
	case ServiceProvisioning, ServiceActive, ServiceDegraded:
		s.ServiceStatus, s.SuspendedBy, s.SuspendedAt = ServiceSuspended, SuspendedByBilling, &now
	}
}

// Recover ends the dunning of s, whose invoice has been paid in full (or voided) at now: billing
// current, commercially active again (from past_due or paused), a service suspended by
// billing resumed. Periods that opened and ended while it was written off (paused, not
// renewed) are not billed: renewal resumes with the period in progress at now, on plan, its
// current plan. When that skips renewals, the first one skipped closed the period the
// write-off interrupted, whose usage no renewal bills now: the caller bills it
// (ArrearsInvoice over the UsagePeriod of s as it was before).
func (s *Subscription) Recover(plan *Plan, now time.Time) {
	wasWrittenOff := s.BillingStatus == BillingWrittenOff
	s.BillingStatus, s.Dunning = BillingCurrent, Dunning{}
	if s.CommercialStatus == CommercialPastDue || s.CommercialStatus == CommercialPaused {
		s.CommercialStatus = CommercialActive
	}
	if s.ServiceStatus == ServiceSuspended && s.SuspendedBy == SuspendedByBilling {
		s.resumeService()
	}
	for wasWrittenOff && s.RenewsAt != nil {
		next := plan.NextRenewal(s.BillingAnchorAt, *s.RenewsAt)
		if next == nil || next.After(now) {
			break
		}
		s.RenewsAt = next
	}
}

// Dunned reports whether inv is the invoice s is being dunned for.
func (s *Subscription) Dunned(inv *BillingInvoice) bool {
	return s.Dunning.InvoiceID != nil && *s.Dunning.InvoiceID == inv.ID
}

// retryAt is when retry n (0-based) of inv falls due.
func retryAt(inv *BillingInvoice, n int) *time.Time {
	t := inv.DueAt.Add(DunningSchedule[n])
	return &t
}
