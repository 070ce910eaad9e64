package core_test

import (
	"testing"
	"time"

	"github.com/provider/coreapi/internal/core"
)

func ptr[T any](v T) *T { return &v }

// must takes a result and its error, and returns v for t, failing t when err is not nil:
// must(f(…))(t).
func must[T any](v T, err error) func(testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func TestPercentHalfUp(t *testing.T) {
	t.Parallel()
	cases := []struct {
		amount, percent, want int64
	}{
		{0, 15, 0},
		{1, 15, 0},   // 0.15
		{3, 15, 0},   // 0.45
		{4, 15, 1},   // 0.60
		{10, 15, 2},  // 1.50: half rounds up
		{30, 15, 5},  // 4.50: half rounds up
		{29, 15, 4},  // 4.35
		{70, 15, 11}, // 10.50: half rounds up
		{79900, 15, 11985},
		{29900, 15, 4485},
		{299000, 15, 44850},
		{99999, 15, 15000}, // 14999.85
		{100, 0, 0},
		// Amounts whose VAT fits in int64 though amount × percent does not: no wrap.
		{700001000000000000, 15, 105000150000000000},
		{614891469123651721, 15, 92233720368547758},     // 92233720368547758.15
		{9223372036854775807, 15, 1383505805528216371},  // math.MaxInt64: …371.05
		{9223372036854775807, 100, 9223372036854775807}, // the whole of it
		{9223372036854775750, 15, 1383505805528216363},  // …362.5: half rounds up
	}
	for _, tc := range cases {
		if got := core.PercentHalfUp(tc.amount, tc.percent); got != tc.want {
			t.Errorf("PercentHalfUp(%d, %d) = %d, want %d", tc.amount, tc.percent, got, tc.want)
		}
	}
}

func TestFirstInvoice(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC)
	monthly := func(setup, recurring *int64) *core.Plan {
		return &core.Plan{Name: "Monthly", BillingPeriod: core.BillingPeriodMonthly, Currency: "SAR", SetupFee: setup, RecurringFee: recurring}
	}
	discount := func(p *core.Plan, amount int64, status string) *core.Plan {
		p.Prices = append(p.Prices, &core.Price{ComponentType: core.PriceDiscount, Amount: &amount, Status: status})
		return p
	}
	withTrial := func(p *core.Plan, days int, payment bool) *core.Plan {
		p.TrialPolicy = &core.TrialPolicy{TrialDays: days, RequiresPaymentMethod: payment}
		return p
	}
	cases := []struct {
		name                           string
		plan                           *core.Plan
		now                            time.Time
		none                           bool
		start, end                     string
		subtotal, discount, tax, total int64
		taxDocument                    string
	}{
		{name: "SetupAndRecurring", plan: monthly(ptr[int64](50000), ptr[int64](29900)),
			start: "2025-03-01", end: "2025-03-31", subtotal: 79900, tax: 11985, total: 91885, taxDocument: "pending"},
		{name: "RecurringOnly", plan: monthly(nil, ptr[int64](29900)),
			start: "2025-03-01", end: "2025-03-31", subtotal: 29900, tax: 4485, total: 34385, taxDocument: "pending"},
		{name: "RoundsHalfUp", plan: monthly(nil, ptr[int64](10)),
			start: "2025-03-01", end: "2025-03-31", subtotal: 10, tax: 2, total: 12, taxDocument: "pending"},
		{name: "RoundsDown", plan: monthly(nil, ptr[int64](29)),
			start: "2025-03-01", end: "2025-03-31", subtotal: 29, tax: 4, total: 33, taxDocument: "pending"},
		{name: "RoundsUp", plan: monthly(nil, ptr[int64](99999)),
			start: "2025-03-01", end: "2025-03-31", subtotal: 99999, tax: 15000, total: 114999, taxDocument: "pending"},
		{name: "FreePlan", plan: monthly(nil, ptr[int64](0)), none: true},
		{name: "NoFees", plan: monthly(nil, nil), none: true},
		{name: "UsageOnly", plan: &core.Plan{BillingPeriod: core.BillingPeriodUsageOnly, Currency: "SAR", MinimumCommitment: ptr[int64](10000)}, none: true},
		{name: "Annual", plan: &core.Plan{Name: "Annual", BillingPeriod: core.BillingPeriodAnnual, Currency: "SAR", RecurringFee: ptr[int64](299000)},
			start: "2025-03-01", end: "2026-02-28", subtotal: 299000, tax: 44850, total: 343850, taxDocument: "pending"},
		{name: "AnnualSetupWaived", plan: discount(&core.Plan{Name: "Annual", BillingPeriod: core.BillingPeriodAnnual, Currency: "SAR",
			SetupFee: ptr[int64](50000), RecurringFee: ptr[int64](299000)}, -50000, "active"),
			start: "2025-03-01", end: "2026-02-28", subtotal: 349000, discount: 50000, tax: 44850, total: 343850, taxDocument: "pending"},
		{name: "DiscountCappedAtSubtotal", plan: discount(monthly(nil, ptr[int64](1000)), -5000, "active"),
			start: "2025-03-01", end: "2025-03-31", subtotal: 1000, discount: 1000, tax: 0, total: 0, taxDocument: "pending"},
		{name: "InactiveDiscountIgnored", plan: discount(monthly(nil, ptr[int64](1000)), -500, "inactive"),
			start: "2025-03-01", end: "2025-03-31", subtotal: 1000, tax: 150, total: 1150, taxDocument: "pending"},
		{name: "DiscountThenRounding", plan: discount(monthly(nil, ptr[int64](1000)), -970, "active"),
			start: "2025-03-01", end: "2025-03-31", subtotal: 1000, discount: 970, tax: 5, total: 35, taxDocument: "pending"}, // 4.5 -> 5
		{name: "OneTime", plan: &core.Plan{Name: "Onboarding", BillingPeriod: core.BillingPeriodOneTime, Currency: "SAR", SetupFee: ptr[int64](150000)},
			start: "2025-03-01", end: "2025-03-01", subtotal: 150000, tax: 22500, total: 172500, taxDocument: "pending"},
		{name: "TrialWithoutPaymentMethod", plan: withTrial(monthly(ptr[int64](50000), ptr[int64](14900)), 30, false), none: true},
		{name: "TrialWithPaymentMethodChargesSetupOnly", plan: withTrial(monthly(ptr[int64](100000), ptr[int64](99900)), 14, true),
			start: "2025-03-01", end: "2025-03-14", subtotal: 100000, tax: 15000, total: 115000, taxDocument: "pending"},
		{name: "TrialWithPaymentMethodNoSetupIsZero", plan: withTrial(monthly(nil, ptr[int64](99900)), 7, true),
			start: "2025-03-01", end: "2025-03-07", subtotal: 0, tax: 0, total: 0, taxDocument: "pending"},
		{name: "ZeroDayTrialIsNoTrial", plan: withTrial(monthly(nil, ptr[int64](29900)), 0, false),
			start: "2025-03-01", end: "2025-03-31", subtotal: 29900, tax: 4485, total: 34385, taxDocument: "pending"},
		{name: "ForeignCurrencyUntaxed", plan: &core.Plan{Name: "USD", BillingPeriod: core.BillingPeriodMonthly, Currency: "USD", RecurringFee: ptr[int64](9999)},
			start: "2025-03-01", end: "2025-03-31", subtotal: 9999, tax: 0, total: 9999, taxDocument: "not_applicable"},
		{name: "MonthEndClamps", plan: monthly(nil, ptr[int64](100)), now: time.Date(2025, 1, 31, 23, 0, 0, 0, time.UTC),
			start: "2025-01-31", end: "2025-02-27", subtotal: 100, tax: 15, total: 115, taxDocument: "pending"},
		{name: "LeapYear", plan: monthly(nil, ptr[int64](100)), now: time.Date(2024, 1, 31, 0, 0, 0, 0, time.UTC),
			start: "2024-01-31", end: "2024-02-28", subtotal: 100, tax: 15, total: 115, taxDocument: "pending"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			at := now
			if !tc.now.IsZero() {
				at = tc.now
			}
			inv := core.FirstInvoice(tc.plan, at)
			if tc.none {
				if inv != nil {
					t.Fatalf("want no invoice, got %+v", inv)
				}
				return
			}
			if inv == nil {
				t.Fatal("want an invoice, got none")
			}
			if got := inv.PeriodStart.Format(time.DateOnly); got != tc.start {
				t.Errorf("period start %s, want %s", got, tc.start)
			}
			if got := inv.PeriodEnd.Format(time.DateOnly); got != tc.end {
				t.Errorf("period end %s, want %s", got, tc.end)
			}
			if inv.Subtotal != tc.subtotal || inv.Discount != tc.discount || inv.Tax != tc.tax || inv.Total != tc.total {
				t.Errorf("subtotal/discount/tax/total = %d/%d/%d/%d, want %d/%d/%d/%d",
					inv.Subtotal, inv.Discount, inv.Tax, inv.Total, tc.subtotal, tc.discount, tc.tax, tc.total)
			}
			if inv.Total != inv.Subtotal-inv.Discount+inv.Tax {
				t.Errorf("total %d != subtotal - discount + tax", inv.Total)
			}
			var lines, tax int64
			for _, l := range inv.Lines {
				lines += l.Amount
				tax += l.Tax
				if l.Quantity*l.UnitAmount != l.Amount || !l.PeriodStart.Equal(inv.PeriodStart) || !l.PeriodEnd.Equal(inv.PeriodEnd) || l.Proration {
					t.Errorf("line %+v: quantity × unit amount, period or proration", l)
				}
				if (l.ComponentType == core.PriceDiscount) != (l.PriceID != nil) {
					t.Errorf("line %+v: only a discount line names its price component", l)
				}
			}
			if lines != inv.Subtotal-inv.Discount || tax != inv.Tax {
				t.Errorf("lines sum to %d with tax %d, want subtotal - discount = %d with tax %d", lines, tax, inv.Subtotal-inv.Discount, inv.Tax)
			}
			if !inv.OpensSelection {
				t.Error("a first invoice opens its selection")
			}
			if inv.Status != "issued" || inv.TaxDocumentStatus != tc.taxDocument {
				t.Errorf("status %s/%s, want issued/%s", inv.Status, inv.TaxDocumentStatus, tc.taxDocument)
			}
			if inv.IssuedAt == nil || !inv.IssuedAt.Equal(at) || inv.DueAt == nil || !inv.DueAt.Equal(at.Add(14*24*time.Hour)) {
				t.Errorf("issued %v due %v, want %v and 14 days later", inv.IssuedAt, inv.DueAt, at)
			}
		})
	}
}

func TestPlan_NextRenewal(t *testing.T) {
	t.Parallel()
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	cases := []struct {
		name, period, anchor, now, want string
	}{
		{"MonthlyFromAnchor", "monthly", "2025-03-01T09:30:00Z", "2025-03-01T09:30:00Z", "2025-04-01T09:30:00Z"},
		{"MonthlyLater", "monthly", "2025-03-01T09:30:00Z", "2025-07-15T00:00:00Z", "2025-08-01T09:30:00Z"},
		{"MonthlyOnBoundary", "monthly", "2025-03-01T09:30:00Z", "2025-04-01T09:30:00Z", "2025-05-01T09:30:00Z"},
		{"MonthlyKeepsDay31", "monthly", "2025-01-31T00:00:00Z", "2025-03-01T00:00:00Z", "2025-03-31T00:00:00Z"},
		{"Annual", "annual", "2024-02-29T12:00:00Z", "2024-02-29T12:00:00Z", "2025-02-28T12:00:00Z"},
		{"UsageOnlyMonthly", "usage_only", "2025-03-01T00:00:00Z", "2025-03-02T00:00:00Z", "2025-04-01T00:00:00Z"},
		{"AnchorAhead", "monthly", "2025-03-15T00:00:00Z", "2025-03-01T00:00:00Z", "2025-03-15T00:00:00Z"},
		{"OneTimeNever", "one_time", "2025-03-01T00:00:00Z", "2025-03-01T00:00:00Z", ""},
	}
	for _, tc := range cases {
		p := &core.Plan{BillingPeriod: tc.period}
		got := p.NextRenewal(at(tc.anchor), at(tc.now))
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("%s: %v, want none", tc.name, got)
		case tc.want != "" && (got == nil || !got.Equal(at(tc.want))):
			t.Errorf("%s: %v, want %s", tc.name, got, tc.want)
		}
	}
}
