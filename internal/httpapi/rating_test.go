package httpapi_test

import (
	"fmt"
	"net/http"
	"reflect"
	"testing"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
)

// ratedPlan is an offered monthly plan of the seeded address product (whose resolutions are
// counted as usage): a fee of 10000, two resolutions included, then graduated tiers up to 4
// at 100, up to 6 at 50 with a flat 300, and 20 beyond. trial is its trial_policy ("null": none).
func ratedPlan(t testing.TB, env *apitest.Env, trial string) string {
	t.Helper()
	plan := catalogueDo(t, env, apitest.OperatorToken, http.MethodPost, "/v1/plans", fmt.Sprintf(`{"product_id":%q,"code":"rated-%s",
		"name":"Rated","billing_period":"monthly","currency":"SAR","recurring_fee":10000,"trial_policy":%s,
		"included_usage":[{"metric":"short_addresses_resolved","quantity":2}],
		"prices":[{"component_type":"recurring_fee","amount":10000},
		  {"component_type":"graduated_usage","metric":"short_addresses_resolved","tiers":[
		    {"upper_bound":4,"unit_amount":100,"flat_amount":null},{"upper_bound":6,"unit_amount":50,"flat_amount":300},
		    {"upper_bound":null,"unit_amount":20,"flat_amount":null}]}]}`, productAddress, uuid.NewString()[:8], trial), http.StatusCreated)
	id := plan["id"].(string)
	movePlan(t, env, id, "active")
	return id
}

// ratedSubscription is a subscription of a new organization on a test clock at start, on plan
// of product, its service active.
type ratedSubscription struct {
	org, token, clock, id string
}

func newRatedSubscription(t testing.TB, env *apitest.Env, start, product, plan string) ratedSubscription {
	t.Helper()
	org, token := newOrganization(t, env)
	clock := createClock(t, env, token, org, start)
	sub := createSubscription(t, env, token, org, product, plan)
	waitForService(t, env, token, sub.ID, "active")
	return ratedSubscription{org: org, token: token, clock: clock.ID, id: sub.ID}
}

// resolve makes n short-address resolutions: n units of usage at the clock's time.
func (s ratedSubscription) resolve(t testing.TB, env *apitest.Env, n int) {
	t.Helper()
	for range n {
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/address/resolve-short", Token: s.token,
			Body: `{"short_address":"RRMA1234","language":"en"}`})
		if resp.Status != http.StatusOK {
			t.Fatalf("resolve: %d %s", resp.Status, resp.Body)
		}
	}
}

// upcoming reads the subscription's upcoming invoice (query: "" or "?plan_id=…") and its
// lines as token, answered 200.
func upcoming(t testing.TB, env *apitest.Env, token, sub, query string) storedInvoice {
	t.Helper()
	resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/subscriptions/" + sub + "/upcoming-invoice" + query, Token: token})
	if resp.Status != http.StatusOK {
		t.Fatalf("upcoming invoice: %d %s", resp.Status, resp.Body)
	}
	inv := decode[storedInvoice](t, resp)
	if inv.Status != "draft" || !inv.IssuedAt.IsZero() || !inv.DueAt.IsZero() {
		t.Errorf("upcoming invoice %s: %s issued %v due %v, want a draft never issued", inv.ID, inv.Status, inv.IssuedAt, inv.DueAt)
	}
	lines := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/subscriptions/" + sub + "/upcoming-invoice/lines" + query, Token: token})
	if lines.Status != http.StatusOK {
		t.Fatalf("upcoming lines: %d %s", lines.Status, lines.Body)
	}
	inv.Lines = decode[struct {
		Items []renewalLine `json:"items"`
	}](t, lines).Items
	if resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/invoices/" + inv.ID, Token: token}); resp.Status != http.StatusNotFound {
		t.Errorf("the draft's id %s names an invoice: %d", inv.ID, resp.Status)
	}
	return inv
}

// wantSameInvoice checks that issued carries exactly the lines and amounts of the draft.
func wantSameInvoice(t testing.TB, draft, issued storedInvoice) {
	t.Helper()
	if !reflect.DeepEqual(draft.Lines, issued.Lines) {
		t.Errorf("issued lines\n%+v\nthe draft's\n%+v", issued.Lines, draft.Lines)
	}
	if draft.BillingPeriod != issued.BillingPeriod || draft.Subtotal != issued.Subtotal || draft.Discount != issued.Discount ||
		draft.Tax != issued.Tax || draft.Total != issued.Total {
		t.Errorf("issued %+v, the draft %+v", issued, draft)
	}
}

// wantLine checks line i of inv: its component, quantity × unit amount = amount, period and
// proration flag.
func wantLine(t testing.TB, inv storedInvoice, i int, component string, quantity, unit int64, start, end string, proration bool) {
	t.Helper()
	if i >= len(inv.Lines) {
		t.Fatalf("invoice %s has %d lines, want line %d: %+v", inv.ID, len(inv.Lines), i, inv.Lines)
	}
	l := inv.Lines[i]
	if l.ComponentType != component || l.Quantity != quantity || l.UnitAmount != unit || l.Amount != quantity*unit ||
		l.Period.Start != start || l.Period.End != end || l.Proration != proration {
		t.Errorf("invoice %s line %d: %+v, want %s %d × %d for %s..%s (proration %v)", inv.ID, i, l, component, quantity, unit, start, end, proration)
	}
}

// wantTotals checks the invoice's amounts and that its lines add up to them exactly.
func wantTotals(t testing.TB, inv storedInvoice, subtotal, discount, tax, total int64) {
	t.Helper()
	var amounts, taxes int64
	for _, l := range inv.Lines {
		amounts += l.Amount
		taxes += l.Tax
	}
	if inv.Subtotal != subtotal || inv.Discount != discount || inv.Tax != tax || inv.Total != total ||
		amounts != subtotal-discount || taxes != tax || amounts+taxes != total {
		t.Errorf("invoice %s: %d/%d/%d/%d (lines %d, taxes %d), want %d/%d/%d/%d", inv.ID, inv.Subtotal, inv.Discount, inv.Tax, inv.Total,
			amounts, taxes, subtotal, discount, tax, total)
	}
}

// TestUsageRating: a month's usage across every tier is previewed by the upcoming invoice and
// then issued by the renewal, line for line; a plan change is previewed and then issued as
// proration lines; the preview is the organization's and the operator's only.
func TestUsageRating(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)

	t.Run("RenewalIssuesThePreviewedUsage", func(t *testing.T) {
		t.Parallel()
		s := newRatedSubscription(t, env, "2025-03-01T09:30:00Z", productAddress, ratedPlan(t, env, "null"))
		// Before any usage: the renewal would bill April's fee alone.
		before := upcoming(t, env, s.token, s.id, "")
		wantLine(t, before, 0, "recurring_fee", 1, 10000, "2025-04-01", "2025-04-30", false)
		wantTotals(t, before, 10000, 0, 1500, 11500)

		advance(t, env, s.token, s.clock, "2025-03-10T00:00:00Z")
		s.resolve(t, env, 9)
		// 9 used, 2 included: units 3-4 at 100, 5-6 at 50 (+ flat 300), 7-9 at 20, then April's fee.
		draft := upcoming(t, env, s.token, s.id, "")
		wantLine(t, draft, 0, "graduated_usage", 2, 100, "2025-03-01", "2025-03-31", false)
		wantLine(t, draft, 1, "graduated_usage", 2, 50, "2025-03-01", "2025-03-31", false)
		wantLine(t, draft, 2, "graduated_usage", 1, 300, "2025-03-01", "2025-03-31", false)
		wantLine(t, draft, 3, "graduated_usage", 3, 20, "2025-03-01", "2025-03-31", false)
		wantLine(t, draft, 4, "recurring_fee", 1, 10000, "2025-04-01", "2025-04-30", false)
		wantTotals(t, draft, 10660, 0, 1599, 12259)
		if len(draft.Lines) != 5 || draft.BillingPeriod.Start != "2025-03-01" || draft.BillingPeriod.End != "2025-04-30" {
			t.Errorf("draft %+v", draft)
		}
		// The operator previews the same; another organization cannot see it.
		if op := upcoming(t, env, apitest.OperatorToken, s.id, ""); op.Total != draft.Total || len(op.Lines) != len(draft.Lines) {
			t.Errorf("the operator's preview %+v differs from %+v", op, draft)
		}
		_, other := newOrganization(t, env)
		for _, path := range []string{"", "/lines", "?plan_id=" + planEinvoiceGrowthMonthly} {
			resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/subscriptions/" + s.id + "/upcoming-invoice" + path, Token: other})
			assertProblem(t, "another tenant "+path, resp, http.StatusNotFound, "not_found")
		}

		advance(t, env, s.token, s.clock, "2025-04-01T09:30:00Z")
		invs := invoicesOf(t, env, s.id)
		if len(invs) != 1 {
			t.Fatalf("%d invoices after the renewal, want 1", len(invs))
		}
		wantSameInvoice(t, draft, invs[0])
		if invs[0].Status != "issued" || !invs[0].IssuedAt.Equal(clockAt(t, "2025-04-01T09:30:00Z")) {
			t.Errorf("renewal invoice %+v", invs[0])
		}
		// March's usage is billed: April's preview starts again from nothing.
		if next := upcoming(t, env, s.token, s.id, ""); len(next.Lines) != 1 || next.Total != 11500 {
			t.Errorf("after the renewal the preview is %+v", next)
		}
	})

	t.Run("ReaderScopeAndNoUpcomingWhenCancelled", func(t *testing.T) {
		t.Parallel()
		s := newRatedSubscription(t, env, "2025-03-01T09:30:00Z", productEinvoice, planEinvoiceGrowthMonthly)
		reader := call(t, env, http.MethodPost, "/v1/api-keys", apitest.OperatorToken,
			fmt.Sprintf(`{"organization_id":%q,"name":"reader","environment":"sandbox","scopes":["subscriptions:read"]}`, s.org), http.StatusCreated)["full_key"].(string)
		assertProblem(t, "without invoices:read", env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/subscriptions/" + s.id + "/upcoming-invoice", Token: reader}),
			http.StatusForbidden, "insufficient_scope")
		if resp := subscriptionAction(env, s.token, s.id, "cancel", ""); resp.Status != http.StatusOK {
			t.Fatalf("cancel: %d %s", resp.Status, resp.Body)
		}
		for _, path := range []string{"", "/lines"} {
			assertProblem(t, "cancelled "+path, env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/subscriptions/" + s.id + "/upcoming-invoice" + path, Token: s.token}),
				http.StatusNotFound, "not_found")
		}
		assertProblem(t, "cancelled change", env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/subscriptions/" + s.id + "/upcoming-invoice?plan_id=" + planEinvoiceGrowthAnnual, Token: s.token}),
			http.StatusConflict, "invalid_state_transition")
	})

	t.Run("ChangePlanIssuesThePreviewedProration", func(t *testing.T) {
		t.Parallel()
		// Growth selected on March 1: its first invoice bills March's fee, which a change credits.
		s := newRatedSubscription(t, env, "2025-03-01T00:00:00Z", productEinvoice, planEinvoiceSandbox)
		if resp := subscriptionAction(env, s.token, s.id, "select-plan", `{"plan_id":"`+planEinvoiceGrowthMonthly+`"}`); resp.Status != http.StatusOK {
			t.Fatalf("select plan: %d %s", resp.Status, resp.Body)
		}
		advance(t, env, s.token, s.clock, "2025-03-11T00:00:00Z")
		// 21 of March's 31 days are left: Business's 99900 × 21/31 = 67674.19 charged, Growth's
		// 29900 × 21/31 = 20254.84 credited; VAT 15 % of 47419.
		draft := upcoming(t, env, s.token, s.id, "?plan_id="+planEinvoiceBusinessTrial)
		wantLine(t, draft, 0, "recurring_fee", 1, 67674, "2025-03-11", "2025-03-31", true)
		wantLine(t, draft, 1, "recurring_fee", 1, -20255, "2025-03-11", "2025-03-31", true)
		wantTotals(t, draft, 67674, 20255, 7113, 54532)

		if same := upcoming(t, env, s.token, s.id, "?plan_id="+planEinvoiceGrowthMonthly); len(same.Lines) != 0 || same.Total != 0 {
			t.Errorf("a preview of the current plan: %+v", same)
		}
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/subscriptions/" + s.id + "/upcoming-invoice?plan_id=" + planAddressStandardTrial, Token: s.token})
		assertProblem(t, "plan of another product", resp, http.StatusUnprocessableEntity, "unprocessable")
		if !containsField(resp, "plan_id", "plan_of_another_product") {
			t.Errorf("the refusal does not name the query's plan_id: %s", resp.Body)
		}

		change := func() *apitest.Response {
			return env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/subscriptions/" + s.id + "/change-plan", Token: s.token,
				Body: `{"plan_id":"` + planEinvoiceBusinessTrial + `"}`, Header: http.Header{"Idempotency-Key": {"change-1"}}})
		}
		if resp := change(); resp.Status != http.StatusOK {
			t.Fatalf("change plan: %d %s", resp.Status, resp.Body)
		}
		if resp := change(); resp.Status != http.StatusOK || resp.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %d %s", resp.Status, resp.Body)
		}
		invs := invoicesOf(t, env, s.id)
		if len(invs) != 2 {
			t.Fatalf("%d invoices after the selection, the change and its replay, want 2", len(invs))
		}
		wantSameInvoice(t, draft, invs[1])
		if !invs[1].IssuedAt.Equal(clockAt(t, "2025-03-11T00:00:00Z")) || invs[1].Status != "issued" {
			t.Errorf("proration invoice %+v", invs[1])
		}
		if n := env.Count("SELECT count(*) FROM webhook_events WHERE type = 'invoice.issued' AND data->>'id' = $1", invs[1].ID); n != 1 {
			t.Errorf("%d invoice.issued events for the proration invoice", n)
		}
	})
}

var _ = reachable("BillingInvoiceStatus", "draft", func(t *testing.T, env *apitest.Env) map[string]any {
	org, token := newOrganization(t, env)
	sub := createSubscription(t, env, token, org, productEinvoice, planEinvoiceGrowthMonthly)
	return call(t, env, http.MethodGet, "/v1/subscriptions/"+sub.ID+"/upcoming-invoice", token, "", http.StatusOK)
})

// TestUsageTooLargeToInvoice: usage whose charges pass what one invoice rates (2^53 - 1 minor
// units, core.MaxUsageCharge) is refused with a 422 by the upcoming invoice and by the clock's
// advance that would renew it, which then changes nothing; up to it, it is rated exactly.
func TestUsageTooLargeToInvoice(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	plan := catalogueDo(t, env, apitest.OperatorToken, http.MethodPost, "/v1/plans", fmt.Sprintf(`{"product_id":%q,"code":"dear-%s",
		"name":"Dear","billing_period":"usage_only","currency":"SAR",
		"prices":[{"component_type":"per_unit","metric":"short_addresses_resolved","unit_amount":1000000000000}]}`, productAddress, uuid.NewString()[:8]), http.StatusCreated)
	movePlan(t, env, plan["id"].(string), "active")
	s := newRatedSubscription(t, env, "2025-03-01T09:30:00Z", productAddress, plan["id"].(string))
	advance(t, env, s.token, s.clock, "2025-03-10T00:00:00Z")
	s.resolve(t, env, 1)
	// 9006 more resolutions at March 10, written as the resolution's own row is.
	env.Exec(`INSERT INTO usage_events (id, organization_id, product, occurred_at)
		SELECT (substr(e.id::text, 1, 24) || lpad(to_hex(g), 12, '0'))::uuid, e.organization_id, e.product, e.occurred_at
		FROM usage_events e, generate_series(1, 9006) g WHERE e.organization_id = $1`, s.org)

	// 9007 × 10^12: rated, with VAT 15 % of it.
	draft := upcoming(t, env, s.token, s.id, "")
	wantLine(t, draft, 0, "per_unit", 9007, 1_000_000_000_000, "2025-03-01", "2025-03-31", false)
	wantTotals(t, draft, 9_007_000_000_000_000, 0, 1_351_050_000_000_000, 10_358_050_000_000_000)

	// One more: 9008 × 10^12 is past the bound.
	s.resolve(t, env, 1)
	for _, path := range []string{"", "/lines"} {
		assertProblem(t, "upcoming"+path, env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/subscriptions/" + s.id + "/upcoming-invoice" + path, Token: s.token}),
			http.StatusUnprocessableEntity, "unprocessable")
	}
	assertProblem(t, "advance to the renewal", advanceRequest(env, s.token, s.clock, "2025-04-01T09:30:00Z", nil), http.StatusUnprocessableEntity, "unprocessable")
	if invs := invoicesOf(t, env, s.id); len(invs) != 0 {
		t.Errorf("invoices %+v after a refused renewal", invs)
	}
	if n := env.Count(`SELECT count(*) FROM test_clocks WHERE id = $1 AND frozen_time = '2025-03-10T00:00:00Z'`, s.clock); n != 1 {
		t.Errorf("the refused advance moved the clock")
	}
}
