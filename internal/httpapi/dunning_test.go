package httpapi_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/provider/coreapi/internal/apitest"
)

// Dunning (docs/design.md, "Dunning") on a test clock. Every case starts as dunnedSelection
// does: at 2025-03-01T09:30Z an e-invoicing subscription selects Growth monthly, whose first
// invoice of 91885 is due on March 15 at 09:30. Unpaid, the subscription is overdue then,
// retries fall on March 18, 20 and 22 at 09:30, and the last writes it off.
const (
	dunningStart    = "2025-03-01T09:30:00Z"
	dunningDue      = "2025-03-15T09:30:00Z"
	dunningRetry1   = "2025-03-18T09:30:00Z"
	dunningRetry2   = "2025-03-20T09:30:00Z"
	dunningWriteOff = "2025-03-22T09:30:00Z"
	dunningTotal    = 91885
)

// dunned is an organization on a test clock and its subscription whose invoice will be dunned.
type dunned struct {
	org, token, clock, sub, invoice string
}

// dunnedSelection starts a case: a new organization on a clock at dunningStart, its running
// e-invoicing subscription on Growth monthly awaiting payment of its first invoice.
func dunnedSelection(t testing.TB, env *apitest.Env) dunned {
	t.Helper()
	org, token := newOrganization(t, env)
	clock := createClock(t, env, token, org, dunningStart)
	sub := createSubscription(t, env, token, org, productEinvoice, planEinvoiceSandbox)
	waitForService(t, env, token, sub.ID, "active")
	resp := subscriptionAction(env, token, sub.ID, "select-plan", `{"plan_id":"`+planEinvoiceGrowthMonthly+`"}`)
	if resp.Status != http.StatusOK {
		t.Fatalf("select plan: %d %s", resp.Status, resp.Body)
	}
	sel := decode[planSelection](t, resp)
	if sel.Invoice == nil || sel.Invoice.Total != dunningTotal {
		t.Fatalf("selection %+v, want an invoice of %d", sel, dunningTotal)
	}
	return dunned{org: org, token: token, clock: clock.ID, sub: sub.ID, invoice: sel.Invoice.ID}
}

// wantStatuses checks the subscription's billing, commercial and service statuses.
func (d dunned) wantStatuses(t testing.TB, env *apitest.Env, billing, commercial, service string) subscription {
	t.Helper()
	s := getSubscription(t, env, d.token, d.sub)
	if s.BillingStatus != billing || s.CommercialStatus != commercial || s.ServiceStatus != service {
		t.Errorf("subscription %s/%s/%s, want billing %s, commercial %s, service %s", s.BillingStatus, s.CommercialStatus, s.ServiceStatus, billing, commercial, service)
	}
	return s
}

// wantInvoiceStatus checks the invoice's status as the API answers it.
func (d dunned) wantInvoiceStatus(t testing.TB, env *apitest.Env, want string) {
	t.Helper()
	resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/invoices/" + d.invoice, Token: d.token})
	if got := decode[billingInvoice](t, resp); resp.Status != http.StatusOK || got.Status != want {
		t.Errorf("invoice %d %s, want %s", resp.Status, got.Status, want)
	}
}

// pay pays amount of the invoice with method, as token, and returns the answer.
func (d dunned) pay(env *apitest.Env, token string, amount int64, method string) *apitest.Response {
	return env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/invoices/" + d.invoice + "/payments", Token: token,
		Body: fmt.Sprintf(`{"amount":%d,"payment_method":%q}`, amount, method)})
}

// payInFull pays what is due, succeeding.
func (d dunned) payInFull(t testing.TB, env *apitest.Env, amount int64) {
	t.Helper()
	if resp := d.pay(env, d.token, amount, "pm_sandbox_success"); resp.Status != http.StatusCreated || resp.JSON(t)["status"] != "succeeded" {
		t.Fatalf("pay %d: %d %s", amount, resp.Status, resp.Body)
	}
}

// steps counts the organization's webhook events and audit records of each dunning step of the
// subscription, and the invoice's write-offs, as "events/audits" per step.
func (d dunned) steps(env *apitest.Env) map[string]string {
	counts := map[string]string{}
	for _, step := range []string{"subscription.overdue", "subscription.payment_retry_failed", "subscription.written_off", "subscription.recovered"} {
		counts[step] = fmt.Sprintf("%d/%d",
			env.Count(`SELECT count(*) FROM webhook_events WHERE organization_id = $1 AND type = $2 AND data->>'id' = $3`, d.org, step, d.sub),
			env.Count(`SELECT count(*) FROM audit_events WHERE organization_id = $1 AND action = $2 AND resource_id = $3`, d.org, step, d.sub))
	}
	counts["invoice.uncollectible"] = fmt.Sprintf("%d/%d",
		env.Count(`SELECT count(*) FROM webhook_events WHERE organization_id = $1 AND type = 'invoice.uncollectible' AND data->>'id' = $2`, d.org, d.invoice),
		env.Count(`SELECT count(*) FROM audit_events WHERE organization_id = $1 AND action = 'billing_invoice.uncollectible' AND resource_id = $2`, d.org, d.invoice))
	return counts
}

// wantSteps checks the steps' counts: overdue, failed retries, write-off, recovered, invoice
// written off, each as events and audit records alike.
func (d dunned) wantSteps(t testing.TB, env *apitest.Env, overdue, retries, writtenOff, recovered int) {
	t.Helper()
	n := func(k int) string { return fmt.Sprintf("%d/%d", k, k) }
	want := map[string]string{"subscription.overdue": n(overdue), "subscription.payment_retry_failed": n(retries),
		"subscription.written_off": n(writtenOff), "subscription.recovered": n(recovered), "invoice.uncollectible": n(writtenOff)}
	if got := d.steps(env); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("dunning steps (events/audit records):\n got %v\nwant %v", got, want)
	}
}

// generate is a product operation of the e-invoicing subscription: 201 while its service
// runs, 403 subscription_inactive while it is suspended.
func (d dunned) generate(t testing.TB, env *apitest.Env) *apitest.Response {
	return env.Do(apitest.Request{Method: http.MethodPost, Path: invoicePath, Token: d.token, Body: invoiceBody(t, d.org, nil)})
}

// TestDunning: overdue at due_at, in dunning and past due at the first failed retry, written
// off at the last (invoice uncollectible, paused, the service suspended and its operations
// refused at the very next request, no renewal), and a full payment at any stage brings it all
// back; each step once, with its event and audit record.
func TestDunning(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)

	t.Run("WriteOffThenPayment", func(t *testing.T) {
		t.Parallel()
		d := dunnedSelection(t, env)
		advance(t, env, d.token, d.clock, "2025-03-15T09:29:59Z")
		d.wantStatuses(t, env, "current", "active", "active")
		advance(t, env, d.token, d.clock, dunningDue)
		d.wantStatuses(t, env, "overdue", "active", "active")
		advance(t, env, d.token, d.clock, dunningRetry1)
		d.wantStatuses(t, env, "in_dunning", "past_due", "active")
		if r := d.generate(t, env); r.Status != http.StatusCreated {
			t.Errorf("in dunning the service still runs: %d %s", r.Status, r.Body)
		}
		advance(t, env, d.token, d.clock, dunningRetry2)
		d.wantStatuses(t, env, "in_dunning", "past_due", "active")
		d.wantInvoiceStatus(t, env, "issued")
		d.wantSteps(t, env, 1, 2, 0, 0)

		advance(t, env, d.token, d.clock, dunningWriteOff)
		assertProblem(t, "product operation at the very next request after the write-off", d.generate(t, env), http.StatusForbidden, "subscription_inactive")
		s := d.wantStatuses(t, env, "written_off", "paused", "suspended")
		if s.SuspendedAt == nil || !s.SuspendedAt.Equal(clockAt(t, dunningWriteOff)) {
			t.Errorf("suspended at %v, want the write-off's time", s.SuspendedAt)
		}
		d.wantInvoiceStatus(t, env, "uncollectible")
		// Only the payment resumes the service: resume is refused to the organization and the operator.
		for _, token := range []string{d.token, apitest.OperatorToken} {
			assertProblem(t, "resume", subscriptionAction(env, token, d.sub, "resume", ""), http.StatusConflict, "invalid_state_transition")
		}
		// Nor does cancelling and reactivating: it is paused again, still written off.
		for _, action := range []string{"cancel", "reactivate"} {
			if r := subscriptionAction(env, d.token, d.sub, action, ""); r.Status != http.StatusOK {
				t.Fatalf("%s: %d %s", action, r.Status, r.Body)
			}
		}
		d.wantStatuses(t, env, "written_off", "paused", "suspended")
		// No renewal while written off: April 1 passes with nothing billed.
		advance(t, env, d.token, d.clock, "2025-04-15T00:00:00Z")
		d.wantStatuses(t, env, "written_off", "paused", "suspended")
		if invs := invoicesOf(t, env, d.sub); len(invs) != 1 {
			t.Errorf("%d invoices while written off, want 1", len(invs))
		}
		if n := env.Count(`SELECT count(*) FROM subscription_renewals WHERE subscription_id = $1`, d.sub); n != 0 {
			t.Errorf("%d renewals while written off", n)
		}
		d.wantSteps(t, env, 1, 2, 1, 0)

		// Paid in full: the very next product request succeeds, everything is back.
		d.payInFull(t, env, dunningTotal)
		if r := d.generate(t, env); r.Status != http.StatusCreated {
			t.Errorf("product operation at the very next request after the payment: %d %s", r.Status, r.Body)
		}
		d.wantStatuses(t, env, "current", "active", "active")
		d.wantInvoiceStatus(t, env, "paid")
		d.wantSteps(t, env, 1, 2, 1, 1)
		if n := env.Count(`SELECT count(*) FROM subscriptions WHERE id = $1 AND dunning_invoice_id IS NULL AND dunning_next_at IS NULL
			AND dunning_retries = 0 AND suspended_by IS NULL AND suspended_at IS NULL`, d.sub); n != 1 {
			t.Errorf("the dunning is not cleared in the database")
		}
		// Renewal goes on with April's period, in progress: billed at the payment's time.
		advance(t, env, d.token, d.clock, "2025-04-15T00:00:00Z")
		wantRenewed(t, env, d.token, d.sub, 2, "2025-04-01", "2025-04-30", "2025-04-15T00:00:00Z", 29900, 34385, "2025-05-01T09:30:00Z")
	})

	// The usage of the period a write-off interrupts is billed in arrears by the renewal that
	// closes it. Paid after that renewal and the next boundary, the recovery skips the
	// renewals that fell while written off; it bills that usage then, not never.
	t.Run("RecoveryAfterSkippedRenewalsBillsTheInterruptedUsage", func(t *testing.T) {
		t.Parallel()
		s := newRatedSubscription(t, env, "2025-03-01T09:30:00Z", productAddress, ratedPlan(t, env, "null"))
		advance(t, env, s.token, s.clock, "2025-04-10T00:00:00Z") // April's fee invoiced on April 1, due April 15
		s.resolve(t, env, 9)
		advance(t, env, s.token, s.clock, "2025-06-05T00:00:00Z") // written off on April 22; May 1 and June 1 pass
		invs := invoicesOf(t, env, s.id)
		if len(invs) != 1 || invs[0].Status != "uncollectible" {
			t.Fatalf("invoices while written off: %+v, want April's, uncollectible", invs)
		}
		call(t, env, http.MethodPost, "/v1/invoices/"+invs[0].ID+"/payments", s.token,
			fmt.Sprintf(`{"amount":%d,"payment_method":"pm_sandbox_success"}`, invs[0].Total), http.StatusCreated)
		advance(t, env, s.token, s.clock, "2025-06-05T00:00:01Z") // June's renewal, the period in progress
		invs = invoicesOf(t, env, s.id)
		if len(invs) != 3 {
			t.Fatalf("%d invoices after the recovery, want April's fee, April's usage and June's fee: %+v", len(invs), invs)
		}
		// April: 9 used, 2 included: units 3-4 at 100, 5-6 at 50 (+ flat 300), 7-9 at 20.
		usage := invs[1]
		wantLine(t, usage, 0, "graduated_usage", 2, 100, "2025-04-01", "2025-04-30", false)
		wantLine(t, usage, 1, "graduated_usage", 2, 50, "2025-04-01", "2025-04-30", false)
		wantLine(t, usage, 2, "graduated_usage", 1, 300, "2025-04-01", "2025-04-30", false)
		wantLine(t, usage, 3, "graduated_usage", 3, 20, "2025-04-01", "2025-04-30", false)
		wantTotals(t, usage, 660, 0, 99, 759)
		if len(usage.Lines) != 4 || usage.Status != "issued" || !usage.IssuedAt.Equal(clockAt(t, "2025-06-05T00:00:00Z")) ||
			usage.BillingPeriod.Start != "2025-04-01" || usage.BillingPeriod.End != "2025-04-30" {
			t.Errorf("April's usage, billed at the recovery: %+v", usage)
		}
		june := invs[2]
		wantLine(t, june, 0, "recurring_fee", 1, 10000, "2025-06-01", "2025-06-30", false)
		wantTotals(t, june, 10000, 0, 1500, 11500)
		if len(june.Lines) != 1 {
			t.Errorf("June's renewal bills %+v, want its fee alone (no usage from May, written off)", june.Lines)
		}
	})

	// A full payment while overdue or in dunning, or the invoice's void, recovers; nothing
	// of the schedule happens afterwards.
	for _, tc := range []struct {
		name, at, billing, commercial string
		settle                        func(t *testing.T, d dunned)
	}{
		{"PaidWhileOverdue", "2025-03-16T00:00:00Z", "overdue", "active", func(t *testing.T, d dunned) { d.payInFull(t, env, dunningTotal) }},
		{"PaidInDunning", "2025-03-21T00:00:00Z", "in_dunning", "past_due", func(t *testing.T, d dunned) {
			d.payInFull(t, env, 50000) // a part changes nothing
			d.wantStatuses(t, env, "in_dunning", "past_due", "active")
			d.payInFull(t, env, dunningTotal-50000)
		}},
		{"VoidedWhileOverdue", "2025-03-16T00:00:00Z", "overdue", "active", func(t *testing.T, d dunned) {
			call(t, env, http.MethodPost, "/v1/invoices/"+d.invoice+"/void", d.token, "", http.StatusOK)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := dunnedSelection(t, env)
			advance(t, env, d.token, d.clock, tc.at)
			d.wantStatuses(t, env, tc.billing, tc.commercial, "active")
			tc.settle(t, d)
			d.wantStatuses(t, env, "current", "active", "active")
			advance(t, env, d.token, d.clock, "2025-03-25T00:00:00Z")
			d.wantStatuses(t, env, "current", "active", "active")
			retries := 0
			if tc.billing == "in_dunning" {
				retries = 2
			}
			d.wantSteps(t, env, 1, retries, 0, 1)
		})
	}

	// A retry charges the payment method on file, the one the latest payment attempt used:
	// declined, each retry is a failed payment; succeeding, the first retry pays the rest.
	t.Run("RetriesChargeTheMethodOnFile", func(t *testing.T) {
		t.Parallel()
		declined, succeeding := dunnedSelection(t, env), dunnedSelection(t, env)
		if r := declined.pay(env, declined.token, dunningTotal, "pm_sandbox_declined"); r.Status != http.StatusCreated {
			t.Fatalf("declined payment: %d %s", r.Status, r.Body)
		}
		succeeding.payInFull(t, env, 1000)

		advance(t, env, declined.token, declined.clock, "2025-03-25T00:00:00Z")
		declined.wantStatuses(t, env, "written_off", "paused", "suspended")
		for _, at := range []string{dunningRetry1, dunningRetry2, dunningWriteOff} {
			if n := env.Count(`SELECT count(*) FROM billing_payments WHERE invoice_id = $1 AND status = 'failed' AND payment_method = 'pm_sandbox_declined'
				AND amount = $2 AND created_at = $3`, declined.invoice, dunningTotal, at); n != 1 {
				t.Errorf("%d failed retries charged at %s, want 1", n, at)
			}
		}
		if n := env.Count(`SELECT count(*) FROM webhook_events WHERE type = 'invoice.payment_failed' AND data->>'id' = $1`, declined.invoice); n != 4 {
			t.Errorf("%d invoice.payment_failed events, want 4 (the payment and three retries)", n)
		}

		advance(t, env, succeeding.token, succeeding.clock, "2025-03-25T00:00:00Z")
		succeeding.wantStatuses(t, env, "current", "active", "active")
		succeeding.wantInvoiceStatus(t, env, "paid")
		if n := env.Count(`SELECT count(*) FROM billing_payments WHERE invoice_id = $1 AND status = 'succeeded' AND payment_method = 'pm_sandbox_success'
			AND amount = $2 AND created_at = $3`, succeeding.invoice, dunningTotal-1000, dunningRetry1); n != 1 {
			t.Errorf("the first retry did not charge the rest with the method on file")
		}
		succeeding.wantSteps(t, env, 1, 0, 0, 1)
	})

	// Tenancy: one organization's clock drives its own dunning only, and another organization
	// can neither pay its invoice nor advance its clock (404, nothing changes).
	t.Run("Tenancy", func(t *testing.T) {
		t.Parallel()
		mine, theirs := dunnedSelection(t, env), dunnedSelection(t, env)
		advance(t, env, theirs.token, theirs.clock, "2025-03-25T00:00:00Z")
		theirs.wantStatuses(t, env, "written_off", "paused", "suspended")
		mine.wantStatuses(t, env, "current", "active", "active")
		assertProblem(t, "pay another organization's invoice", theirs.pay(env, mine.token, dunningTotal, "pm_sandbox_success"), http.StatusNotFound, "not_found")
		assertProblem(t, "advance another organization's clock", advanceRequest(env, mine.token, theirs.clock, "2025-04-25T00:00:00Z", nil), http.StatusNotFound, "not_found")
		theirs.wantStatuses(t, env, "written_off", "paused", "suspended")
		theirs.wantInvoiceStatus(t, env, "uncollectible")
		if n := env.Count(`SELECT count(*) FROM billing_payments WHERE invoice_id = $1`, theirs.invoice); n != 0 {
			t.Errorf("%d payments of the other organization's invoice", n)
		}
		mine.wantSteps(t, env, 0, 0, 0, 0)
	})

	// Two processes advancing the same clock at once take each step once.
	t.Run("RacingAdvances", func(t *testing.T) {
		t.Parallel()
		d := dunnedSelection(t, env)
		sibling := env.Sibling()
		var wg sync.WaitGroup
		for _, on := range []*apitest.Env{env, sibling} {
			wg.Go(func() {
				if r := advanceRequest(on, d.token, d.clock, "2025-03-25T00:00:00Z", nil); r.Status != http.StatusOK {
					t.Errorf("advance: %d %s", r.Status, r.Body)
				}
			})
		}
		wg.Wait()
		d.wantStatuses(t, env, "written_off", "paused", "suspended")
		d.wantSteps(t, env, 1, 2, 1, 0)
	})
}

// reachDunning drives a new organization's subscription through dunning to the clock's time
// to and returns the subscription as the API answers it then.
func reachDunning(t *testing.T, env *apitest.Env, to string) map[string]any {
	d := dunnedSelection(t, env)
	advance(t, env, d.token, d.clock, to)
	return call(t, env, http.MethodGet, "/v1/subscriptions/"+d.sub, d.token, "", http.StatusOK)
}

var (
	_ = reachable("SubscriptionBillingStatus", "overdue", func(t *testing.T, env *apitest.Env) map[string]any {
		return reachDunning(t, env, dunningDue)
	})
	_ = reachable("SubscriptionBillingStatus", "in_dunning", func(t *testing.T, env *apitest.Env) map[string]any {
		return reachDunning(t, env, dunningRetry1)
	})
	_ = reachable("SubscriptionCommercialStatus", "past_due", func(t *testing.T, env *apitest.Env) map[string]any {
		return reachDunning(t, env, dunningRetry1)
	})
	_ = reachable("SubscriptionBillingStatus", "written_off", func(t *testing.T, env *apitest.Env) map[string]any {
		return reachDunning(t, env, dunningWriteOff)
	})
	_ = reachable("SubscriptionCommercialStatus", "paused", func(t *testing.T, env *apitest.Env) map[string]any {
		return reachDunning(t, env, dunningWriteOff)
	})
)
