package core

import (
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"
)

// Usage price component types and the line type of an overage rule (docs/design.md, "Usage
// rating").
const (
	PriceTieredUsage    = "tiered_usage"
	PriceGraduatedUsage = "graduated_usage"
	PriceVolumeUsage    = "volume_usage"
	PricePerUnit        = "per_unit"
	PricePackage        = "package_pricing"
	PriceMinimumSpend   = "minimum_spend"
	LineOverage         = "overage"
)

// Usage is what a subscription used in a period: the quantity of each metric.
type Usage map[string]int64

// MaxUsageCharge is the most the usage lines of one rating may charge together, in minor
// units: 2^53 - 1, the largest integer a JSON client reading numbers as doubles (JavaScript)
// still reads exactly, and far enough below int64's end that the invoice's fees, credits and
// VAT added to it cannot wrap.
const MaxUsageCharge = 1<<53 - 1

// RateUsage returns the lines that price usage, a closing period's usage on plan, for the
// days start to end (inclusive). For each metric, the plan's included quantity comes first
// (rounded down: a fraction of a unit includes no unit) and costs nothing; the units beyond
// it are the billable ones, priced by every active usage price component of the metric:
//
//   - per_unit: each billable unit at unit_amount.
//   - package_pricing: package_amount per started package of package_size billable units.
//   - graduated_usage and tiered_usage (its other name): each billable unit at the
//     unit_amount of the tier its position in the period's whole usage falls in, plus the
//     flat_amount of every tier a billable unit falls in. Included units fill the lowest
//     positions, so a tier priced 0 up to the included quantity and an included quantity
//     of the same size do not count the free units twice.
//   - volume_usage: every billable unit at the unit_amount of the tier the whole usage
//     reaches, plus that tier's flat_amount.
//
// An overage rule prices the billable units of a metric no active usage component prices
// (the seeded catalogue states both for the same metric: they are one price, charged once).
// A minimum_spend component tops the usage charges up to its amount with one more line.
// No billable usage gives no line (and no flat amount); lines list metrics in the plan's
// price order, then overage rules, then the top-up. Usage whose charges would exceed
// MaxUsageCharge is EUnprocessable, never a wrapped amount.
func RateUsage(plan *Plan, usage Usage, start, end time.Time) ([]InvoiceLine, error) {
	return rateUsage(plan, usage, start, end, true)
}

// RateSegment rates usage as RateUsage does, for a part of a period cut short by a change of
// plan or a termination: the part is rated on its own (included usage and tiers start from
// nothing) and has no minimum_spend top-up, a commitment of the plan for a whole period.
func RateSegment(plan *Plan, usage Usage, start, end time.Time) ([]InvoiceLine, error) {
	return rateUsage(plan, usage, start, end, false)
}

// rateUsage is RateUsage, with the minimum_spend top-up when topUp is set.
func rateUsage(plan *Plan, usage Usage, start, end time.Time, topUp bool) ([]InvoiceLine, error) {
	r := rater{start: start, end: end, percent: VATPercent(plan.Currency)}
	prices := billingPrices(plan)
	priced := map[string]bool{}
	for _, p := range prices {
		if p.Metric == nil {
			continue
		}
		priced[*p.Metric] = true
		used := usage[*p.Metric]
		r.rate(p, *p.Metric, used, included(plan, *p.Metric, used))
	}
	for _, o := range plan.OverageRules {
		if priced[o.Metric] {
			continue
		}
		if billable := usage[o.Metric] - included(plan, o.Metric, usage[o.Metric]); billable > 0 && o.UnitPrice > 0 {
			r.line(LineOverage, nil, fmt.Sprintf("%s beyond the included usage", o.Metric), billable, o.UnitPrice)
		}
	}
	for _, p := range prices {
		if topUp && p.ComponentType == PriceMinimumSpend && p.Amount != nil {
			r.topUp(p)
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return r.lines, nil
}

// billingPrices is the price components that bill a subscription on the plan, in the plan's
// order: the active ones, and on a retired plan those active until it retired.
func billingPrices(plan *Plan) []*Price {
	var out []*Price
	for _, p := range plan.Prices {
		if p.bills() {
			out = append(out, p)
		}
	}
	return out
}

// bills reports whether the price bills the subscriptions on its plan.
func (p *Price) bills() bool {
	return p.Status == PriceActive || p.RetiredWithPlan
}

// included is how many of the used units of metric the plan includes: its included quantity,
// rounded down, and never more than used.
func included(plan *Plan, metric string, used int64) int64 {
	var q float64
	for _, u := range plan.IncludedUsage {
		if u.Metric == metric {
			q += u.Quantity
		}
	}
	return min(used, int64(math.Floor(min(q, math.MaxInt64/2))))
}

// rater gathers the usage lines of one period, taxed at percent, and what they charge
// (tax-exclusive); err is set once they would charge more than MaxUsageCharge.
type rater struct {
	start, end time.Time
	percent    int64
	lines      []InvoiceLine
	charged    int64
	err        error
}

// line appends quantity × unit of price p (nil: an overage rule's) for the period, when the
// amount is positive, or sets r.err when the charges would pass MaxUsageCharge (quantity and
// unit are >= 0). The amount of a tax-inclusive price is its gross: the lines charge its
// tax-exclusive part (netLines).
func (r *rater) line(componentType string, p *Price, description string, quantity, unit int64) {
	if quantity <= 0 || unit <= 0 || !r.fits(description, quantity, unit) {
		return
	}
	var priceID *uuid.UUID
	if p != nil {
		priceID = &p.ID
	}
	net := netAmount(p, quantity*unit, r.percent)
	r.lines = append(r.lines, netLines(InvoiceLine{ComponentType: componentType, PriceID: priceID, Description: description,
		PeriodStart: r.start, PeriodEnd: r.end, Quantity: quantity}, net)...)
	r.charged += net
}

// fits reports whether quantity × unit (both > 0) more keeps the charges within
// MaxUsageCharge, and sets r.err when it does not (or already did not).
func (r *rater) fits(description string, quantity, unit int64) bool {
	if r.err == nil && quantity > (MaxUsageCharge-r.charged)/unit {
		r.err = Errorf(EUnprocessable, "Usage line %q (%d × %d) takes the period's usage charges past %d minor units, the most one invoice rates: it cannot be invoiced.",
			description, quantity, unit, int64(MaxUsageCharge))
	}
	return r.err == nil
}

// topUp appends the line that tops the usage charges up to the amount of p, a minimum_spend
// component, when they fall short of it: compared tax-exclusive, so a tax-inclusive minimum
// counts its net part.
func (r *rater) topUp(p *Price) {
	minimum := netAmount(p, *p.Amount, r.percent)
	description := fmt.Sprintf("Minimum spend of %d, usage charged %d", *p.Amount, r.charged)
	if minimum != *p.Amount {
		description = fmt.Sprintf("Minimum spend of %d including VAT (%d without), usage charged %d without VAT", *p.Amount, minimum, r.charged)
	}
	if r.charged >= minimum || !r.fits(description, 1, minimum-r.charged) {
		return
	}
	r.lines = append(r.lines, InvoiceLine{ComponentType: PriceMinimumSpend, PriceID: &p.ID, Description: description,
		PeriodStart: r.start, PeriodEnd: r.end, Quantity: 1, UnitAmount: minimum - r.charged, Amount: minimum - r.charged})
	r.charged = minimum
}

// rate prices the units free+1 .. used of metric with usage component p.
func (r *rater) rate(p *Price, metric string, used, free int64) {
	billable := used - free
	if billable <= 0 {
		return
	}
	switch p.ComponentType {
	case PricePerUnit:
		r.line(p.ComponentType, p, fmt.Sprintf("%s, %d at %d", metric, billable, *p.UnitAmount), billable, *p.UnitAmount)
	case PricePackage:
		packages := (billable + *p.PackageSize - 1) / *p.PackageSize
		r.line(p.ComponentType, p, fmt.Sprintf("%s, %d in %d package(s) of %d", metric, billable, packages, *p.PackageSize), packages, *p.PackageAmount)
	case PriceGraduatedUsage, PriceTieredUsage:
		lower := int64(0) // units below the tier
		for i, t := range p.Tiers {
			upper := tierUpper(t)
			from, to := max(lower, free), min(upper, used) // units from+1 .. to are billable in this tier
			if to > from {
				r.tier(p, metric, i, from+1, to, t)
			}
			if upper >= used {
				break
			}
			lower = upper
		}
	case PriceVolumeUsage:
		i, t := tierReached(p.Tiers, used)
		r.line(p.ComponentType, p, fmt.Sprintf("%s, %d at tier %d (whole usage %d)", metric, billable, i+1, used), billable, t.UnitAmount)
		r.flat(p, metric, i, t)
	}
}

// tier appends the lines of tier i of graduated price p for the billable units first..last.
func (r *rater) tier(p *Price, metric string, i int, first, last int64, t PriceTier) {
	r.line(p.ComponentType, p, fmt.Sprintf("%s, units %d to %d (tier %d)", metric, first, last, i+1), last-first+1, t.UnitAmount)
	r.flat(p, metric, i, t)
}

// flat appends the flat amount of tier i of p, when it has one.
func (r *rater) flat(p *Price, metric string, i int, t PriceTier) {
	if t.FlatAmount != nil {
		r.line(p.ComponentType, p, fmt.Sprintf("%s, flat amount of tier %d", metric, i+1), 1, *t.FlatAmount)
	}
}

// tierUpper is the last unit a tier takes: its upper bound (inclusive), rounded down; the
// open last tier takes every unit.
func tierUpper(t PriceTier) int64 {
	if t.UpperBound == nil {
		return math.MaxInt64
	}
	return int64(math.Floor(min(*t.UpperBound, math.MaxInt64/2)))
}

// tierReached is the tier whose range holds the used-th unit (the first tier for none).
func tierReached(tiers []PriceTier, used int64) (int, PriceTier) {
	for i, t := range tiers {
		if used <= tierUpper(t) {
			return i, t
		}
	}
	return len(tiers) - 1, tiers[len(tiers)-1]
}
