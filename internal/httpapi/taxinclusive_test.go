package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
)

// newInclusivePlan is an active plan of the address product: 115.00 SAR a month including VAT,
// and address resolutions at 1.00 SAR including VAT beyond two included.
func newInclusivePlan(t testing.TB, env *apitest.Env) string {
	t.Helper()
	created := catalogueDo(t, env, apitest.OperatorToken, http.MethodPost, "/v1/plans", fmt.Sprintf(`{"product_id":%q,"code":"inclusive-%s",
		"name":"Inclusive","billing_period":"monthly","currency":"SAR","recurring_fee":11500,
		"included_usage":[{"metric":"short_addresses_resolved","quantity":2}],
		"prices":[{"component_type":"recurring_fee","amount":11500,"tax_treatment":"tax_inclusive"},
		  {"component_type":"per_unit","metric":"short_addresses_resolved","unit_amount":100,"tax_treatment":"tax_inclusive"}]}`,
		productAddress, uuid.NewString()[:8]), http.StatusCreated)
	plan := created["id"].(string)
	for i := range 2 {
		if p := priceOf(t, created, i); p["tax_treatment"] != "tax_inclusive" {
			t.Fatalf("price %d: %v, want tax_inclusive", i, p)
		}
	}
	movePlan(t, env, plan, "active")
	return plan
}

// selectInclusivePlan is an organization on a test clock at 2025-03-01T09:30:00Z whose
// subscription to the address product has selected a new inclusive plan (newInclusivePlan),
// its first invoice awaiting payment.
func selectInclusivePlan(t *testing.T, env *apitest.Env) (plan string, s ratedSubscription, j billingJourney, sel planSelection) {
	t.Helper()
	plan = newInclusivePlan(t, env)
	s = newRatedSubscription(t, env, "2025-03-01T09:30:00Z", productAddress, planAddressPreview)
	j = billingJourney{t: t, env: env, org: s.org, token: s.token}
	sel = decode[planSelection](t, subscriptionAction(env, s.token, s.id, "select-plan", `{"plan_id":"`+plan+`"}`))
	if sel.Activation != "awaiting_payment" || sel.Invoice == nil {
		t.Fatalf("selection %+v, want an invoice awaiting payment", sel)
	}
	return plan, s, j, sel
}

// TestTaxInclusivePrices: the operator offers a plan of "115.00 SAR a month including VAT"
// (and address resolutions at 1.00 SAR including VAT beyond two included), an organization
// selects it on a test clock and pays its first invoice, whose total is the fee: 10000 net +
// 1500 VAT, not 11500 + 1725. Its renewal bills the month's usage net, the units split in two
// lines where the quantity does not divide the net amount, line by line as the upcoming
// invoice previewed it, and its tax document (net lines) validates.
func TestTaxInclusivePrices(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	_, s, j, sel := selectInclusivePlan(t, env)
	invs := invoicesOf(t, env, s.id)
	if len(invs) != 1 || invs[0].ID != sel.Invoice.ID {
		t.Fatalf("invoices %+v, want the selection's", invs)
	}
	first := invs[0]
	wantLine(t, first, 0, "recurring_fee", 1, 10000, "2025-03-01", "2025-03-31", false) // 11500 including VAT
	wantTotals(t, first, 10000, 0, 1500, 11500)
	if len(first.Lines) != 1 || first.Lines[0].Tax != 1500 {
		t.Errorf("first invoice lines %+v", first.Lines)
	}
	if n := env.Count(`SELECT count(*) FROM billing_invoices WHERE id = $1 AND subtotal = 10000 AND discount = 0 AND tax = 1500 AND total = 11500
		AND jsonb_array_length(lines) = 1 AND (lines->0->>'amount')::bigint = 10000 AND (lines->0->>'unit_amount')::bigint = 10000
		AND (lines->0->>'tax')::bigint = 1500`, first.ID); n != 1 {
		t.Errorf("the stored first invoice is not 10000 + 1500 VAT = 11500")
	}
	j.wantTaxDocument(first.ID)
	if paid := j.pay(first.ID, 11500, "pm_sandbox_success", "succeeded", clockAt(t, "2025-03-01T09:30:00Z")); paid.Status != "paid" {
		t.Errorf("after paying 11500 the first invoice is %s", paid.Status)
	}

	// 15 resolutions, 2 included: 13 × 100 = 1300 including VAT, 1130.43 net: 1130 = 13 × 86
	// + 12, so one unit at 86 and twelve at 87. With the fee's 10000 net: 11130, VAT 1669.5.
	advance(t, env, s.token, s.clock, "2025-03-10T00:00:00Z")
	s.resolve(t, env, 15)
	draft := upcoming(t, env, s.token, s.id, "")
	advance(t, env, s.token, s.clock, "2025-04-01T10:00:00Z")
	invs = invoicesOf(t, env, s.id)
	if len(invs) != 2 {
		t.Fatalf("%d invoices after the renewal, want 2", len(invs))
	}
	renewal := invs[1]
	wantSameInvoice(t, draft, renewal)
	wantLine(t, renewal, 0, "per_unit", 1, 86, "2025-03-01", "2025-03-31", false)
	wantLine(t, renewal, 1, "per_unit", 12, 87, "2025-03-01", "2025-03-31", false)
	wantLine(t, renewal, 2, "recurring_fee", 1, 10000, "2025-04-01", "2025-04-30", false)
	wantTotals(t, renewal, 11130, 0, 1670, 12800) // 1300 + 11500, the prices including VAT
	if len(renewal.Lines) != 3 || *renewal.Lines[0].PriceID != *renewal.Lines[1].PriceID ||
		renewal.Lines[0].Description != renewal.Lines[1].Description {
		t.Errorf("renewal lines %+v, want the usage's two lines of one price and description", renewal.Lines)
	}
	// The lines' taxes: the VAT of the running net amount (86, 1130, 11130) less the one before.
	for i, want := range []int64{13, 157, 1500} {
		if renewal.Lines[i].Tax != want {
			t.Errorf("renewal line %d tax %d, want %d", i, renewal.Lines[i].Tax, want)
		}
	}
	if n := env.Count(`SELECT count(*) FROM billing_invoices WHERE id = $1 AND subtotal = 11130 AND tax = 1670 AND total = 12800
		AND jsonb_array_length(lines) = 3 AND (lines->1->>'quantity')::bigint = 12 AND (lines->1->>'unit_amount')::bigint = 87`, renewal.ID); n != 1 {
		t.Errorf("the stored renewal is not 11130 + 1670 VAT = 12800 in three lines")
	}
	j.wantTaxDocument(renewal.ID)
}

// TestRetiredPlanBillsAsBefore: retiring a plan (its prices shown inactive from then on) changes
// nothing for the subscriptions already on it (docs/design.md, "Catalogue administration": a
// subscription never sees its plan's terms change). The renewal after the retirement bills the
// month's usage and the fee including VAT exactly as TestTaxInclusivePrices's renewal, not
// the usage free and 11500 + 1725 VAT.
func TestRetiredPlanBillsAsBefore(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	plan, s, j, sel := selectInclusivePlan(t, env)
	j.pay(sel.Invoice.ID, 11500, "pm_sandbox_success", "succeeded", clockAt(t, "2025-03-01T09:30:00Z"))
	advance(t, env, s.token, s.clock, "2025-03-10T00:00:00Z")
	s.resolve(t, env, 15)
	before := upcoming(t, env, s.token, s.id, "")

	movePlan(t, env, plan, "deprecated")
	retired := movePlan(t, env, plan, "retired")
	for i := range 2 {
		if p := priceOf(t, retired, i); p["status"] != "inactive" {
			t.Errorf("price %d of the retired plan: %v", i, p)
		}
	}
	wantSameInvoice(t, before, upcoming(t, env, s.token, s.id, ""))
	advance(t, env, s.token, s.clock, "2025-04-01T10:00:00Z")
	invs := invoicesOf(t, env, s.id)
	if len(invs) != 2 {
		t.Fatalf("%d invoices after the renewal, want 2", len(invs))
	}
	wantSameInvoice(t, before, invs[1])
	wantTotals(t, invs[1], 11130, 0, 1670, 12800)
}
