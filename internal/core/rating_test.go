package core_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/provider/coreapi/internal/core"
)

// rated is what a test expects of one usage line: quantity × unit = amount.
type rated struct {
	component      string
	quantity, unit int64
	amount         int64
}

func (r rated) String() string {
	return fmt.Sprintf("%s %d×%d=%d", r.component, r.quantity, r.unit, r.amount)
}

func tiers(spec ...[3]int64) []core.PriceTier {
	var out []core.PriceTier
	for i, s := range spec { // {upper bound (-1: open), unit amount, flat amount (-1: null)}
		t := core.PriceTier{UnitAmount: s[1]}
		if s[0] >= 0 || i < len(spec)-1 {
			t.UpperBound = ptr(float64(s[0]))
		}
		if s[2] >= 0 {
			t.FlatAmount = ptr(s[2])
		}
		out = append(out, t)
	}
	return out
}

func usagePrice(component string, f func(p *core.Price)) *core.Price {
	p := &core.Price{ComponentType: component, Metric: ptr("m"), Status: core.PriceActive}
	f(p)
	return p
}

func perUnit(unit int64) *core.Price {
	return usagePrice(core.PricePerUnit, func(p *core.Price) { p.UnitAmount = ptr(unit) })
}

func tiered(component string, t []core.PriceTier) *core.Price {
	return usagePrice(component, func(p *core.Price) { p.Tiers = t })
}

// TestRateUsage prices each component type by hand: tier boundaries, the first unit past
// them, included usage and zero usage.
func TestRateUsage(t *testing.T) {
	t.Parallel()
	pkg := usagePrice(core.PricePackage, func(p *core.Price) { p.PackageSize, p.PackageAmount = ptr[int64](1000), ptr[int64](4000) })
	graduated := tiered(core.PriceGraduatedUsage, tiers([3]int64{1000, 0, -1}, [3]int64{5000, 15, -1}, [3]int64{-1, 10, -1}))
	volume := tiered(core.PriceVolumeUsage, tiers([3]int64{1000, 20, -1}, [3]int64{5000, 15, -1}, [3]int64{-1, 10, -1}))
	minimum := &core.Price{ComponentType: core.PriceMinimumSpend, Amount: ptr[int64](10000), Status: core.PriceActive}
	inactive := perUnit(99)
	inactive.Status = "inactive"
	cases := []struct {
		name     string
		prices   []*core.Price
		included float64
		overage  int64
		used     int64
		want     []rated
	}{
		{name: "PerUnitZeroUsage", prices: []*core.Price{perUnit(30)}, used: 0},
		{name: "PerUnit", prices: []*core.Price{perUnit(30)}, used: 7, want: []rated{{"per_unit", 7, 30, 210}}},
		{name: "PerUnitAfterIncluded", prices: []*core.Price{perUnit(30)}, included: 5, used: 7, want: []rated{{"per_unit", 2, 30, 60}}},
		{name: "PerUnitAllIncluded", prices: []*core.Price{perUnit(30)}, included: 10, used: 7},
		{name: "PerUnitFractionIncludedRoundsDown", prices: []*core.Price{perUnit(30)}, included: 4.9, used: 7, want: []rated{{"per_unit", 3, 30, 90}}},
		{name: "InactivePriceIgnored", prices: []*core.Price{inactive}, used: 7},

		{name: "PackageAtIncluded", prices: []*core.Price{pkg}, included: 5000, used: 5000},
		{name: "PackageFirstUnitStartsPackage", prices: []*core.Price{pkg}, included: 5000, used: 5001, want: []rated{{"package_pricing", 1, 4000, 4000}}},
		{name: "PackageFull", prices: []*core.Price{pkg}, included: 5000, used: 6000, want: []rated{{"package_pricing", 1, 4000, 4000}}},
		{name: "PackageSecondStarted", prices: []*core.Price{pkg}, included: 5000, used: 6001, want: []rated{{"package_pricing", 2, 4000, 8000}}},

		{name: "GraduatedZeroUsage", prices: []*core.Price{graduated}, used: 0},
		{name: "GraduatedFreeTierBoundary", prices: []*core.Price{graduated}, used: 1000},
		{name: "GraduatedFirstUnitOfTier2", prices: []*core.Price{graduated}, used: 1001, want: []rated{{"graduated_usage", 1, 15, 15}}},
		{name: "GraduatedTier2Boundary", prices: []*core.Price{graduated}, used: 5000, want: []rated{{"graduated_usage", 4000, 15, 60000}}},
		{name: "GraduatedIntoTier3", prices: []*core.Price{graduated}, used: 5001,
			want: []rated{{"graduated_usage", 4000, 15, 60000}, {"graduated_usage", 1, 10, 10}}},
		{name: "GraduatedIncludedFillsLowestUnits", included: 500, used: 1500,
			prices: []*core.Price{tiered(core.PriceGraduatedUsage, tiers([3]int64{1000, 5, -1}, [3]int64{-1, 25, -1}))},
			want:   []rated{{"graduated_usage", 500, 5, 2500}, {"graduated_usage", 500, 25, 12500}}},
		{name: "GraduatedIncludedBeyondTier1", included: 1200, used: 1500,
			prices: []*core.Price{tiered(core.PriceGraduatedUsage, tiers([3]int64{1000, 5, -1}, [3]int64{-1, 25, -1}))},
			want:   []rated{{"graduated_usage", 300, 25, 7500}}},
		{name: "GraduatedSeededGrowthNotCountedTwice", included: 1000, overage: 25, used: 1500,
			prices: []*core.Price{tiered(core.PriceGraduatedUsage, tiers([3]int64{1000, 0, -1}, [3]int64{-1, 25, -1}))},
			want:   []rated{{"graduated_usage", 500, 25, 12500}}},
		{name: "GraduatedFlatAmountsAtBoundary", used: 10,
			prices: []*core.Price{tiered(core.PriceGraduatedUsage, tiers([3]int64{10, 100, 500}, [3]int64{-1, 50, 1000}))},
			want:   []rated{{"graduated_usage", 10, 100, 1000}, {"graduated_usage", 1, 500, 500}}},
		{name: "GraduatedFlatAmountsPastBoundary", used: 11,
			prices: []*core.Price{tiered(core.PriceGraduatedUsage, tiers([3]int64{10, 100, 500}, [3]int64{-1, 50, 1000}))},
			want: []rated{{"graduated_usage", 10, 100, 1000}, {"graduated_usage", 1, 500, 500},
				{"graduated_usage", 1, 50, 50}, {"graduated_usage", 1, 1000, 1000}}},
		{name: "TieredIsGraduated", prices: []*core.Price{tiered(core.PriceTieredUsage, graduated.Tiers)}, used: 5001,
			want: []rated{{"tiered_usage", 4000, 15, 60000}, {"tiered_usage", 1, 10, 10}}},

		{name: "VolumeZeroUsage", prices: []*core.Price{volume}, used: 0},
		{name: "VolumeTier1Boundary", prices: []*core.Price{volume}, used: 1000, want: []rated{{"volume_usage", 1000, 20, 20000}}},
		{name: "VolumeFirstUnitOfTier2RepricesAll", prices: []*core.Price{volume}, used: 1001, want: []rated{{"volume_usage", 1001, 15, 15015}}},
		{name: "VolumeTier3", prices: []*core.Price{volume}, used: 5001, want: []rated{{"volume_usage", 5001, 10, 50010}}},
		{name: "VolumeAfterIncluded", prices: []*core.Price{volume}, included: 100, used: 1001, want: []rated{{"volume_usage", 901, 15, 13515}}},
		{name: "VolumeFlatAmountOfTierReached", used: 101,
			prices: []*core.Price{tiered(core.PriceVolumeUsage, tiers([3]int64{100, 10, 300}, [3]int64{-1, 5, 700}))},
			want:   []rated{{"volume_usage", 101, 5, 505}, {"volume_usage", 1, 700, 700}}},

		{name: "OverageAtIncluded", overage: 25, included: 1000, used: 1000},
		{name: "OverageFirstUnitBeyond", overage: 25, included: 1000, used: 1001, want: []rated{{"overage", 1, 25, 25}}},
		{name: "OverageNotChargedBesidePrice", prices: []*core.Price{perUnit(30)}, overage: 30, used: 3, want: []rated{{"per_unit", 3, 30, 90}}},

		{name: "MinimumSpendZeroUsage", prices: []*core.Price{perUnit(30), minimum}, used: 0, want: []rated{{"minimum_spend", 1, 10000, 10000}}},
		{name: "MinimumSpendTopUp", prices: []*core.Price{perUnit(30), minimum}, used: 333,
			want: []rated{{"per_unit", 333, 30, 9990}, {"minimum_spend", 1, 10, 10}}},
		{name: "MinimumSpendReachedExactly", prices: []*core.Price{perUnit(25), minimum}, used: 400, want: []rated{{"per_unit", 400, 25, 10000}}},
		{name: "MinimumSpendExceeded", prices: []*core.Price{perUnit(30), minimum}, used: 334, want: []rated{{"per_unit", 334, 30, 10020}}},
	}
	start, end := time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 4, 30, 0, 0, 0, 0, time.UTC)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			plan := &core.Plan{Prices: tc.prices}
			if tc.included > 0 {
				plan.IncludedUsage = []core.IncludedUsage{{Metric: "m", Quantity: tc.included}}
			}
			if tc.overage > 0 {
				plan.OverageRules = []core.OverageRule{{Metric: "m", UnitPrice: tc.overage}}
			}
			lines := must(core.RateUsage(plan, core.Usage{"m": tc.used, "other": 1_000_000}, start, end))(t)
			var got []rated
			for _, l := range lines {
				got = append(got, rated{l.ComponentType, l.Quantity, l.UnitAmount, l.Amount})
				if l.Quantity*l.UnitAmount != l.Amount || !l.PeriodStart.Equal(start) || !l.PeriodEnd.Equal(end) || l.Proration {
					t.Errorf("line %+v: amount is not quantity × unit, or wrong period", l)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("lines %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRateUsageTooLarge: usage whose charges do not fit is refused (EUnprocessable), never wrapped into a smaller or negative amount that drops the line; up
// to MaxUsageCharge it is rated exactly.
func TestRateUsageTooLarge(t *testing.T) {
	t.Parallel()
	const maxPrice = 1_000_000_000_000 // the catalogue's largest unit amount
	start, end := time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 4, 30, 0, 0, 0, 0, time.UTC)
	pkg := usagePrice(core.PricePackage, func(p *core.Price) { p.PackageSize, p.PackageAmount = ptr[int64](1), ptr[int64](maxPrice) })
	flat := tiered(core.PriceGraduatedUsage, tiers([3]int64{1, 0, maxPrice}, [3]int64{-1, maxPrice, maxPrice}))
	cases := []struct {
		name   string
		prices []*core.Price
		used   int64
		want   int64 // the amount charged; -1: refused
	}{
		{"PerUnitWrapsInt64", []*core.Price{perUnit(maxPrice)}, 10_000_000, -1},                         // 10^19
		{"PerUnitWrapsToPositive", []*core.Price{perUnit(maxPrice)}, 18_446_745, -1},                    // 2^64 + 4.4 × 10^11: wraps positive
		{"PerUnitPastTheBound", []*core.Price{perUnit(maxPrice)}, 9_008, -1},                            // 9.008 × 10^15
		{"PerUnitUpToTheBound", []*core.Price{perUnit(maxPrice)}, 9_007, 9_007 * maxPrice},              // 9.007 × 10^15
		{"PerUnitExactlyTheBound", []*core.Price{perUnit(1)}, core.MaxUsageCharge, core.MaxUsageCharge}, // 2^53 - 1
		{"PackageWrapsInt64", []*core.Price{pkg}, 10_000_000, -1},
		{"LinesTogetherPastTheBound", []*core.Price{perUnit(maxPrice), perUnit(maxPrice)}, 5_000, -1}, // 2 × 5 × 10^15
		{"FlatAmountsPastTheBound", []*core.Price{flat}, 9_007, -1},                                   // 9.006 × 10^15 + two flats
		{"FlatAmountsUpToTheBound", []*core.Price{flat}, 9_006, 9_005*maxPrice + 2*maxPrice},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lines, err := core.RateUsage(&core.Plan{Prices: tc.prices}, core.Usage{"m": tc.used}, start, end)
			if tc.want < 0 {
				if core.ErrorCode(err) != core.EUnprocessable || lines != nil {
					t.Fatalf("RateUsage = %+v, %v; want it refused as unprocessable", lines, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var charged int64
			for _, l := range lines {
				charged += l.Amount
			}
			if charged != tc.want {
				t.Errorf("charged %d, want %d: %+v", charged, tc.want, lines)
			}
		})
	}
}

// TestRenewalInvoiceWithUsage: usage lines come before the fees, the invoice's period spans
// both periods, and a credit never takes the invoice below zero.
func TestRenewalInvoiceWithUsage(t *testing.T) {
	t.Parallel()
	renewsAt, next := time.Date(2025, 5, 1, 9, 30, 0, 0, time.UTC), time.Date(2025, 6, 1, 9, 30, 0, 0, time.UTC)
	closing := []core.InvoiceLine{{ComponentType: core.PricePerUnit, PeriodStart: time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC),
		PeriodEnd: time.Date(2025, 4, 30, 0, 0, 0, 0, time.UTC), Quantity: 3, UnitAmount: 100, Amount: 300}}
	plan := &core.Plan{Name: "P", Currency: "SAR", BillingPeriod: "monthly", RecurringFee: ptr[int64](14900),
		Prices: []*core.Price{{ComponentType: core.PriceCredit, Amount: ptr[int64](-20000), Status: core.PriceActive}}}

	inv := core.RenewalInvoice(plan, renewsAt, next, false, true, closing, renewsAt)
	if inv.Subtotal != 15200 || inv.Discount != 0 || inv.Tax != 2280 || inv.Total != 17480 {
		t.Errorf("totals %d %d %d %d, want 15200 0 2280 17480", inv.Subtotal, inv.Discount, inv.Tax, inv.Total)
	}
	if got := inv.PeriodStart.Format(time.DateOnly) + ".." + inv.PeriodEnd.Format(time.DateOnly); got != "2025-04-01..2025-05-31" {
		t.Errorf("period %s", got)
	}
	if len(inv.Lines) != 2 || inv.Lines[0].Amount != 300 || inv.Lines[0].Tax != 45 || inv.Lines[1].Amount != 14900 || inv.Lines[1].Tax != 2235 {
		t.Errorf("lines %+v", inv.Lines)
	}

	// The end of a trial without a payment method is the first charged invoice: the credit
	// applies, capped at what is charged.
	plan.TrialPolicy = &core.TrialPolicy{TrialDays: 30}
	inv = core.RenewalInvoice(plan, renewsAt, next, true, true, closing, renewsAt)
	if inv.Subtotal != 15200 || inv.Discount != 15200 || inv.Tax != 0 || inv.Total != 0 || inv.Lines[2].Amount != -15200 {
		t.Errorf("credited: %+v", inv)
	}

	// A suspended period bills no fee, but the usage it closes: the invoice is for that
	// period alone, not the one it opens, for which it bills nothing.
	inv = core.RenewalInvoice(plan, renewsAt, next, false, false, closing, renewsAt)
	if len(inv.Lines) != 1 || inv.Total != 345 {
		t.Errorf("suspended: %+v", inv)
	}
	if got := inv.PeriodStart.Format(time.DateOnly) + ".." + inv.PeriodEnd.Format(time.DateOnly); got != "2025-04-01..2025-04-30" {
		t.Errorf("suspended: period %s, want the closed period's", got)
	}
	// So is a usage-only plan's, in arrears.
	usageOnly := &core.Plan{Name: "U", Currency: "SAR", BillingPeriod: "usage_only"}
	inv = core.RenewalInvoice(usageOnly, renewsAt, next, false, true, closing, renewsAt)
	if got := inv.PeriodStart.Format(time.DateOnly) + ".." + inv.PeriodEnd.Format(time.DateOnly); len(inv.Lines) != 1 || got != "2025-04-01..2025-04-30" {
		t.Errorf("usage only: period %s, want the closed period's: %+v", got, inv)
	}
	if core.RenewalInvoice(plan, renewsAt, next, false, false, nil, renewsAt) != nil {
		t.Error("a suspended period without usage issued an invoice")
	}
}
