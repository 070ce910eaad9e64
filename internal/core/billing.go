package core

import (
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Billing invoice statuses.
const (
	InvoiceDraft         = "draft"
	InvoiceIssued        = "issued"
	InvoicePaid          = "paid"
	InvoicePartiallyPaid = "partially_paid"
	InvoiceVoid          = "void"
	InvoiceUncollectible = "uncollectible"

	TaxDocumentPending       = "pending"
	TaxDocumentNotApplicable = "not_applicable"
)

// PaymentTerms is how long after issue an invoice is due.
const PaymentTerms = 14 * 24 * time.Hour

// BillingInvoice is an invoice of a subscription. Amounts are minor units of Currency;
// PeriodStart and PeriodEnd are dates (UTC midnight), both inclusive.
type BillingInvoice struct {
	ID                uuid.UUID     `json:"id"`
	CreatedAt         time.Time     `json:"created_at"`
	UpdatedAt         time.Time     `json:"updated_at"`
	OrganizationID    uuid.UUID     `json:"organization_id"`
	SubscriptionID    uuid.UUID     `json:"subscription_id"`
	PlanID            uuid.UUID     `json:"plan_id"`
	PeriodStart       time.Time     `json:"period_start"`
	PeriodEnd         time.Time     `json:"period_end"`
	Lines             []InvoiceLine `json:"lines"`
	Subtotal          int64         `json:"subtotal"`
	Discount          int64         `json:"discount"`
	Tax               int64         `json:"tax"`
	Total             int64         `json:"total"`
	Currency          string        `json:"currency"`
	Status            string        `json:"status"`
	TaxDocumentStatus string        `json:"tax_document_status"`
	IssuedAt          *time.Time    `json:"issued_at"`
	DueAt             *time.Time    `json:"due_at"`
	PaidAt            *time.Time    `json:"paid_at"`
	// AmountPaid is what succeeded payments applied (internal: the invoice object of the
	// specification does not show it); OpensSelection marks the first invoice of a plan
	// selection, whose payment activates the selection.
	AmountPaid     int64 `json:"amount_paid"`
	OpensSelection bool  `json:"opens_selection"`
	// BalanceCredit is, on a draft, the credit its lines could not take off (a downgrade's or
	// a termination's unused fee beyond the charges), which goes to the organization's credit
	// balance for BalanceCreditReason once the invoice is issued; BalanceApplied is what the
	// balance took off the draft (ApplyCreditBalance). Not stored with the invoice: the credit
	// balance's ledger keeps both.
	BalanceCredit       int64  `json:"balance_credit,omitempty"`
	BalanceCreditReason string `json:"-"`
	BalanceApplied      int64  `json:"balance_applied,omitempty"`
}

// InvoiceLine is one amount of an invoice: a charge (positive) or a discount (negative),
// Quantity × UnitAmount, tax-exclusive (a tax-inclusive price's line carries its net part:
// netLines), for the days PeriodStart to PeriodEnd (inclusive, UTC midnight).
// ComponentType names the part of the plan it came from (setup_fee, recurring_fee, trial,
// discount, credit) and PriceID the price component, when it is one (the plan's own fees
// and the trial are not). Tax is the line's share of the invoice's VAT (AllocateTax).
type InvoiceLine struct {
	ComponentType string     `json:"component_type"`
	PriceID       *uuid.UUID `json:"price_id"`
	Description   string     `json:"description"`
	PeriodStart   time.Time  `json:"period_start"`
	PeriodEnd     time.Time  `json:"period_end"`
	Quantity      int64      `json:"quantity"`
	UnitAmount    int64      `json:"unit_amount"`
	Amount        int64      `json:"amount"`
	Tax           int64      `json:"tax"`
	Proration     bool       `json:"proration"`
}

// AllocateTax sets the Tax of every line so that the lines' taxes add up exactly to the VAT
// of their net sum at percent, rounded half-up as the invoice's tax is: the tax of a line
// is the VAT of the running net amount through it less that through the line before. Lines
// must list charges before the discounts, which never exceed them, so every running amount
// is >= 0; a discount line's tax is negative or zero (the VAT it takes off).
func AllocateTax(lines []InvoiceLine, percent int64) {
	var running int64
	for i := range lines {
		before := PercentHalfUp(running, percent)
		running += lines[i].Amount
		lines[i].Tax = PercentHalfUp(running, percent) - before
	}
}

// VATPercent is the VAT rate charged on invoices in currency: 15 % for SAR (Saudi VAT);
// other currencies are sold outside its scope and carry no tax.
func VATPercent(currency string) int64 {
	if currency == "SAR" {
		return 15
	}
	return 0
}

// Tax treatments of a price component: its amounts are tax-exclusive (VAT is added on top)
// or tax-inclusive (they already hold the VAT, which the invoice carves out: NetOfTax).
const (
	TaxExclusive = "tax_exclusive"
	TaxInclusive = "tax_inclusive"
)

// NetOfTax is the tax-exclusive part of gross (>= 0), an amount that includes VAT at percent
// (>= 0): gross × 100 / (100 + percent), rounded half-up (mulDiv: gross × 100 would wrap past
// int64 from 9.2 × 10^16). The VAT then charged on it (PercentHalfUp) gives back gross to
// within one minor unit.
func NetOfTax(gross, percent int64) int64 {
	d := 100 + percent
	return mulDiv(gross, 100, d, d/2)
}

// netAmount is the tax-exclusive part of gross, an amount of price p (nil: a plan's own
// amount, tax-exclusive) on an invoice taxed at percent: gross itself unless p is
// tax-inclusive.
func netAmount(p *Price, gross, percent int64) int64 {
	if p == nil || p.TaxTreatment != TaxInclusive {
		return gross
	}
	return NetOfTax(gross, percent)
}

// netLines returns l, a line of l.Quantity (> 0) units priced at a tax-inclusive gross amount,
// as the lines that charge net, its tax-exclusive part, keeping amount = quantity × unit
// amount exact: one line when the quantity divides net, else (quantity - r) units at u and r
// units at u + 1, where net = quantity × u + r. A part priced 0 per unit has no line, as a
// price of 0 has none. Both lines keep l's component, price, period and description.
func netLines(l InvoiceLine, net int64) []InvoiceLine {
	u, r := net/l.Quantity, net%l.Quantity
	var out []InvoiceLine
	for _, part := range []struct{ quantity, unit int64 }{{l.Quantity - r, u}, {r, u + 1}} {
		if part.quantity > 0 && part.unit > 0 {
			l.Quantity, l.UnitAmount, l.Amount = part.quantity, part.unit, part.quantity*part.unit
			out = append(out, l)
		}
	}
	return out
}

// PercentHalfUp returns percent % of amount (amount >= 0, 0 <= percent <= 100) in minor
// units, rounding half a minor unit up (mulDiv: amount × percent would wrap past int64 from
// 6.1 × 10^17 at 15 %, amounts whose VAT fits).
func PercentHalfUp(amount, percent int64) int64 {
	return mulDiv(amount, percent, 100, 50)
}

// mulDiv is a × num / den (a >= 0, 0 <= num <= den), rounded up when the remainder plus round
// reaches den (round den/2: half-up; den - 1: up). It works on the multiples of den in a and
// the rest apart, so a × num is never formed: exact for every int64 a.
func mulDiv(a, num, den, round int64) int64 {
	return a/den*num + (a%den*num+round)/den
}

// FirstInvoice is the invoice a plan selected at now issues for its first period, or nil
// when nothing is due now. How the fees combine:
//
//   - A trial without a payment method costs nothing now: no invoice; the setup fee and the
//     first recurring fee are billed when the trial ends.
//   - A trial with a payment method issues an invoice for the trial period carrying the setup
//     fee (possibly zero, to confirm the payment method); the first recurring fee is billed
//     when the trial ends.
//   - Without a trial, the invoice carries the setup fee and the recurring fee of the first
//     period, billed in advance; the period runs from today to the day before the renewal
//     (a one-time plan's period is today). Usage is billed in arrears, never here, so a plan
//     with neither fee (free or usage-only) issues no invoice.
//
// Active discount and credit components of the plan reduce the first invoice by their
// absolute amount, never below zero. VAT (VATPercent) is charged on subtotal - discount,
// rounded half-up, and the invoice is due PaymentTerms after issue.
func FirstInvoice(plan *Plan, now time.Time) *BillingInvoice {
	start := dateOf(now)
	d := &invoiceDraft{plan: plan, start: start, end: start}
	if t := plan.TrialPolicy; t != nil && t.TrialDays > 0 {
		if !t.RequiresPaymentMethod {
			return nil
		}
		d.end = start.AddDate(0, 0, t.TrialDays-1)
		d.charge(PriceSetupFee, "Setup fee", plan.SetupFee)
		d.line("trial", nil, fmt.Sprintf("%d-day trial of %s", t.TrialDays, plan.Name), 0)
	} else {
		if renews := plan.NextRenewal(now, now); renews != nil {
			d.end = dateOf(*renews).AddDate(0, 0, -1)
		}
		d.charge(PriceSetupFee, "Setup fee", plan.SetupFee)
		d.charge(PriceRecurringFee, d.recurringDescription(), plan.RecurringFee)
		if len(d.lines) == 0 {
			return nil
		}
	}
	inv := d.issue(true, now)
	inv.OpensSelection = true
	return inv
}

// RenewalInvoice is the invoice a subscription on plan issues at now for the period its
// renewal at renewsAt opens, up to the next renewal (next): the usage lines of the period the
// renewal closes (usage, from RateUsage: usage is billed in arrears) and, when fees is set,
// the recurring fee of the period it opens, billed in advance, with VAT as on FirstInvoice.
// The renewal at the end of a trial (trialEnd) opens the first paid period: when the trial
// needed no payment method, the plan selection issued no invoice (see FirstInvoice), so this
// one also carries the setup fee and the plan's discount and credit components. The
// invoice's period spans its lines' (without a fee, the closed period alone: it bills nothing
// of the one opening). Returns nil when nothing is due (a free plan, or a usage-only one
// without billable usage).
func RenewalInvoice(plan *Plan, renewsAt, next time.Time, trialEnd, fees bool, usage []InvoiceLine, now time.Time) *BillingInvoice {
	inv := renewalDraft(plan, renewsAt, next, trialEnd, fees, usage, now)
	if len(inv.Lines) == 0 {
		return nil
	}
	return inv
}

// renewalDraft is RenewalInvoice, also when it has no line.
func renewalDraft(plan *Plan, renewsAt, next time.Time, trialEnd, fees bool, usage []InvoiceLine, now time.Time) *BillingInvoice {
	start, end := RenewalPeriod(renewsAt, next)
	d := &invoiceDraft{plan: plan, start: start, end: end}
	firstCharge := fees && trialEnd && (plan.TrialPolicy == nil || !plan.TrialPolicy.RequiresPaymentMethod)
	d.lines = append(d.lines, usage...)
	if firstCharge {
		d.charge(PriceSetupFee, "Setup fee", plan.SetupFee)
	}
	if fees {
		d.charge(PriceRecurringFee, d.recurringDescription(), plan.RecurringFee)
	}
	if len(d.lines) == len(usage) { // no fee: the invoice is the closed period's usage alone
		d.spanLines()
	}
	for _, l := range usage {
		d.start = minTime(d.start, l.PeriodStart)
	}
	return d.issue(firstCharge, now)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// RenewalPeriod is the period (first and last day, UTC) a renewal at renewsAt opens when the
// following one falls at next.
func RenewalPeriod(renewsAt, next time.Time) (start, end time.Time) {
	return dateOf(renewsAt), dateOf(next).AddDate(0, 0, -1)
}

// invoiceDraft gathers the lines of an invoice of plan for the days start to end.
type invoiceDraft struct {
	plan       *Plan
	start, end time.Time
	lines      []InvoiceLine
}

// line appends a line of amount for the draft's days.
func (d *invoiceDraft) line(componentType string, priceID *uuid.UUID, description string, amount int64) {
	d.lines = append(d.lines, InvoiceLine{ComponentType: componentType, PriceID: priceID, Description: description,
		PeriodStart: d.start, PeriodEnd: d.end, Quantity: 1, UnitAmount: amount, Amount: amount})
}

// charge appends a charge line of amount, the plan's fee of componentType, when the amount is
// set and positive: its tax-exclusive part when the fee's price component is tax-inclusive.
func (d *invoiceDraft) charge(componentType, description string, amount *int64) {
	if amount != nil && *amount > 0 {
		d.line(componentType, nil, description, d.net(d.plan.feePrice(componentType), *amount))
	}
}

// net is the tax-exclusive part of gross, an amount of price p of the draft's plan (netAmount).
func (d *invoiceDraft) net(p *Price, gross int64) int64 {
	return netAmount(p, gross, VATPercent(d.plan.Currency))
}

// feePrice is the plan's active price component of componentType that carries one of its
// fees (its amount is the fee: CheckOffered), or nil when it has none.
func (p *Plan) feePrice(componentType string) *Price {
	for _, price := range billingPrices(p) {
		if price.ComponentType == componentType && price.Amount != nil {
			return price
		}
	}
	return nil
}

// recurringDescription describes the recurring fee of the draft's plan for its days.
func (d *invoiceDraft) recurringDescription() string {
	return fmt.Sprintf("%s, %s to %s", d.plan.Name, d.start.Format(time.DateOnly), d.end.Format(time.DateOnly))
}

// issue totals the draft's charge lines into an invoice issued at now: the plan's active
// discount and credit components reduce it when discounted, by their absolute amount (its
// tax-exclusive part for a tax-inclusive component, as the lines are) and never below zero; VAT (VATPercent) is charged on subtotal - discount, rounded half-up, and
// allocated to the lines (AllocateTax); it is due PaymentTerms after issue.
func (d *invoiceDraft) issue(discounted bool, now time.Time) *BillingInvoice {
	inv := &BillingInvoice{
		PlanID:            d.plan.ID,
		PeriodStart:       d.start,
		PeriodEnd:         d.end,
		Currency:          d.plan.Currency,
		Status:            InvoiceIssued,
		TaxDocumentStatus: TaxDocumentPending,
	}
	for _, l := range d.lines { // charges make the subtotal, credits (a proration's) the discount
		if l.Amount > 0 {
			inv.Subtotal += l.Amount
		} else {
			inv.Discount -= l.Amount
		}
	}
	for _, p := range d.plan.Prices {
		if !discounted || !p.bills() || p.Amount == nil || (p.ComponentType != PriceDiscount && p.ComponentType != PriceCredit) {
			continue
		}
		amount := min(d.net(p, abs(*p.Amount)), inv.Subtotal-inv.Discount)
		if amount > 0 {
			inv.Discount += amount
			d.line(p.ComponentType, &p.ID, "Discount", -amount)
		}
	}
	if VATPercent(d.plan.Currency) == 0 {
		inv.TaxDocumentStatus = TaxDocumentNotApplicable
	}
	inv.Lines = d.lines
	inv.settleTax()
	due := now.Add(PaymentTerms)
	inv.IssuedAt, inv.DueAt = &now, &due
	return inv
}

// settleTax charges VAT (VATPercent) on subtotal - discount, rounded half-up, allocates it
// to the lines (AllocateTax) and totals the invoice.
func (inv *BillingInvoice) settleTax() {
	percent := VATPercent(inv.Currency)
	AllocateTax(inv.Lines, percent)
	inv.Tax = PercentHalfUp(inv.Subtotal-inv.Discount, percent)
	inv.Total = inv.Subtotal - inv.Discount + inv.Tax
}

// asDraft makes inv a draft: an invoice not issued (nor due).
func asDraft(inv *BillingInvoice) *BillingInvoice {
	inv.Status, inv.IssuedAt, inv.DueAt = InvoiceDraft, nil, nil
	return inv
}

// Charges reports whether the plan charges anything: a fee, a minimum commitment or a
// priced overage. A plan that charges nothing (a sandbox or a free tier) is not commercial.
func (p *Plan) Charges() bool {
	for _, amount := range []*int64{p.SetupFee, p.RecurringFee, p.MinimumCommitment} {
		if amount != nil && *amount > 0 {
			return true
		}
	}
	for _, o := range p.OverageRules {
		if o.UnitPrice > 0 {
			return true
		}
	}
	return false
}

// periodMonths is the length of a plan's cycle in months, 0 for a plan that never renews.
// Usage-only plans renew monthly: usage is invoiced per month.
func (p *Plan) periodMonths() int {
	switch p.BillingPeriod {
	case BillingPeriodAnnual:
		return 12
	case BillingPeriodOneTime:
		return 0
	default:
		return 1
	}
}

// CycleAnchor is when the recurring cycle of the plan begins for a subscription starting at
// now: at the end of its trial, if it has one.
func (p *Plan) CycleAnchor(now time.Time) time.Time {
	if p.TrialPolicy != nil && p.TrialPolicy.TrialDays > 0 {
		return now.AddDate(0, 0, p.TrialPolicy.TrialDays)
	}
	return now
}

// NextRenewal is the first cycle boundary strictly after now of a cycle anchored at anchor
// (the anchor itself when it is still ahead, e.g. during a trial), or nil for a one-time
// plan. Boundaries keep the anchor's day of month, clamped to shorter months.
func (p *Plan) NextRenewal(anchor, now time.Time) *time.Time {
	months := p.periodMonths()
	if months == 0 {
		return nil
	}
	t := anchor
	for k := 1; !t.After(now); k++ {
		t = addMonths(anchor, k*months)
	}
	return &t
}

// PreviousRenewal is the last cycle boundary strictly before at of a cycle anchored at anchor,
// the anchor included, or false when at is not after the anchor (the end of a trial) or the
// plan never renews.
func (p *Plan) PreviousRenewal(anchor, at time.Time) (time.Time, bool) {
	months := p.periodMonths()
	if months == 0 || !at.After(anchor) {
		return time.Time{}, false
	}
	prev := anchor
	for k := 1; ; k++ {
		t := addMonths(anchor, k*months)
		if !t.Before(at) {
			return prev, true
		}
		prev = t
	}
}

// addMonths adds n months to t, clamping the day to the last day of the resulting month
// (January 31 + 1 month is February 28 or 29, not March 3).
func addMonths(t time.Time, n int) time.Time {
	y, m, d := t.Date()
	first := time.Date(y, m+time.Month(n), 1, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), t.Location())
	last := first.AddDate(0, 1, -1).Day()
	return first.AddDate(0, 0, min(d, last)-1)
}

// dateOf is the UTC calendar day of t, at midnight.
func dateOf(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
