package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/provider/coreapi/internal/apitest"
)

// journeyPayment is the API's Payment.
type journeyPayment struct {
	ID          string    `json:"id"`
	CreatedAt   time.Time `json:"created_at"`
	InvoiceID   string    `json:"invoice_id"`
	Amount      int64     `json:"amount"`
	Status      string    `json:"status"`
	FailureCode *string   `json:"failure_code"`
}

// billingJourney is one organization's journey on a test clock, with the helpers that read
// and pay its invoices over HTTP.
type billingJourney struct {
	t     *testing.T
	env   *apitest.Env
	org   string
	token string
}

// invoice reads an invoice.
func (j billingJourney) invoice(id string) (billingInvoice, *apitest.Response) {
	j.t.Helper()
	resp := j.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/invoices/" + id, Token: j.token})
	if resp.Status != http.StatusOK {
		j.t.Fatalf("get invoice %s: %d %s", id, resp.Status, resp.Body)
	}
	return decode[billingInvoice](j.t, resp), resp
}

// pay pays amount of the invoice with method at the clock's time at, checks the payment's
// answer (201, wantStatus, created at the clock's time) and returns the invoice afterwards.
func (j billingJourney) pay(invoice string, amount int64, method, wantStatus string, at time.Time) billingInvoice {
	j.t.Helper()
	resp := j.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/invoices/" + invoice + "/payments", Token: j.token,
		Body: fmt.Sprintf(`{"amount":%d,"payment_method":%q}`, amount, method)})
	if resp.Status != http.StatusCreated {
		j.t.Fatalf("pay %d with %s: %d %s", amount, method, resp.Status, resp.Body)
	}
	p := decode[journeyPayment](j.t, resp)
	if p.Status != wantStatus || p.InvoiceID != invoice || p.Amount != amount || !p.CreatedAt.Equal(at) {
		j.t.Errorf("payment %+v, want %s of %d on %s at the clock's %v", p, wantStatus, amount, invoice, at)
	}
	inv, _ := j.invoice(invoice)
	return inv
}

// wantLines checks every line of the invoice: its period, quantity × unit amount = amount,
// and that the lines' amounts and taxes add up exactly to the invoice's subtotal − discount,
// tax and total. It returns the lines' component types in order.
func (j billingJourney) wantLines(inv billingInvoice) []string {
	j.t.Helper()
	resp := j.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/invoices/" + inv.ID + "/lines", Token: j.token})
	if resp.Status != http.StatusOK {
		j.t.Fatalf("lines of %s: %d %s", inv.ID, resp.Status, resp.Body)
	}
	lines := decode[struct {
		Items []renewalLine `json:"items"`
	}](j.t, resp).Items
	var amounts, taxes int64
	var types []string
	for i, l := range lines {
		if l.Quantity*l.UnitAmount != l.Amount || l.Description == "" || l.Proration ||
			l.Period.Start != inv.BillingPeriod.Start || l.Period.End != inv.BillingPeriod.End {
			j.t.Errorf("invoice %s line %d: %+v (period %s..%s)", inv.ID, i, l, inv.BillingPeriod.Start, inv.BillingPeriod.End)
		}
		if l.Tax != (l.Amount*15+50)/100 {
			j.t.Errorf("invoice %s line %d: tax %d on %d, want 15 %%", inv.ID, i, l.Tax, l.Amount)
		}
		amounts += l.Amount
		taxes += l.Tax
		types = append(types, l.ComponentType)
	}
	if amounts != inv.Subtotal-inv.Discount || taxes != inv.Tax || amounts+taxes != inv.Total {
		j.t.Errorf("invoice %s: lines %d + tax %d; invoice subtotal %d − discount %d, tax %d, total %d",
			inv.ID, amounts, taxes, inv.Subtotal, inv.Discount, inv.Tax, inv.Total)
	}
	return types
}

// eventTypes lists the types of the organization's stored webhook events, oldest first,
// leaving out the deprecated alias billing_invoice.issued (stored with every invoice.issued).
func (j billingJourney) eventTypes() []string {
	j.t.Helper()
	var types []string
	for path := "/v1/events?limit=100"; ; {
		resp := j.env.Do(apitest.Request{Method: http.MethodGet, Path: path, Token: j.token})
		if resp.Status != http.StatusOK {
			j.t.Fatalf("list events: %d %s", resp.Status, resp.Body)
		}
		page := decode[struct {
			Items []struct {
				Type string `json:"type"`
			} `json:"items"`
			NextCursor *string `json:"next_cursor"`
		}](j.t, resp)
		for _, e := range page.Items {
			if e.Type != "billing_invoice.issued" {
				types = append([]string{e.Type}, types...)
			}
		}
		if page.NextCursor == nil {
			return types
		}
		path = "/v1/events?limit=100&cursor=" + *page.NextCursor
	}
}

// TestBillingJourney is issue 25's journey, HTTP only, on a test clock: a monthly plan whose
// first invoice must be paid (no renewal while it is not), a declined payment, dunning retrying
// the declined method until the write-off (issue 26), then a successful payment activating the
// selection and recovering the subscription,
// a month's renewal billed line by line, paid in two parts, cancel, and the service's end with
// nothing billed after it. Every billing time (payments, paid_at, the renewal's issue) is the
// clock's, never the wall clock's, and the organization's events tell the same story in order.
func TestBillingJourney(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org, token := newOrganization(t, env)
	j := billingJourney{t: t, env: env, org: org, token: token}
	start := clockAt(t, "2025-03-01T09:30:00Z")
	clock := createClock(t, env, token, org, "2025-03-01T09:30:00Z")
	sub := createSubscription(t, env, token, org, productEinvoice, planEinvoiceSandbox)
	waitForService(t, env, token, sub.ID, "active")

	// Select Growth monthly: its first invoice (setup fee + March) must be paid.
	resp := subscriptionAction(env, token, sub.ID, "select-plan", `{"plan_id":"`+planEinvoiceGrowthMonthly+`"}`)
	if resp.Status != http.StatusOK {
		t.Fatalf("select plan: %d %s", resp.Status, resp.Body)
	}
	sel := decode[planSelection](t, resp)
	if sel.Activation != "awaiting_payment" || sel.Invoice == nil || sel.Invoice.Status != "issued" ||
		sel.Invoice.Total != 91885 || sel.Invoice.IssuedAt == nil || !sel.Invoice.IssuedAt.Equal(start) {
		t.Fatalf("selection %+v, want an invoice of 91885 awaiting payment issued at the clock's time", sel)
	}
	first := sel.Invoice.ID
	// Its tax document (simplified: the organization gives no VAT number) is issued by the
	// background job, at the clock's time, and validates like any tax invoice.
	j.wantTaxDocument(first)
	firstInv, before := j.invoice(first)
	if types := j.wantLines(firstInv); fmt.Sprint(types) != "[setup_fee recurring_fee]" {
		t.Errorf("first invoice's lines %v", types)
	}

	// Declined: recorded, the invoice unchanged (byte for byte), the selection still waiting.
	j.pay(first, 91885, "pm_sandbox_declined", "failed", start)
	if _, after := j.invoice(first); string(after.Body) != string(before.Body) {
		t.Errorf("a declined payment changed the invoice:\n%s\n%s", before.Body, after.Body)
	}
	if n := env.Count(`SELECT count(*) FROM audit_events WHERE organization_id = $1 AND action = 'subscription.plan_activated'`, org); n != 0 {
		t.Errorf("%d activations after a declined payment", n)
	}

	// A month on, unpaid, the selection does not renew: April 1 passes with nothing billed.
	// Dunning has retried the declined method on file (March 18, 20, 22) and written it off.
	at := clockAt(t, "2025-04-02T00:00:00Z")
	advance(t, env, token, clock.ID, at.Format(time.RFC3339))
	if invs := invoicesOf(t, env, sub.ID); len(invs) != 1 || invs[0].Status != "uncollectible" {
		t.Fatalf("%d invoices while the selection awaits payment, want 1, written off: %+v", len(invs), invs)
	}
	if s := getSubscription(t, env, token, sub.ID); s.BillingStatus != "written_off" || s.CommercialStatus != "paused" || s.ServiceStatus != "suspended" {
		t.Errorf("unpaid a month: %s/%s/%s, want written_off/paused/suspended", s.BillingStatus, s.CommercialStatus, s.ServiceStatus)
	}
	wantRenewsAt(t, getSubscription(t, env, token, sub.ID), "2025-04-01T09:30:00Z")

	// Paid in full at the clock's time: paid, paid_at is the clock's, the selection activated.
	if paid := j.pay(first, 91885, "pm_sandbox_success", "succeeded", at); paid.Status != "paid" || paid.PaidAt == nil || !paid.PaidAt.Equal(at) {
		t.Errorf("first invoice %s paid at %v, want paid at the clock's %v", paid.Status, paid.PaidAt, at)
	}
	if s := getSubscription(t, env, token, sub.ID); s.BillingStatus != "current" || s.CommercialStatus != "active" || s.ServiceStatus != "active" {
		t.Errorf("paid: %s/%s/%s, want current/active/active", s.BillingStatus, s.CommercialStatus, s.ServiceStatus)
	}
	activated := env.Do(apitest.Request{Method: http.MethodGet, Token: token,
		Path: "/v1/audit-events?action=subscription.plan_activated&resource_id=" + sub.ID})
	if activated.Status != http.StatusOK || len(items(t, activated)) != 1 {
		t.Errorf("activation audit: %d %s", activated.Status, activated.Body)
	}

	// Paid, the renewal that fell due on April 1 runs at the next advance, billed at the clock's
	// time when it could run (the payment's), not at the advance's target.
	advance(t, env, token, clock.ID, "2025-04-15T00:00:00Z")
	renewedAt := at
	invs := invoicesOf(t, env, sub.ID)
	if len(invs) != 2 {
		t.Fatalf("%d invoices after a month, want 2", len(invs))
	}
	renewal, _ := j.invoice(invs[1].ID)
	if renewal.BillingPeriod.Start != "2025-04-01" || renewal.BillingPeriod.End != "2025-04-30" ||
		renewal.Subtotal != 29900 || renewal.Discount != 0 || renewal.Tax != 4485 || renewal.Total != 34385 ||
		renewal.Status != "issued" || renewal.IssuedAt == nil || !renewal.IssuedAt.Equal(renewedAt) ||
		renewal.DueAt == nil || !renewal.DueAt.Equal(renewedAt.Add(14*24*time.Hour)) || renewal.PaidAt != nil {
		t.Errorf("renewal invoice %+v", renewal)
	}
	if types := j.wantLines(renewal); fmt.Sprint(types) != "[recurring_fee]" {
		t.Errorf("renewal's lines %v", types)
	}
	j.wantTaxDocument(renewal.ID)
	wantRenewsAt(t, getSubscription(t, env, token, sub.ID), "2025-05-01T09:30:00Z")

	// Paid in two parts at the clock's time.
	at = clockAt(t, "2025-04-15T00:00:00Z")
	if part := j.pay(renewal.ID, 10000, "pm_sandbox_success", "succeeded", at); part.Status != "partially_paid" || part.PaidAt != nil {
		t.Errorf("after a part: %s paid at %v", part.Status, part.PaidAt)
	}
	if paid := j.pay(renewal.ID, 24385, "pm_sandbox_success", "succeeded", at); paid.Status != "paid" || paid.PaidAt == nil || !paid.PaidAt.Equal(at) {
		t.Errorf("after the rest: %s paid at %v, want paid at %v", paid.Status, paid.PaidAt, at)
	}

	// Cancel; past the period invoiced the service ends, at its end, and nothing more is billed.
	if resp := subscriptionAction(env, token, sub.ID, "cancel", ""); resp.Status != http.StatusOK {
		t.Fatalf("cancel: %d %s", resp.Status, resp.Body)
	}
	wantEnded(t, env, token, clock.ID, sub.ID, "2025-07-15T00:00:00Z", "2025-05-01T09:30:00Z", 2)

	// The database agrees: seven payments (the declined one and three retries failed) at the clock's times, both invoices paid
	// in full, one renewal recorded for April.
	if n := env.Count(`SELECT count(*) FROM billing_payments WHERE organization_id = $1 AND status = 'succeeded' AND created_at < '2025-05-01'`, org); n != 3 {
		t.Errorf("%d succeeded payments at the clock's times, want 3", n)
	}
	if n := env.Count(`SELECT count(*) FROM billing_payments WHERE organization_id = $1 AND status = 'failed' AND created_at = '2025-03-01T09:30:00Z'`, org); n != 1 {
		t.Errorf("%d failed payments at the clock's time, want 1", n)
	}
	if n := env.Count(`SELECT count(*) FROM billing_payments WHERE organization_id = $1 AND status = 'failed' AND payment_method = 'pm_sandbox_declined'
		AND created_at IN ('2025-03-18T09:30:00Z', '2025-03-20T09:30:00Z', '2025-03-22T09:30:00Z')`, org); n != 3 {
		t.Errorf("%d failed retries at the schedule's times, want 3", n)
	}
	if n := env.Count(`SELECT count(*) FROM billing_invoices WHERE organization_id = $1 AND status = 'paid' AND amount_paid = total`, org); n != 2 {
		t.Errorf("%d invoices paid in full, want 2", n)
	}
	if n := env.Count(`SELECT count(*) FROM subscription_renewals WHERE organization_id = $1 AND period_start = '2025-04-01'`, org); n != 1 {
		t.Errorf("%d renewals recorded for April, want 1", n)
	}

	// Events of one transaction are listed in the order they were published (ids are UUIDv7).
	want := []string{
		"subscription.created", "subscription.activated", // the sandbox plan, provisioned
		"invoice.issued", "subscription.plan_changed", // the selection's first invoice, in its transaction
		"invoice.tax_document_issued", // its tax document, by the job
		"invoice.payment_failed",
		"subscription.overdue",                                        // March 15: unpaid at its due date
		"invoice.payment_failed", "subscription.payment_retry_failed", // March 18 and 20: the declined method retried
		"invoice.payment_failed", "subscription.payment_retry_failed",
		"invoice.payment_failed", "invoice.uncollectible", "subscription.written_off", // March 22
		"invoice.paid", "subscription.recovered",
		"invoice.issued", "subscription.renewed", // April, in one transaction
		"invoice.tax_document_issued",
		"invoice.paid",
		"subscription.cancelled", "subscription.terminated",
	}
	if got := j.eventTypes(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events, oldest first:\n got %v\nwant %v", got, want)
	}
}

// wantTaxDocument waits for the tax document of invoice id and checks it: a simplified tax
// invoice for the invoice's total, that validates, issued by the job at the clock's time (the
// invoice's, or later when the clock moved on before the job ran).
func (j *billingJourney) wantTaxDocument(id string) {
	j.t.Helper()
	doc := taxDocumentItem(waitForTaxDocuments(j.t, j.env, j.token, id, 1), 0)
	_, resp := j.invoice(id)
	inv := resp.JSON(j.t)
	if doc["kind"] != "simplified_tax_invoice" || doc["payable_amount"] != inv["total"] || doc["issue_date"].(string) < inv["issued_at"].(string)[:10] ||
		doc["issue_date"].(string) > "2025-12-31" {
		j.t.Errorf("tax document %v of invoice %v", doc, inv)
	}
	checkTotalsMatch(j.t, j.env, j.token, doc["id"].(string), inv)
	checkDocumentValidates(j.t, j.env, j.token, doc["id"].(string))
}

// TestRatedBillingJourney is issue 26's journey, HTTP only, on a test clock: a rated plan (fee
// 10000, 2 resolutions included, graduated tiers ≤4 @100, ≤6 @50 + flat 300, beyond @20) with
// a 14-day trial; the trial's end bills the fee alone (trial usage is free); the first renewal
// rates the month's usage across the tiers; its payment is declined, dunning retries, writes it
// off and suspends the service; a full payment reactivates it, and the next renewal rates again.
// Every amount below is computed by hand; every invoice's tax document validates.
func TestRatedBillingJourney(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	s := newRatedSubscription(t, env, "2025-03-01T09:30:00Z", productAddress, planAddressPreview)
	j := billingJourney{t: t, env: env, org: s.org, token: s.token}
	plan := ratedPlan(t, env, `{"trial_days":14,"requires_payment_method":false}`)
	sel := decode[planSelection](t, subscriptionAction(env, s.token, s.id, "select-plan", `{"plan_id":"`+plan+`"}`))
	if sel.Activation != "active" || sel.Invoice != nil {
		t.Fatalf("selection %+v, want active without an invoice (a trial)", sel)
	}
	wantRenewsAt(t, sel.Subscription, "2025-03-15T09:30:00Z")

	// Usage during the trial is free: the trial's end bills the first month's fee alone.
	advance(t, env, s.token, s.clock, "2025-03-05T00:00:00Z")
	s.resolve(t, env, 3)
	advance(t, env, s.token, s.clock, "2025-03-16T00:00:00Z")
	invs := invoicesOf(t, env, s.id)
	if len(invs) != 1 {
		t.Fatalf("%d invoices at the trial's end, want 1", len(invs))
	}
	trialEnd := invs[0]
	wantLine(t, trialEnd, 0, "recurring_fee", 1, 10000, "2025-03-15", "2025-04-14", false)
	wantTotals(t, trialEnd, 10000, 0, 1500, 11500) // 15 % of 10000
	if len(trialEnd.Lines) != 1 || !trialEnd.IssuedAt.Equal(clockAt(t, "2025-03-15T09:30:00Z")) {
		t.Errorf("trial's end invoice %+v", trialEnd)
	}
	j.wantTaxDocument(trialEnd.ID)
	j.pay(trialEnd.ID, 11500, "pm_sandbox_success", "succeeded", clockAt(t, "2025-03-16T00:00:00Z"))

	// 7 resolutions in the first paid month: 2 included, 3-4 at 100, 5-6 at 50 + flat 300, 7 at 20.
	advance(t, env, s.token, s.clock, "2025-03-20T00:00:00Z")
	s.resolve(t, env, 7)
	renewedAt := clockAt(t, "2025-04-15T09:30:00Z")
	advance(t, env, s.token, s.clock, "2025-04-16T00:00:00Z")
	invs = invoicesOf(t, env, s.id)
	if len(invs) != 2 {
		t.Fatalf("%d invoices after the first renewal, want 2", len(invs))
	}
	first := invs[1]
	wantLine(t, first, 0, "graduated_usage", 2, 100, "2025-03-15", "2025-04-14", false) // 200, tax 30
	wantLine(t, first, 1, "graduated_usage", 2, 50, "2025-03-15", "2025-04-14", false)  // 100, tax 15
	wantLine(t, first, 2, "graduated_usage", 1, 300, "2025-03-15", "2025-04-14", false) // the flat amount, tax 45
	wantLine(t, first, 3, "graduated_usage", 1, 20, "2025-03-15", "2025-04-14", false)  // 20, tax 3
	wantLine(t, first, 4, "recurring_fee", 1, 10000, "2025-04-15", "2025-05-14", false) // tax 1500
	wantTotals(t, first, 10620, 0, 1593, 12213)
	if len(first.Lines) != 5 || first.BillingPeriod.Start != "2025-03-15" || first.BillingPeriod.End != "2025-05-14" ||
		first.Status != "issued" || !first.IssuedAt.Equal(renewedAt) || !first.DueAt.Equal(renewedAt.Add(14*24*time.Hour)) {
		t.Errorf("first renewal %+v", first)
	}
	j.wantTaxDocument(first.ID)

	// Declined, then dunned: overdue at its due date (April 29), in dunning and past due at the
	// first failed retry (May 2), written off at the last (May 6): uncollectible, paused, suspended.
	d := dunned{org: s.org, token: s.token, clock: s.clock, sub: s.id, invoice: first.ID}
	j.pay(first.ID, 12213, "pm_sandbox_declined", "failed", clockAt(t, "2025-04-16T00:00:00Z"))
	advance(t, env, s.token, s.clock, "2025-04-29T10:00:00Z")
	d.wantStatuses(t, env, "overdue", "active", "active")
	advance(t, env, s.token, s.clock, "2025-05-02T10:00:00Z")
	d.wantStatuses(t, env, "in_dunning", "past_due", "active")
	advance(t, env, s.token, s.clock, "2025-05-07T00:00:00Z")
	d.wantStatuses(t, env, "written_off", "paused", "suspended")
	d.wantInvoiceStatus(t, env, "uncollectible")
	d.wantSteps(t, env, 1, 2, 1, 0)
	refused := env.Do(apitest.Request{Method: http.MethodPost, Path: resolvePath, Token: s.token, Body: `{"short_address":"RRMA1234","language":"en"}`})
	assertProblem(t, "suspended", refused, http.StatusForbidden, "subscription_inactive")

	// Paid in full: paid, current, active, and the service back at the very next request.
	if paid := j.pay(first.ID, 12213, "pm_sandbox_success", "succeeded", clockAt(t, "2025-05-07T00:00:00Z")); paid.Status != "paid" {
		t.Errorf("after the payment the invoice is %s", paid.Status)
	}
	waitForService(t, env, s.token, s.id, "active")
	d.wantStatuses(t, env, "current", "active", "active")
	d.wantSteps(t, env, 1, 2, 1, 1)
	s.resolve(t, env, 5)

	// The next renewal (May 15) runs again: 5 used, 2 included: 3-4 at 100, 5 at 50 + flat 300.
	advance(t, env, s.token, s.clock, "2025-05-16T00:00:00Z")
	invs = invoicesOf(t, env, s.id)
	if len(invs) != 3 {
		t.Fatalf("%d invoices after the renewal following reactivation, want 3", len(invs))
	}
	next := invs[2]
	wantLine(t, next, 0, "graduated_usage", 2, 100, "2025-04-15", "2025-05-14", false) // tax 30
	wantLine(t, next, 1, "graduated_usage", 1, 50, "2025-04-15", "2025-05-14", false)  // tax 7.5, rounded half up: 8
	wantLine(t, next, 2, "graduated_usage", 1, 300, "2025-04-15", "2025-05-14", false) // tax 45
	wantLine(t, next, 3, "recurring_fee", 1, 10000, "2025-05-15", "2025-06-14", false) // tax 1500
	wantTotals(t, next, 10550, 0, 1583, 12133)
	if len(next.Lines) != 4 || !next.IssuedAt.Equal(clockAt(t, "2025-05-15T09:30:00Z")) {
		t.Errorf("renewal after reactivation %+v", next)
	}
	j.wantTaxDocument(next.ID)
}
