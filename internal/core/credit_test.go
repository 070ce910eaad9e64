package core_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/core"
)

// The plans of the billing-gaps tests, on one metric m, in a 31-day March anchored on
// March 1: Starter (fee 10000; 2 included, then 100 a unit; minimum spend 1000) and Pro (fee
// 40000; graduated: 5 free, then 50 a unit).
func gapPlans() (starter, pro *core.Plan) {
	metric := "m"
	starter = &core.Plan{ID: uuid.New(), Name: "Starter", BillingPeriod: "monthly", Currency: "SAR", RecurringFee: ptr[int64](10000),
		IncludedUsage: []core.IncludedUsage{{Metric: metric, Quantity: 2}},
		Prices: []*core.Price{
			{ID: uuid.New(), ComponentType: core.PricePerUnit, Metric: &metric, UnitAmount: ptr[int64](100), Status: core.PriceActive},
			{ID: uuid.New(), ComponentType: core.PriceMinimumSpend, Amount: ptr[int64](1000), Status: core.PriceActive},
		}}
	pro = &core.Plan{ID: uuid.New(), Name: "Pro", BillingPeriod: "monthly", Currency: "SAR", RecurringFee: ptr[int64](40000),
		Prices: []*core.Price{{ID: uuid.New(), ComponentType: core.PriceGraduatedUsage, Metric: &metric, Status: core.PriceActive,
			Tiers: []core.PriceTier{{UpperBound: ptr(5.0), UnitAmount: 0}, {UnitAmount: 50}}}}}
	return starter, pro
}

var (
	march1  = time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	march11 = time.Date(2025, 3, 11, 0, 0, 0, 0, time.UTC) // 21 of 31 days left
	april1  = time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC)
)

// onPlan is a subscription on plan since march1, renewing on april1.
func onPlan(plan *core.Plan) *core.Subscription {
	return &core.Subscription{PlanID: plan.ID, CommercialStatus: core.CommercialActive, ServiceStatus: core.ServiceActive,
		BillingAnchorAt: march1, RenewsAt: plan.NextRenewal(march1, march1)}
}

// invoiceWant is an invoice's hand-computed amounts: its lines, totals and period, and what
// it gives the credit balance.
type invoiceWant struct {
	amounts                        []int64
	subtotal, discount, tax, total int64
	period                         string
	balance                        int64
}

func checkInvoice(t *testing.T, inv *core.BillingInvoice, w invoiceWant) {
	t.Helper()
	if inv == nil {
		t.Fatalf("no invoice, want %+v", w)
	}
	var amounts []int64
	var taxes int64
	for _, l := range inv.Lines {
		amounts = append(amounts, l.Amount)
		taxes += l.Tax
		if l.Quantity*l.UnitAmount != l.Amount {
			t.Errorf("line %+v: quantity × unit amount", l)
		}
	}
	if len(amounts) != len(w.amounts) {
		t.Fatalf("amounts %v, want %v", amounts, w.amounts)
	}
	for i := range amounts {
		if amounts[i] != w.amounts[i] {
			t.Errorf("amounts %v, want %v", amounts, w.amounts)
		}
	}
	if inv.Subtotal != w.subtotal || inv.Discount != w.discount || inv.Tax != w.tax || inv.Total != w.total || taxes != inv.Tax {
		t.Errorf("totals %d/%d/%d/%d (line taxes %d), want %d/%d/%d/%d", inv.Subtotal, inv.Discount, inv.Tax, inv.Total, taxes,
			w.subtotal, w.discount, w.tax, w.total)
	}
	if got := inv.PeriodStart.Format(time.DateOnly) + ".." + inv.PeriodEnd.Format(time.DateOnly); w.period != "" && got != w.period {
		t.Errorf("period %s, want %s", got, w.period)
	}
	if inv.BalanceCredit != w.balance {
		t.Errorf("to the credit balance %d, want %d", inv.BalanceCredit, w.balance)
	}
}

// TestPlanChangeRatesUsagePerPlan: the usage before a change is rated at the old plan on the
// change's invoice, the usage after it at the new plan on the renewal.
func TestPlanChangeRatesUsagePerPlan(t *testing.T) {
	t.Parallel()
	starter, pro := gapPlans()
	before := onPlan(starter)
	after := *before
	if err := after.Apply(core.ActionChangePlan, "organization", pro, march11); err != nil {
		t.Fatal(err)
	}
	// 7 used on Starter: 5 billable × 100 = 500, no minimum-spend top-up for a part of a
	// period; Pro 40000 × 21/31 = 27096.77 charged; Starter 10000 × 21/31 = 6774.19 credited.
	// VAT 15 % of 27597 - 6774 = 20823: 3123.45.
	inv := must(core.ProrationInvoice(before, starter, &after, pro, true, core.Usage{"m": 7}, march11))(t)
	checkInvoice(t, inv, invoiceWant{amounts: []int64{500, 27097, -6774}, subtotal: 27597, discount: 6774, tax: 3123, total: 23946,
		period: "2025-03-01..2025-03-31"})
	if l := inv.Lines[0]; l.ComponentType != core.PricePerUnit || l.Proration || l.PeriodStart != march1 || l.PeriodEnd != march11.AddDate(0, 0, -1) {
		t.Errorf("usage line %+v", l)
	}
	// The usage period of the renewal starts at the change.
	from, to, ok := after.UsagePeriod(pro)
	if !ok || !from.Equal(march11) || !to.Equal(april1) {
		t.Errorf("usage period %v..%v %v", from, to, ok)
	}
	// 8 used on Pro after the change: 3 beyond the 5 free × 50 = 150, from March 11; April's
	// fee 40000. VAT 15 % of 40150 = 6022.5, half-up.
	renewing := after
	renewal := must(renewing.Renew(pro, core.Usage{"m": 8}, april1))(t)
	checkInvoice(t, renewal.Invoice, invoiceWant{amounts: []int64{150, 40000}, subtotal: 40150, tax: 6023, total: 46173,
		period: "2025-03-11..2025-04-30"})
	// A second change in the period rates from the first one.
	again := after
	if err := again.Apply(core.ActionChangePlan, "organization", starter, march11.AddDate(0, 0, 10)); err != nil {
		t.Fatal(err)
	}
	if from, _, _ := again.UsagePeriod(starter); !from.Equal(march11.AddDate(0, 0, 10)) {
		t.Errorf("after a second change, usage from %v", from)
	}
	if from, to, _ := after.UsageSoFar(pro, march11.AddDate(0, 0, 10)); !from.Equal(march11) || !to.Equal(march11.AddDate(0, 0, 10)) {
		t.Errorf("usage so far %v..%v", from, to)
	}
	// A change to the current plan rates nothing.
	if inv := must(core.UpcomingChangeInvoice(before, starter, before, starter, true, core.Usage{"m": 7}, march11))(t); len(inv.Lines) != 0 {
		t.Errorf("no change: %+v", inv.Lines)
	}
}

// TestFinalInvoice: the last invoice of a cancelled or terminated subscription.
func TestFinalInvoice(t *testing.T) {
	t.Parallel()
	starter, _ := gapPlans()
	cancelled := func() *core.Subscription {
		s := onPlan(starter)
		if err := s.Apply(core.ActionCancel, "organization", nil, march11); err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, tc := range []struct {
		name     string
		sub      *core.Subscription
		usage    int64
		invoiced bool
		at       time.Time
		want     *invoiceWant
	}{
		// At the period's end: rated as a renewal, 1 billable × 100 topped up to the minimum
		// spend 1000; VAT 150.
		{"CancelledAtPeriodEnd", cancelled(), 3, true, april1,
			&invoiceWant{amounts: []int64{100, 900}, subtotal: 1000, tax: 150, total: 1150, period: "2025-03-01..2025-03-31"}},
		// Ended later than the period's end (a clock advanced past it): the same period.
		{"CancelledEndedLate", cancelled(), 3, true, april1.AddDate(0, 0, 5),
			&invoiceWant{amounts: []int64{100, 900}, subtotal: 1000, tax: 150, total: 1150, period: "2025-03-01..2025-03-31"}},
		{"CancelledNoUsageMinimumSpend", cancelled(), 0, true, april1,
			&invoiceWant{amounts: []int64{1000}, subtotal: 1000, tax: 150, total: 1150, period: "2025-03-01..2025-03-31"}},
		// Terminated on March 11: 5 billable × 100 = 500, no top-up; the unused fee 6774 takes
		// it to zero and 6274 goes to the credit balance.
		{"TerminatedCreditBeyondUsage", onPlan(starter), 7, true, march11,
			&invoiceWant{amounts: []int64{500, -500}, subtotal: 500, discount: 500, period: "2025-03-01..2025-03-31", balance: 6274}},
		// 98 billable × 100 = 9800 less 6774: VAT 15 % of 3026 = 453.9.
		{"TerminatedUsageBeyondCredit", onPlan(starter), 100, true, march11,
			&invoiceWant{amounts: []int64{9800, -6774}, subtotal: 9800, discount: 6774, tax: 454, total: 3480, period: "2025-03-01..2025-03-31"}},
		{"TerminatedFeeNotInvoiced", onPlan(starter), 7, false, march11,
			&invoiceWant{amounts: []int64{500}, subtotal: 500, tax: 75, total: 575, period: "2025-03-01..2025-03-10"}},
		// Cancelled, then terminated before the period's end: as a termination.
		{"CancelledThenTerminated", cancelled(), 7, true, march11,
			&invoiceWant{amounts: []int64{500, -500}, subtotal: 500, discount: 500, period: "2025-03-01..2025-03-31", balance: 6274}},
		{"TerminatedNothingToBill", onPlan(starter), 2, false, march11, nil},
		{"TerminatedInTrial", &core.Subscription{BillingAnchorAt: april1, RenewsAt: &april1}, 7, true, march11, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			inv := must(tc.sub.FinalInvoice(starter, core.Usage{"m": tc.usage}, tc.invoiced, tc.at))(t)
			if tc.want == nil {
				if inv != nil {
					t.Fatalf("invoice %+v, want none", inv)
				}
				return
			}
			checkInvoice(t, inv, *tc.want)
			if tc.want.balance > 0 && inv.BalanceCreditReason != core.CreditTermination {
				t.Errorf("reason %q", inv.BalanceCreditReason)
			}
		})
	}
}

// TestApplyCreditBalance: the balance is a last, pre-tax line, never below zero.
func TestApplyCreditBalance(t *testing.T) {
	t.Parallel()
	_, pro := gapPlans()
	renewal := func() *core.BillingInvoice {
		return must(onPlan(pro).Renew(pro, core.Usage{"m": 8}, april1))(t).Invoice
	}
	for _, tc := range []struct {
		name    string
		balance int64
		applied int64
		want    invoiceWant
	}{
		// 40150 less 6274: VAT 15 % of 33876 = 5081.4.
		{"Part", 6274, 6274, invoiceWant{amounts: []int64{150, 40000, -6274}, subtotal: 40150, discount: 6274, tax: 5081, total: 38957}},
		{"All", 100000, 40150, invoiceWant{amounts: []int64{150, 40000, -40150}, subtotal: 40150, discount: 40150}},
		{"None", 0, 0, invoiceWant{amounts: []int64{150, 40000}, subtotal: 40150, tax: 6023, total: 46173}},
		// One minor unit: VAT 15 % of 40149 = 6022.35.
		{"OneUnit", 1, 1, invoiceWant{amounts: []int64{150, 40000, -1}, subtotal: 40150, discount: 1, tax: 6022, total: 46171}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			inv := renewal()
			if got := core.ApplyCreditBalance(inv, tc.balance); got != tc.applied || inv.BalanceApplied != tc.applied {
				t.Errorf("applied %d (%d), want %d", got, inv.BalanceApplied, tc.applied)
			}
			checkInvoice(t, inv, tc.want)
			if tc.applied > 0 {
				if l := inv.Lines[len(inv.Lines)-1]; l.ComponentType != core.PriceCredit || l.PriceID != nil || l.Description != core.CreditBalanceDescription {
					t.Errorf("balance line %+v", l)
				}
			}
		})
	}
}
