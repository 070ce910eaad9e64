package core

import (
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Billing invoice statuses.
const (
	InvoiceIssued = "issued"
	InvoiceVoid   = "void"

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
}

// InvoiceLine is one amount of an invoice: a charge (positive) or a discount (negative).
type InvoiceLine struct {
	ComponentType string `json:"component_type"`
	Description   string `json:"description"`
	Amount        int64  `json:"amount"`
}

// VATPercent is the VAT rate charged on invoices in currency: 15 % for SAR (Saudi VAT);
// other currencies are sold outside its scope and carry no tax.
func VATPercent(currency string) int64 {
	if currency == "SAR" {
		return 15
	}
	return 0
}

// PercentHalfUp returns percent % of amount (amount >= 0) in minor units, rounding half a
// minor unit up.
func PercentHalfUp(amount, percent int64) int64 {
	return (amount*percent + 50) / 100
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
	var lines []InvoiceLine
	var end time.Time
	if t := plan.TrialPolicy; t != nil && t.TrialDays > 0 {
		if !t.RequiresPaymentMethod {
			return nil
		}
		end = start.AddDate(0, 0, t.TrialDays-1)
		lines = appendCharge(lines, PriceSetupFee, "Setup fee", plan.SetupFee)
		lines = append(lines, InvoiceLine{ComponentType: "trial", Description: fmt.Sprintf("%d-day trial of %s", t.TrialDays, plan.Name), Amount: 0})
	} else {
		end = start
		if renews := plan.NextRenewal(now, now); renews != nil {
			end = dateOf(*renews).AddDate(0, 0, -1)
		}
		lines = appendCharge(lines, PriceSetupFee, "Setup fee", plan.SetupFee)
		lines = appendCharge(lines, PriceRecurringFee, recurringDescription(plan, start, end), plan.RecurringFee)
		if len(lines) == 0 {
			return nil
		}
	}
	return issueInvoice(plan, start, end, lines, true, now)
}

// RenewalInvoice is the invoice a subscription on plan issues at now for the period its
// renewal at renewsAt opens, up to the next renewal (next): the recurring fee of that period,
// billed in advance, with VAT as on FirstInvoice; usage is billed in arrears, never here.
// The renewal at the end of a trial (trialEnd) opens the first paid period: when the trial
// needed no payment method, the plan selection issued no invoice (see FirstInvoice), so this
// one also carries the setup fee and the plan's discount and credit components. Returns nil
// when nothing is due (a free or usage-only plan).
func RenewalInvoice(plan *Plan, renewsAt, next time.Time, trialEnd bool, now time.Time) *BillingInvoice {
	start, end := RenewalPeriod(renewsAt, next)
	firstCharge := trialEnd && (plan.TrialPolicy == nil || !plan.TrialPolicy.RequiresPaymentMethod)
	var lines []InvoiceLine
	if firstCharge {
		lines = appendCharge(lines, PriceSetupFee, "Setup fee", plan.SetupFee)
	}
	lines = appendCharge(lines, PriceRecurringFee, recurringDescription(plan, start, end), plan.RecurringFee)
	if len(lines) == 0 {
		return nil
	}
	return issueInvoice(plan, start, end, lines, firstCharge, now)
}

// RenewalPeriod is the period (first and last day, UTC) a renewal at renewsAt opens when the
// following one falls at next.
func RenewalPeriod(renewsAt, next time.Time) (start, end time.Time) {
	return dateOf(renewsAt), dateOf(next).AddDate(0, 0, -1)
}

// appendCharge appends a charge line of amount to lines when the amount is set and positive.
func appendCharge(lines []InvoiceLine, componentType, description string, amount *int64) []InvoiceLine {
	if amount != nil && *amount > 0 {
		lines = append(lines, InvoiceLine{ComponentType: componentType, Description: description, Amount: *amount})
	}
	return lines
}

// recurringDescription describes the recurring fee of plan for the period from start to end.
func recurringDescription(plan *Plan, start, end time.Time) string {
	return fmt.Sprintf("%s, %s to %s", plan.Name, start.Format(time.DateOnly), end.Format(time.DateOnly))
}

// issueInvoice totals the charge lines of plan for the period from start to end into an
// invoice issued at now: the plan's active discount and credit components reduce it when
// discounted, by their absolute amount and never below zero; VAT (VATPercent) is charged on
// subtotal - discount, rounded half-up; it is due PaymentTerms after issue.
func issueInvoice(plan *Plan, start, end time.Time, lines []InvoiceLine, discounted bool, now time.Time) *BillingInvoice {
	inv := &BillingInvoice{
		PlanID:            plan.ID,
		PeriodStart:       start,
		PeriodEnd:         end,
		Currency:          plan.Currency,
		Status:            InvoiceIssued,
		TaxDocumentStatus: TaxDocumentPending,
	}
	for _, l := range lines {
		inv.Subtotal += l.Amount
	}
	for _, p := range plan.Prices {
		if !discounted || p.Status != "active" || p.Amount == nil || (p.ComponentType != PriceDiscount && p.ComponentType != PriceCredit) {
			continue
		}
		d := min(abs(*p.Amount), inv.Subtotal-inv.Discount)
		if d > 0 {
			inv.Discount += d
			lines = append(lines, InvoiceLine{ComponentType: p.ComponentType, Description: "Discount", Amount: -d})
		}
	}
	inv.Lines = lines
	percent := VATPercent(plan.Currency)
	if percent == 0 {
		inv.TaxDocumentStatus = TaxDocumentNotApplicable
	}
	inv.Tax = PercentHalfUp(inv.Subtotal-inv.Discount, percent)
	inv.Total = inv.Subtotal - inv.Discount + inv.Tax
	due := now.Add(PaymentTerms)
	inv.IssuedAt, inv.DueAt = &now, &due
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
