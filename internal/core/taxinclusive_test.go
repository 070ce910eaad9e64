package core_test

import (
	"fmt"
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/core"
)

// netOfTax is NetOfTax the slow, obvious way: gross × 100 / (100 + percent), rounded half-up,
// in big integers.
func netOfTax(gross, percent int64) int64 {
	n := new(big.Int).Mul(big.NewInt(gross), big.NewInt(200))
	n.Add(n, big.NewInt(100+percent))
	return n.Quo(n, big.NewInt(2*(100+percent))).Int64()
}

// TestNetOfTax carves the tax-exclusive part out of tax-inclusive amounts: boundaries,
// half-up, rate 0 and amounts up to int64's end (gross × 100 would wrap).
func TestNetOfTax(t *testing.T) {
	t.Parallel()
	cases := []struct {
		gross, percent, want int64
	}{
		{0, 15, 0},
		{1, 15, 1},  // 0.87
		{3, 15, 3},  // 2.61
		{4, 15, 3},  // 3.48
		{10, 15, 9}, // 8.70
		{115, 15, 100},
		{11500, 15, 10000},
		{11499, 15, 9999},  // 9999.13
		{11501, 15, 10001}, // 10000.87
		{999, 15, 869},     // 868.70
		{1, 100, 1},        // 0.5: half rounds up
		{3, 100, 2},        // 1.5: half rounds up
		{11500, 0, 11500},  // no VAT: nothing to carve out
		{core.MaxUsageCharge, 15, 7832347178035644},
		{core.MaxUsageCharge, 0, core.MaxUsageCharge},
		{9_007_000_000_000_000, 15, 7832173913043478},
		{math.MaxInt64, 15, 8020323510308500702},
	}
	for _, tc := range cases {
		if got := core.NetOfTax(tc.gross, tc.percent); got != tc.want {
			t.Errorf("NetOfTax(%d, %d) = %d, want %d", tc.gross, tc.percent, got, tc.want)
		}
	}
	// Every amount up to 10^5 and around the bounds: as the obvious computation, and the net
	// with its VAT gives back the gross to within one minor unit.
	check := func(gross int64) {
		net := core.NetOfTax(gross, 15)
		if want := netOfTax(gross, 15); net != want {
			t.Fatalf("NetOfTax(%d, 15) = %d, want %d", gross, net, want)
		}
		if total := net + core.PercentHalfUp(net, 15); total < gross-1 || total > gross+1 {
			t.Fatalf("NetOfTax(%d, 15) = %d, whose total with VAT is %d", gross, net, total)
		}
	}
	for g := int64(0); g <= 100_000; g++ {
		check(g)
	}
	for _, base := range []int64{core.MaxUsageCharge, math.MaxInt64 / 2, math.MaxInt64 - 1000} {
		for g := base - 1000; g <= base; g++ {
			check(g)
		}
	}
}

func inclusive(p *core.Price) *core.Price {
	p.TaxTreatment = core.TaxInclusive
	return p
}

// TestRateUsageTaxInclusive rates usage of tax-inclusive prices: each line is rated at its
// gross amount as a tax-exclusive price is, then carries its net part, split in two lines
// when the quantity does not divide it; a minimum spend compares net amounts.
func TestRateUsageTaxInclusive(t *testing.T) {
	t.Parallel()
	graduated := inclusive(tiered(core.PriceGraduatedUsage, tiers([3]int64{1000, 0, -1}, [3]int64{5000, 15, -1}, [3]int64{-1, 10, 1150})))
	volume := inclusive(tiered(core.PriceVolumeUsage, tiers([3]int64{1000, 20, -1}, [3]int64{-1, 15, -1})))
	pkg := inclusive(usagePrice(core.PricePackage, func(p *core.Price) { p.PackageSize, p.PackageAmount = ptr[int64](1000), ptr[int64](4600) }))
	minimum := func(amount int64, treatment string) *core.Price {
		return &core.Price{ComponentType: core.PriceMinimumSpend, Amount: &amount, TaxTreatment: treatment, Status: core.PriceActive}
	}
	cases := []struct {
		name     string
		currency string
		prices   []*core.Price
		included float64
		used     int64
		want     []rated
	}{
		// 7 × 115 = 805 gross, 700 net: 7 divides it.
		{name: "PerUnitDivides", prices: []*core.Price{inclusive(perUnit(115))}, used: 7, want: []rated{{"per_unit", 7, 100, 700}}},
		// 13 × 100 = 1300 gross, 1130.43 net: 1130 = 13 × 86 + 12.
		{name: "PerUnitSplits", prices: []*core.Price{inclusive(perUnit(100))}, used: 13,
			want: []rated{{"per_unit", 1, 86, 86}, {"per_unit", 12, 87, 1044}}},
		// 10 × 1 = 10 gross, 9 net: one unit at 0 has no line.
		{name: "PerUnitPartAtZero", prices: []*core.Price{inclusive(perUnit(1))}, used: 10, want: []rated{{"per_unit", 9, 1, 9}}},
		{name: "PerUnitRateZero", currency: "USD", prices: []*core.Price{inclusive(perUnit(100))}, used: 13, want: []rated{{"per_unit", 13, 100, 1300}}},
		// Tier 2: 4000 × 15 = 60000 gross, 52173.91 net = 4000 × 13 + 174; tier 3: 10 gross, 9
		// net, and its flat amount 1150 gross, 1000 net.
		{name: "Graduated", prices: []*core.Price{graduated}, used: 5001, want: []rated{
			{"graduated_usage", 3826, 13, 49738}, {"graduated_usage", 174, 14, 2436},
			{"graduated_usage", 1, 9, 9}, {"graduated_usage", 1, 1000, 1000}}},
		{name: "GraduatedAfterIncluded", prices: []*core.Price{graduated}, included: 4990, used: 5000,
			want: []rated{{"graduated_usage", 10, 13, 130}}}, // 150 gross, 130.43 net
		// 1001 × 15 = 15015 gross, 13056.52 net = 1001 × 13 + 44.
		{name: "Volume", prices: []*core.Price{volume}, used: 1001, want: []rated{{"volume_usage", 957, 13, 12441}, {"volume_usage", 44, 14, 616}}},
		// Two packages of 4600 = 9200 gross, 8000 net.
		{name: "Package", prices: []*core.Price{pkg}, included: 5000, used: 6001, want: []rated{{"package_pricing", 2, 4000, 8000}}},
		// An inclusive minimum of 11500 is 10000 net; the usage charged 5750 gross, 5000 net.
		{name: "InclusiveMinimumSpend", prices: []*core.Price{inclusive(perUnit(115)), minimum(11500, core.TaxInclusive)}, used: 50,
			want: []rated{{"per_unit", 50, 100, 5000}, {"minimum_spend", 1, 5000, 5000}}},
		// The same minimum, exclusive usage: 9990 net charged, 10 to top up.
		{name: "InclusiveMinimumExclusiveUsage", prices: []*core.Price{perUnit(30), minimum(11500, core.TaxInclusive)}, used: 333,
			want: []rated{{"per_unit", 333, 30, 9990}, {"minimum_spend", 1, 10, 10}}},
		// Inclusive usage of 11500 gross (10000 net) reaches an exclusive minimum of 10000.
		{name: "ExclusiveMinimumReachedByNetUsage", prices: []*core.Price{inclusive(perUnit(115)), minimum(10000, core.TaxExclusive)}, used: 100,
			want: []rated{{"per_unit", 100, 100, 10000}}},
		{name: "ExclusiveMinimumInclusiveUsage", prices: []*core.Price{inclusive(perUnit(115)), minimum(10000, core.TaxExclusive)}, used: 99,
			want: []rated{{"per_unit", 99, 100, 9900}, {"minimum_spend", 1, 100, 100}}},
		// Near the bound: 2^53 - 1 gross in one unit price of 1.
		{name: "UpToTheBound", prices: []*core.Price{inclusive(perUnit(1))}, used: core.MaxUsageCharge,
			want: []rated{{"per_unit", 7832347178035644, 1, 7832347178035644}}},
		// 9007 × 10^12 gross, 7832173913043478 net = 9007 × 869565217391 + 2741.
		{name: "LargeSplits", prices: []*core.Price{inclusive(perUnit(1_000_000_000_000))}, used: 9007,
			want: []rated{{"per_unit", 6266, 869565217391, 6266 * 869565217391}, {"per_unit", 2741, 869565217392, 2741 * 869565217392}}},
	}
	start, end := time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 4, 30, 0, 0, 0, 0, time.UTC)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			plan := &core.Plan{Currency: "SAR", Prices: tc.prices}
			if tc.currency != "" {
				plan.Currency = tc.currency
			}
			if tc.included > 0 {
				plan.IncludedUsage = []core.IncludedUsage{{Metric: "m", Quantity: tc.included}}
			}
			lines := must(core.RateUsage(plan, core.Usage{"m": tc.used}, start, end))(t)
			var got []rated
			for _, l := range lines {
				got = append(got, rated{l.ComponentType, l.Quantity, l.UnitAmount, l.Amount})
				if l.Quantity*l.UnitAmount != l.Amount || l.PriceID == nil {
					t.Errorf("line %+v: amount is not quantity × unit, or no price", l)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("lines %v, want %v", got, tc.want)
			}
		})
	}
	// Past the bound, the gross amount is refused as a tax-exclusive one is.
	if _, err := core.RateUsage(&core.Plan{Currency: "SAR", Prices: []*core.Price{inclusive(perUnit(1_000_000_000_000))}},
		core.Usage{"m": 9008}, start, end); core.ErrorCode(err) != core.EUnprocessable {
		t.Errorf("past the bound: %v, want unprocessable", err)
	}
}

// inclusivePlan is a monthly SAR plan whose fees are carried by tax-inclusive price
// components (a nil fee has none), with more components.
func inclusivePlan(setup, recurring *int64, more ...*core.Price) *core.Plan {
	p := &core.Plan{ID: uuid.New(), Name: "Inclusive", BillingPeriod: core.BillingPeriodMonthly, Currency: "SAR", SetupFee: setup, RecurringFee: recurring}
	for component, fee := range map[string]*int64{core.PriceSetupFee: setup, core.PriceRecurringFee: recurring} {
		if fee != nil {
			p.Prices = append(p.Prices, &core.Price{ID: uuid.New(), ComponentType: component, Amount: fee, TaxTreatment: core.TaxInclusive, Status: core.PriceActive})
		}
	}
	p.Prices = append(p.Prices, more...)
	return p
}

func discountPrice(amount int64, treatment string) *core.Price {
	return &core.Price{ID: uuid.New(), ComponentType: core.PriceDiscount, Amount: &amount, TaxTreatment: treatment, Status: core.PriceActive}
}

// TestFirstInvoiceTaxInclusive: a tax-inclusive fee is billed at its net part, so the
// invoice totals the fee (to within a minor unit of rounding); an inclusive discount takes
// off its net part, capped at the invoice's net amount.
func TestFirstInvoiceTaxInclusive(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC)
	usd := inclusivePlan(nil, ptr[int64](11500))
	usd.Currency = "USD"
	mixed := inclusivePlan(ptr[int64](5000), nil)
	mixed.RecurringFee = ptr[int64](10000)
	mixed.Prices = append(mixed.Prices, &core.Price{ComponentType: core.PriceRecurringFee, Amount: ptr[int64](10000), TaxTreatment: core.TaxExclusive, Status: core.PriceActive})
	cases := []struct {
		name                           string
		plan                           *core.Plan
		amounts                        []int64
		subtotal, discount, tax, total int64
	}{
		{"Recurring", inclusivePlan(nil, ptr[int64](11500)), []int64{10000}, 10000, 0, 1500, 11500},
		{"SetupAndRecurring", inclusivePlan(ptr[int64](5000), ptr[int64](11500)), []int64{4348, 10000}, 14348, 0, 2152, 16500},
		{"OneMinorUnitOff", inclusivePlan(nil, ptr[int64](4)), []int64{3}, 3, 0, 0, 3}, // 3.48 net, VAT 0.45
		{"InclusiveSetupExclusiveRecurring", mixed, []int64{4348, 10000}, 14348, 0, 2152, 16500},
		{"RateZero", usd, []int64{11500}, 11500, 0, 0, 11500},
		// 2300 off, VAT included: 2000 net; the invoice totals 11500 - 2300.
		{"InclusiveDiscount", inclusivePlan(nil, ptr[int64](11500), discountPrice(-2300, core.TaxInclusive)), []int64{10000, -2000}, 10000, 2000, 1200, 9200},
		{"ExclusiveDiscount", inclusivePlan(nil, ptr[int64](11500), discountPrice(-2300, core.TaxExclusive)), []int64{10000, -2300}, 10000, 2300, 1155, 8855},
		// 23000 off, VAT included, is 20000 net: capped at the 10000 charged.
		{"InclusiveDiscountCapped", inclusivePlan(nil, ptr[int64](11500), discountPrice(-23000, core.TaxInclusive)), []int64{10000, -10000}, 10000, 10000, 0, 0},
		// 11040 off is 9600 net, which leaves 400 of 10000: the cap compares net amounts.
		{"InclusiveDiscountUnderTheCap", inclusivePlan(nil, ptr[int64](11500), discountPrice(-11040, core.TaxInclusive)), []int64{10000, -9600}, 10000, 9600, 60, 460},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			inv := core.FirstInvoice(tc.plan, now)
			var amounts []int64
			var taxes int64
			for _, l := range inv.Lines {
				amounts = append(amounts, l.Amount)
				taxes += l.Tax
				if l.Quantity != 1 || l.UnitAmount != l.Amount {
					t.Errorf("line %+v: not one unit at its amount", l)
				}
			}
			if fmt.Sprint(amounts) != fmt.Sprint(tc.amounts) {
				t.Errorf("line amounts %v, want %v", amounts, tc.amounts)
			}
			if inv.Subtotal != tc.subtotal || inv.Discount != tc.discount || inv.Tax != tc.tax || inv.Total != tc.total || taxes != inv.Tax {
				t.Errorf("subtotal/discount/tax/total = %d/%d/%d/%d (line taxes %d), want %d/%d/%d/%d",
					inv.Subtotal, inv.Discount, inv.Tax, inv.Total, taxes, tc.subtotal, tc.discount, tc.tax, tc.total)
			}
		})
	}
}

// TestRenewalInvoiceTaxInclusive renews a plan of 115.00 SAR a month including VAT with
// inclusive usage: every line net, the invoice's VAT on their sum, the total the gross.
func TestRenewalInvoiceTaxInclusive(t *testing.T) {
	t.Parallel()
	renewsAt, next := time.Date(2025, 5, 1, 9, 30, 0, 0, time.UTC), time.Date(2025, 6, 1, 9, 30, 0, 0, time.UTC)
	plan := inclusivePlan(nil, ptr[int64](11500), inclusive(perUnit(100)))
	usage := must(core.RateUsage(plan, core.Usage{"m": 13}, time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 4, 30, 0, 0, 0, 0, time.UTC)))(t)
	inv := core.RenewalInvoice(plan, renewsAt, next, false, true, usage, renewsAt)
	var got []rated
	for _, l := range inv.Lines {
		got = append(got, rated{l.ComponentType, l.Quantity, l.UnitAmount, l.Amount})
	}
	// 1300 gross of usage is 1130 net (13 × 86 + 12), the fee 10000 net: 11130, VAT 1669.5.
	want := []rated{{"per_unit", 1, 86, 86}, {"per_unit", 12, 87, 1044}, {"recurring_fee", 1, 10000, 10000}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("lines %v, want %v", got, want)
	}
	if inv.Subtotal != 11130 || inv.Discount != 0 || inv.Tax != 1670 || inv.Total != 12800 {
		t.Errorf("totals %d %d %d %d, want 11130 0 1670 12800", inv.Subtotal, inv.Discount, inv.Tax, inv.Total)
	}
	var taxes int64
	for _, l := range inv.Lines {
		taxes += l.Tax
	}
	if taxes != inv.Tax {
		t.Errorf("line taxes %d, want %d", taxes, inv.Tax)
	}
}

// TestProrationInvoiceTaxInclusive changes between tax-inclusive fees ten days into a 31-day
// March: each fee is prorated at its gross amount, then its net part carved out.
func TestProrationInvoiceTaxInclusive(t *testing.T) {
	t.Parallel()
	anchor := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	now := time.Date(2025, 3, 11, 0, 0, 0, 0, time.UTC)
	old, next := inclusivePlan(nil, ptr[int64](11500)), inclusivePlan(nil, ptr[int64](23000))
	before := &core.Subscription{CommercialStatus: core.CommercialActive, ServiceStatus: core.ServiceActive,
		BillingAnchorAt: anchor, RenewsAt: old.NextRenewal(anchor, now)}
	after := *before
	if err := after.Apply(core.ActionChangePlan, "organization", next, now); err != nil {
		t.Fatal(err)
	}
	// 23000 × 21/31 = 15580.65 gross, 13549 net charged; 11500 × 21/31 = 7790.32 gross, 6774
	// net credited; VAT 15 % of 6775 = 1016.25: the total is the gross difference, 7791.
	inv := must(core.ProrationInvoice(before, old, &after, next, true, nil, now))(t)
	if len(inv.Lines) != 2 || inv.Lines[0].Amount != 13549 || inv.Lines[1].Amount != -6774 {
		t.Errorf("lines %+v, want 13549 and -6774", inv.Lines)
	}
	if inv.Subtotal != 13549 || inv.Discount != 6774 || inv.Tax != 1016 || inv.Total != 7791 {
		t.Errorf("totals %d %d %d %d, want 13549 6774 1016 7791", inv.Subtotal, inv.Discount, inv.Tax, inv.Total)
	}
	// The downgrade credits 13549 net and charges 6774: the excess net goes to the balance.
	down := *before
	down.PlanID = next.ID
	afterDown := down
	if err := afterDown.Apply(core.ActionChangePlan, "organization", old, now); err != nil {
		t.Fatal(err)
	}
	inv = must(core.ProrationInvoice(&down, next, &afterDown, old, true, nil, now))(t)
	if inv.Total != 0 || inv.BalanceCredit != 13549-6774 {
		t.Errorf("downgrade: total %d, to the balance %d, want 0 and %d", inv.Total, inv.BalanceCredit, 13549-6774)
	}
	// A termination credits the unused part of the inclusive fee, net.
	final := must(before.FinalInvoice(old, nil, true, now))(t)
	if final.Total != 0 || final.BalanceCredit != 6774 {
		t.Errorf("termination: total %d, to the balance %d, want 0 and 6774", final.Total, final.BalanceCredit)
	}
}
