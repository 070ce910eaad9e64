package core_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/core"
)

func TestProrate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		fee         int64
		part, whole time.Duration
		want        int64
	}{
		{29900, 21 * 24 * time.Hour, 31 * 24 * time.Hour, 20255}, // 20254.84
		{99900, 21 * 24 * time.Hour, 31 * 24 * time.Hour, 67674}, // 67674.19
		{3, time.Second, 2 * time.Second, 2},                     // 1.5 rounds up
		{1, time.Second, 3 * time.Second, 0},
		{1, 1500 * time.Millisecond, 3 * time.Second, 0}, // whole seconds: 1 of 3
		{29900, 0, 31 * 24 * time.Hour, 0},
		{29900, time.Hour, 0, 0},
	} {
		if got := core.Prorate(tc.fee, tc.part, tc.whole); got != tc.want {
			t.Errorf("Prorate(%d, %v, %v) = %d, want %d", tc.fee, tc.part, tc.whole, got, tc.want)
		}
	}
}

// TestProrationInvoice changes plans ten days into a 31-day March: 21 of 31 days are left.
func TestProrationInvoice(t *testing.T) {
	t.Parallel()
	anchor := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	now := time.Date(2025, 3, 11, 0, 0, 0, 0, time.UTC)
	plan := func(name, period string, fee int64) *core.Plan {
		return &core.Plan{ID: uuid.New(), Name: name, BillingPeriod: period, Currency: "SAR", RecurringFee: &fee}
	}
	growth, business := plan("Growth", "monthly", 29900), plan("Business", "monthly", 99900)
	annual := plan("Growth (annual)", "annual", 299000)
	change := func(old, next *core.Plan, anchor time.Time, feeInvoiced bool) *core.BillingInvoice {
		before := &core.Subscription{CommercialStatus: core.CommercialActive, ServiceStatus: core.ServiceActive,
			BillingAnchorAt: anchor, RenewsAt: old.NextRenewal(anchor, now)}
		after := *before
		if err := after.Apply(core.ActionChangePlan, "organization", next, now); err != nil {
			t.Fatal(err)
		}
		return must(core.ProrationInvoice(before, old, &after, next, feeInvoiced, nil, now))(t)
	}
	type want struct {
		amounts                        []int64
		subtotal, discount, tax, total int64
		end                            string
		balance                        int64 // to the credit balance
	}
	check := func(name string, inv *core.BillingInvoice, w want) {
		t.Helper()
		var amounts []int64
		var taxes int64
		for _, l := range inv.Lines {
			amounts = append(amounts, l.Amount)
			taxes += l.Tax
			if !l.Proration || l.ComponentType != core.PriceRecurringFee || l.Quantity*l.UnitAmount != l.Amount {
				t.Errorf("%s: line %+v", name, l)
			}
		}
		if len(amounts) != len(w.amounts) || (len(amounts) > 0 && amounts[0] != w.amounts[0]) || (len(amounts) > 1 && amounts[1] != w.amounts[1]) {
			t.Errorf("%s: amounts %v, want %v", name, amounts, w.amounts)
		}
		if inv.Subtotal != w.subtotal || inv.Discount != w.discount || inv.Tax != w.tax || inv.Total != w.total || taxes != inv.Tax {
			t.Errorf("%s: %d/%d/%d/%d (line taxes %d), want %d/%d/%d/%d", name, inv.Subtotal, inv.Discount, inv.Tax, inv.Total, taxes,
				w.subtotal, w.discount, w.tax, w.total)
		}
		if got := inv.PeriodStart.Format(time.DateOnly) + ".." + inv.PeriodEnd.Format(time.DateOnly); got != "2025-03-11.."+w.end {
			t.Errorf("%s: period %s", name, got)
		}
		if inv.BalanceCredit != w.balance || (w.balance > 0) != (inv.BalanceCreditReason == core.CreditProration) {
			t.Errorf("%s: to the balance %d (%q), want %d", name, inv.BalanceCredit, inv.BalanceCreditReason, w.balance)
		}
		if !inv.IssuedAt.Equal(now) || inv.Status != core.InvoiceIssued {
			t.Errorf("%s: issued %v %s", name, inv.IssuedAt, inv.Status)
		}
	}
	// 99900 × 21/31 = 67674.19 charged, 29900 × 21/31 = 20254.84 credited; VAT 15 % of 47419.
	check("Upgrade", change(growth, business, anchor, true), want{[]int64{67674, -20255}, 67674, 20255, 7113, 54532, "2025-03-31", 0})
	// The credit exceeds the charge: capped, the invoice totals zero, 67674 - 20255 = 47419 to
	// the credit balance.
	check("Downgrade", change(business, growth, anchor, true), want{[]int64{20255, -20255}, 20255, 20255, 0, 0, "2025-03-31", 47419})
	// To an annual plan on the same anchor: 299000 × 355/365 = 290808.22 for the rest of its year.
	check("ToAnnual", change(growth, annual, anchor, true), want{[]int64{290808, -20255}, 290808, 20255, 40583, 311136, "2026-02-28", 0})
	// A period whose fee was not invoiced (a suspended one) is not credited.
	check("NotInvoiced", change(growth, business, anchor, false), want{[]int64{67674}, 67674, 0, 10151, 77825, "2025-03-31", 0})
	// During a trial (the anchor is ahead) nothing was billed: no proration.
	if inv := change(growth, business, now.AddDate(0, 0, 3), true); inv != nil {
		t.Errorf("trial: %+v", inv)
	}
	if inv := must(core.UpcomingChangeInvoice(&core.Subscription{BillingAnchorAt: anchor, RenewsAt: growth.NextRenewal(anchor, now)}, growth,
		&core.Subscription{BillingAnchorAt: anchor, RenewsAt: growth.NextRenewal(anchor, now)}, growth, true, nil, now))(t); len(inv.Lines) != 0 || inv.Status != core.InvoiceDraft || inv.IssuedAt != nil {
		t.Errorf("no change: %+v", inv)
	}
	// To a free plan: nothing charged, the whole credit to the balance, on an invoice of zero
	// that records it.
	check("ToFree", change(growth, plan("Free", "monthly", 0), anchor, true), want{[]int64{0}, 0, 0, 0, 0, "2025-03-31", 20255})
	// To a free plan from a period not invoiced: nothing at all.
	if inv := change(growth, plan("Free", "monthly", 0), anchor, false); inv != nil {
		t.Errorf("free, not invoiced: %+v", inv)
	}
}
