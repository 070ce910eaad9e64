package core_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/core"
)

func TestRenewalInvoice(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 4, 1, 9, 31, 0, 0, time.UTC)
	plan := func(period string, setup, recurring *int64, trial *core.TrialPolicy, discount int64) *core.Plan {
		p := &core.Plan{Name: "Plan", BillingPeriod: period, Currency: "SAR", SetupFee: setup, RecurringFee: recurring, TrialPolicy: trial}
		if discount != 0 {
			p.Prices = []*core.Price{{ComponentType: core.PriceDiscount, Amount: &discount, Status: "active"}}
		}
		return p
	}
	trial := func(days int, payment bool) *core.TrialPolicy {
		return &core.TrialPolicy{TrialDays: days, RequiresPaymentMethod: payment}
	}
	type line struct {
		component string
		amount    int64
	}
	cases := []struct {
		name                           string
		plan                           *core.Plan
		renewsAt, next                 time.Time
		trialEnd                       bool
		none                           bool
		start, end                     string
		lines                          []line
		subtotal, discount, tax, total int64
	}{
		{name: "MonthlyRecurringOnly", plan: plan("monthly", ptr[int64](50000), ptr[int64](29900), nil, 0),
			renewsAt: time.Date(2025, 4, 1, 9, 30, 0, 0, time.UTC), next: time.Date(2025, 5, 1, 9, 30, 0, 0, time.UTC),
			start: "2025-04-01", end: "2025-04-30", lines: []line{{"recurring_fee", 29900}}, subtotal: 29900, tax: 4485, total: 34385},
		{name: "AnnualNoDiscountAfterFirst", plan: plan("annual", ptr[int64](50000), ptr[int64](299000), nil, -50000),
			renewsAt: time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC), next: time.Date(2027, 3, 1, 9, 30, 0, 0, time.UTC),
			start: "2026-03-01", end: "2027-02-28", lines: []line{{"recurring_fee", 299000}}, subtotal: 299000, tax: 44850, total: 343850},
		{name: "TrialEndWithoutPaymentMethodBillsSetup", plan: plan("monthly", ptr[int64](50000), ptr[int64](14900), trial(30, false), 0),
			renewsAt: time.Date(2025, 3, 31, 10, 0, 0, 0, time.UTC), next: time.Date(2025, 4, 30, 10, 0, 0, 0, time.UTC), trialEnd: true,
			start: "2025-03-31", end: "2025-04-29", lines: []line{{"setup_fee", 50000}, {"recurring_fee", 14900}}, subtotal: 64900, tax: 9735, total: 74635},
		{name: "TrialEndWithoutPaymentMethodDiscounted", plan: plan("monthly", nil, ptr[int64](14900), trial(30, false), -4900),
			renewsAt: time.Date(2025, 3, 31, 10, 0, 0, 0, time.UTC), next: time.Date(2025, 4, 30, 10, 0, 0, 0, time.UTC), trialEnd: true,
			start: "2025-03-31", end: "2025-04-29", lines: []line{{"recurring_fee", 14900}, {"discount", -4900}}, subtotal: 14900, discount: 4900, tax: 1500, total: 11500},
		{name: "TrialEndWithPaymentMethodSetupAlreadyBilled", plan: plan("monthly", ptr[int64](100000), ptr[int64](99900), trial(14, true), 0),
			renewsAt: time.Date(2025, 3, 15, 9, 30, 0, 0, time.UTC), next: time.Date(2025, 4, 15, 9, 30, 0, 0, time.UTC), trialEnd: true,
			start: "2025-03-15", end: "2025-04-14", lines: []line{{"recurring_fee", 99900}}, subtotal: 99900, tax: 14985, total: 114885},
		{name: "LaterRenewalOfTrialPlanNoSetup", plan: plan("monthly", ptr[int64](50000), ptr[int64](14900), trial(30, false), 0),
			renewsAt: time.Date(2025, 4, 30, 10, 0, 0, 0, time.UTC), next: time.Date(2025, 5, 30, 10, 0, 0, 0, time.UTC),
			start: "2025-04-30", end: "2025-05-29", lines: []line{{"recurring_fee", 14900}}, subtotal: 14900, tax: 2235, total: 17135},
		{name: "FreePlanNothingDue", plan: plan("monthly", nil, ptr[int64](0), nil, 0),
			renewsAt: time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC), next: time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC), none: true},
		{name: "UsageOnlyNothingDue", plan: plan("usage_only", nil, nil, nil, 0),
			renewsAt: time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC), next: time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC), none: true},
		{name: "RoundsHalfUp", plan: plan("monthly", nil, ptr[int64](30), nil, 0),
			renewsAt: time.Date(2025, 1, 31, 0, 0, 0, 0, time.UTC), next: time.Date(2025, 2, 28, 0, 0, 0, 0, time.UTC),
			start: "2025-01-31", end: "2025-02-27", lines: []line{{"recurring_fee", 30}}, subtotal: 30, tax: 5, total: 35},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			inv := core.RenewalInvoice(tc.plan, tc.renewsAt, tc.next, tc.trialEnd, true, nil, now)
			if tc.none {
				if inv != nil {
					t.Fatalf("want no invoice, got %+v", inv)
				}
				return
			}
			if inv == nil {
				t.Fatal("want an invoice, got none")
			}
			if s, e := inv.PeriodStart.Format(time.DateOnly), inv.PeriodEnd.Format(time.DateOnly); s != tc.start || e != tc.end {
				t.Errorf("period %s..%s, want %s..%s", s, e, tc.start, tc.end)
			}
			if len(inv.Lines) != len(tc.lines) {
				t.Fatalf("lines %+v, want %+v", inv.Lines, tc.lines)
			}
			var sum int64
			for i, l := range inv.Lines {
				if l.ComponentType != tc.lines[i].component || l.Amount != tc.lines[i].amount {
					t.Errorf("line %d %s %d, want %s %d", i, l.ComponentType, l.Amount, tc.lines[i].component, tc.lines[i].amount)
				}
				sum += l.Amount
			}
			if inv.Subtotal != tc.subtotal || inv.Discount != tc.discount || inv.Tax != tc.tax || inv.Total != tc.total {
				t.Errorf("subtotal/discount/tax/total = %d/%d/%d/%d, want %d/%d/%d/%d",
					inv.Subtotal, inv.Discount, inv.Tax, inv.Total, tc.subtotal, tc.discount, tc.tax, tc.total)
			}
			if sum != inv.Subtotal-inv.Discount || inv.Total != sum+inv.Tax {
				t.Errorf("lines sum to %d; subtotal - discount %d, total %d", sum, inv.Subtotal-inv.Discount, inv.Total)
			}
			if !inv.IssuedAt.Equal(now) || !inv.DueAt.Equal(now.Add(core.PaymentTerms)) || inv.Status != core.InvoiceIssued {
				t.Errorf("issued %v due %v status %s", inv.IssuedAt, inv.DueAt, inv.Status)
			}
		})
	}
}

// TestSubscription_Renew follows one subscription through its trial end and two renewals,
// one of them overdue: each renewal opens the next whole period, and the trial end alone
// bills the setup fee.
func TestSubscription_Renew(t *testing.T) {
	t.Parallel()
	setup, fee := int64(50000), int64(14900)
	plan := &core.Plan{ID: uuid.New(), Name: "Standard", BillingPeriod: core.BillingPeriodMonthly, Currency: "SAR",
		SetupFee: &setup, RecurringFee: &fee, TrialPolicy: &core.TrialPolicy{TrialDays: 30}}
	started := time.Date(2025, 1, 1, 10, 0, 0, 0, time.UTC)
	anchor := plan.CycleAnchor(started) // 2025-01-31T10:00
	s := &core.Subscription{CommercialStatus: core.CommercialActive, ServiceStatus: core.ServiceActive, BillingAnchorAt: anchor,
		RenewsAt: plan.NextRenewal(anchor, started)}
	if s.RenewalDue(anchor.Add(-time.Microsecond)) || !s.RenewalDue(anchor) {
		t.Fatalf("renewal due before the trial's end, or not at it (renews at %v)", s.RenewsAt)
	}
	steps := []struct {
		start, end, renews string
		subtotal           int64
	}{
		{"2025-01-31", "2025-02-27", "2025-02-28T10:00:00Z", setup + fee},
		{"2025-02-28", "2025-03-30", "2025-03-31T10:00:00Z", fee},
		{"2025-03-31", "2025-04-29", "2025-04-30T10:00:00Z", fee},
	}
	now := time.Date(2025, 4, 2, 0, 0, 0, 0, time.UTC) // two renewals overdue after the first
	for i, st := range steps {
		if !s.RenewalDue(now) {
			t.Fatalf("step %d: not due at %v (renews at %v)", i, now, s.RenewsAt)
		}
		r := must(s.Renew(plan, nil, now))(t)
		if got := r.PeriodStart.Format(time.DateOnly) + ".." + r.PeriodEnd.Format(time.DateOnly); got != st.start+".."+st.end {
			t.Errorf("step %d: period %s, want %s..%s", i, got, st.start, st.end)
		}
		if r.Invoice == nil || r.Invoice.Subtotal != st.subtotal || r.Invoice.PeriodStart != r.PeriodStart {
			t.Errorf("step %d: invoice %+v, want subtotal %d", i, r.Invoice, st.subtotal)
		}
		if got := s.RenewsAt.Format(time.RFC3339); got != st.renews {
			t.Errorf("step %d: renews at %s, want %s", i, got, st.renews)
		}
	}
	if s.RenewalDue(now) {
		t.Errorf("still due at %v after catching up (renews at %v)", now, s.RenewsAt)
	}
}

// TestSubscription_CancelRunsToPeriodEnd: cancel keeps the withdrawn renewal as the end of the
// service, reactivate restores it (even overdue, so no period goes unbilled), and the service
// ends exactly at it.
func TestSubscription_CancelRunsToPeriodEnd(t *testing.T) {
	t.Parallel()
	plan := &core.Plan{ID: uuid.New(), BillingPeriod: core.BillingPeriodMonthly}
	anchor := time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC)
	renews := anchor.AddDate(0, 1, 0)
	s := subscriptionIn(core.CommercialActive, core.ServiceActive, plan.ID, anchor)
	if err := s.Apply(core.ActionCancel, "organization", plan, anchor.AddDate(0, 0, 5)); err != nil {
		t.Fatal(err)
	}
	if s.RenewsAt != nil || s.ServiceEndsAt == nil || !s.ServiceEndsAt.Equal(renews) {
		t.Fatalf("after cancel: renews %v, service ends %v; want none and %v", s.RenewsAt, s.ServiceEndsAt, renews)
	}
	if s.ServiceEndDue(renews.Add(-time.Microsecond)) || !s.ServiceEndDue(renews) || s.RenewalDue(renews) {
		t.Error("the service end is due before the period's end, or not at it, or it still renews")
	}
	late := renews.Add(time.Hour)
	if err := s.Apply(core.ActionReactivate, "organization", plan, late); err != nil {
		t.Fatal(err)
	}
	if s.RenewsAt == nil || !s.RenewsAt.Equal(renews) || s.ServiceEndsAt != nil || !s.RenewalDue(late) {
		t.Fatalf("after a late reactivate: renews %v, service ends %v; want the withdrawn renewal %v, due", s.RenewsAt, s.ServiceEndsAt, renews)
	}
	if err := s.Apply(core.ActionCancel, "organization", plan, late); err != nil {
		t.Fatal(err)
	}
	s.EndService(late)
	if s.ServiceStatus != core.ServiceTerminated || s.TerminatedAt == nil || !s.TerminatedAt.Equal(late) || s.ServiceEndDue(late) {
		t.Errorf("after EndService: %s terminated at %v", s.ServiceStatus, s.TerminatedAt)
	}
	checkInvariants(t, "EndService", s)
}
