package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
)

// The billing gaps of issue 26 (docs/design.md, "Credit balance", "The last invoice", "Usage
// per plan"), on two monthly plans of the address product (whose resolutions are usage):
// Small, a fee of 10000, 2 resolutions included, then 100 each; Big, a fee of 40000,
// graduated: 5 free, then 50 each. Every amount is computed by hand in the comments.

// gapPlan creates and offers a monthly SAR plan of the address product with a recurring fee
// and the usage prices and included usage given (JSON).
func gapPlan(t testing.TB, env *apitest.Env, fee int64, included, usage string) string {
	t.Helper()
	plan := catalogueDo(t, env, apitest.OperatorToken, http.MethodPost, "/v1/plans", fmt.Sprintf(`{"product_id":%q,"code":"gap-%s",
		"name":"Gap %d","billing_period":"monthly","currency":"SAR","recurring_fee":%d,"trial_policy":null,
		"included_usage":%s,"prices":[{"component_type":"recurring_fee","amount":%d},%s]}`,
		productAddress, uuid.NewString()[:8], fee, fee, included, fee, usage), http.StatusCreated)
	id := plan["id"].(string)
	movePlan(t, env, id, "active")
	return id
}

func smallPlan(t testing.TB, env *apitest.Env) string {
	return gapPlan(t, env, 10000, `[{"metric":"short_addresses_resolved","quantity":2}]`,
		`{"component_type":"per_unit","metric":"short_addresses_resolved","unit_amount":100}`)
}

func bigPlan(t testing.TB, env *apitest.Env) string {
	return gapPlan(t, env, 40000, `[]`, `{"component_type":"graduated_usage","metric":"short_addresses_resolved","tiers":[
		{"upper_bound":5,"unit_amount":0,"flat_amount":null},{"upper_bound":null,"unit_amount":50,"flat_amount":null}]}`)
}

// creditEntry is an entry of the credit balance's ledger as the API answers it.
type creditEntry struct {
	ID             string `json:"id"`
	Amount         int64  `json:"amount"`
	Currency       string `json:"currency"`
	BalanceAfter   int64  `json:"balance_after"`
	Reason         string `json:"reason"`
	InvoiceID      string `json:"invoice_id"`
	SubscriptionID string `json:"subscription_id"`
}

// creditLedger reads the organization's ledger as token (a page of limit entries, all pages).
func creditLedger(t testing.TB, env *apitest.Env, token, org string, limit int) []creditEntry {
	t.Helper()
	var out []creditEntry
	path := fmt.Sprintf("/v1/credit-balance/transactions?organization_id=%s&limit=%d", org, limit)
	for cursor := ""; ; {
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: path + cursor, Token: token})
		if resp.Status != http.StatusOK {
			t.Fatalf("ledger: %d %s", resp.Status, resp.Body)
		}
		page := decode[struct {
			Items      []creditEntry `json:"items"`
			NextCursor *string       `json:"next_cursor"`
		}](t, resp)
		out = append(out, page.Items...)
		if page.NextCursor == nil {
			return out
		}
		cursor = "&cursor=" + *page.NextCursor
	}
}

// wantCreditBalance checks the organization's SAR balance as token.
func wantCreditBalance(t testing.TB, env *apitest.Env, token, org string, want int64) {
	t.Helper()
	resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/credit-balance?organization_id=" + org, Token: token})
	if resp.Status != http.StatusOK {
		t.Fatalf("credit balance: %d %s", resp.Status, resp.Body)
	}
	b := decode[struct {
		OrganizationID string `json:"organization_id"`
		Balances       []struct {
			Currency string `json:"currency"`
			Amount   int64  `json:"amount"`
		} `json:"balances"`
	}](t, resp)
	if b.OrganizationID != org || len(b.Balances) != 1 || b.Balances[0].Currency != "SAR" || b.Balances[0].Amount != want {
		t.Errorf("credit balance %+v, want SAR %d", b, want)
	}
}

// TestBillingGapsJourney: a downgrade's credit beyond its charges goes to the credit balance
// and pays the next renewal; the usage before the change is rated at the old plan, after it at
// the new one; a termination bills the usage and credits the unused fee; a cancelled
// subscription's last period's usage is billed when it ends.
func TestBillingGapsJourney(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	small, big := smallPlan(t, env), bigPlan(t, env)

	t.Run("DowngradeCreditPaysTheNextRenewal", func(t *testing.T) {
		t.Parallel()
		s := newRatedSubscription(t, env, "2025-03-01T00:00:00Z", productAddress, small)
		// Big selected on March 1: 40000 + VAT 6000, paid (no dunning later).
		sel := decode[planSelection](t, subscriptionAction(env, s.token, s.id, "select-plan", `{"plan_id":"`+big+`"}`))
		payInvoice(t, env, s.token, sel.Invoice.ID, 46000)
		advance(t, env, s.token, s.clock, "2025-03-10T00:00:00Z")
		s.resolve(t, env, 7) // on Big: 5 free, 2 at 50
		advance(t, env, s.token, s.clock, "2025-03-11T00:00:00Z")

		// The change to Small on March 11 (21 of 31 days left): March's usage so far at Big
		// (100), Small's fee 10000 × 21/31 = 6774.19 charged, Big's 40000 × 21/31 = 27096.77
		// credited up to the charges (6874): 27097 - 6874 = 20223 to the credit balance.
		draft := upcoming(t, env, s.token, s.id, "?plan_id="+small)
		wantLine(t, draft, 0, "graduated_usage", 2, 50, "2025-03-01", "2025-03-10", false)
		wantLine(t, draft, 1, "recurring_fee", 1, 6774, "2025-03-11", "2025-03-31", true)
		wantLine(t, draft, 2, "recurring_fee", 1, -6874, "2025-03-11", "2025-03-31", true)
		wantTotals(t, draft, 6874, 6874, 0, 0)
		change := func() *apitest.Response {
			return env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/subscriptions/" + s.id + "/change-plan", Token: s.token,
				Body: `{"plan_id":"` + small + `"}`, Header: http.Header{"Idempotency-Key": {"downgrade"}}})
		}
		for i := range 2 {
			if resp := change(); resp.Status != http.StatusOK || (i == 1) != (resp.Header.Get("Idempotent-Replayed") == "true") {
				t.Fatalf("change plan %d: %d %s", i, resp.Status, resp.Body)
			}
		}
		invs := invoicesOf(t, env, s.id)
		if len(invs) != 2 {
			t.Fatalf("%d invoices after the selection, the change and its replay, want 2", len(invs))
		}
		proration := invs[1]
		wantSameInvoice(t, draft, proration)
		wantCreditBalance(t, env, s.token, s.org, 20223)

		// After the change: 4 on Small (2 included, 2 at 100), then April's fee, less the balance.
		s.resolve(t, env, 4)
		renewal := upcoming(t, env, s.token, s.id, "")
		wantLine(t, renewal, 0, "per_unit", 2, 100, "2025-03-11", "2025-03-31", false)
		wantLine(t, renewal, 1, "recurring_fee", 1, 10000, "2025-04-01", "2025-04-30", false)
		wantLine(t, renewal, 2, "credit", 1, -10200, "2025-03-11", "2025-04-30", false)
		wantTotals(t, renewal, 10200, 10200, 0, 0)
		if l := renewal.Lines[2]; l.PriceID != nil || l.Description != "Credit balance applied" {
			t.Errorf("balance line %+v", l)
		}
		advance(t, env, s.token, s.clock, "2025-04-01T00:00:00Z")
		invs = invoicesOf(t, env, s.id)
		if len(invs) != 3 {
			t.Fatalf("%d invoices after the renewal, want 3", len(invs))
		}
		wantSameInvoice(t, renewal, invs[2])
		wantCreditBalance(t, env, s.token, s.org, 10023) // 20223 - 10200

		// The ledger, one entry a page: credited by the change, applied to the renewal.
		ledger := creditLedger(t, env, s.token, s.org, 1)
		want := []creditEntry{
			{Amount: 20223, Currency: "SAR", BalanceAfter: 20223, Reason: "proration_credit", InvoiceID: proration.ID, SubscriptionID: s.id},
			{Amount: -10200, Currency: "SAR", BalanceAfter: 10023, Reason: "applied_to_invoice", InvoiceID: invs[2].ID, SubscriptionID: s.id},
		}
		if len(ledger) != len(want) {
			t.Fatalf("ledger %+v, want %+v", ledger, want)
		}
		for i := range want {
			want[i].ID = ledger[i].ID
			if ledger[i] != want[i] {
				t.Errorf("ledger entry %d: %+v, want %+v", i, ledger[i], want[i])
			}
		}
		if n := env.Count(`SELECT count(*) FROM webhook_events WHERE organization_id = $1 AND type = 'credit_balance.updated'`, s.org); n != 2 {
			t.Errorf("%d credit_balance.updated events, want 2", n)
		}
		if n := env.Count(`SELECT count(*) FROM audit_events WHERE organization_id = $1 AND action IN ('credit_balance.credited', 'credit_balance.applied')`, s.org); n != 2 {
			t.Errorf("%d audit entries of the balance, want 2", n)
		}

		// Who may read: the operator any organization; another organization neither; a key
		// without invoices:read not even its own.
		wantCreditBalance(t, env, apitest.OperatorToken, s.org, 10023)
		if n := len(creditLedger(t, env, apitest.OperatorToken, s.org, 50)); n != 2 {
			t.Errorf("the operator reads %d entries", n)
		}
		_, other := newOrganization(t, env)
		for _, path := range []string{"/v1/credit-balance?organization_id=" + s.org, "/v1/credit-balance/transactions?organization_id=" + s.org} {
			assertProblem(t, "another organization", env.Do(apitest.Request{Method: http.MethodGet, Path: path, Token: other}), http.StatusForbidden, "forbidden")
		}
		if resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/credit-balance/transactions", Token: other}); resp.Status != http.StatusOK ||
			len(resp.JSON(t)["items"].([]any)) != 0 {
			t.Errorf("another organization's own ledger: %d %s", resp.Status, resp.Body)
		}
		reader := call(t, env, http.MethodPost, "/v1/api-keys", apitest.OperatorToken,
			fmt.Sprintf(`{"organization_id":%q,"name":"reader","environment":"sandbox","scopes":["subscriptions:read"]}`, s.org), http.StatusCreated)["full_key"].(string)
		assertProblem(t, "without invoices:read", env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/credit-balance?organization_id=" + s.org, Token: reader}),
			http.StatusForbidden, "insufficient_scope")
		assertProblem(t, "unknown organization", env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/credit-balance?organization_id=" + uuid.NewString(), Token: apitest.OperatorToken}),
			http.StatusNotFound, "not_found")

		// Voided, the renewal gives back what it took from the balance, once.
		if got := call(t, env, http.MethodPost, "/v1/invoices/"+invs[2].ID+"/void", s.token, "", http.StatusOK)["status"]; got != "void" {
			t.Fatalf("voided renewal: status %v", got)
		}
		wantCreditBalance(t, env, s.token, s.org, 20223)
		assertProblem(t, "a second void", voidAgain(env, s.token, invs[2].ID), http.StatusConflict, "invalid_state_transition")
		wantCreditBalance(t, env, s.token, s.org, 20223)
		ledger = creditLedger(t, env, s.token, s.org, 50)
		restored := creditEntry{Amount: 10200, Currency: "SAR", BalanceAfter: 20223, Reason: "void_restored", InvoiceID: invs[2].ID, SubscriptionID: s.id}
		if len(ledger) != 3 {
			t.Fatalf("ledger after the void %+v, want a third entry %+v", ledger, restored)
		}
		if restored.ID = ledger[2].ID; ledger[2] != restored {
			t.Errorf("the void's entry %+v, want %+v", ledger[2], restored)
		}
		if n := env.Count(`SELECT count(*) FROM webhook_events WHERE organization_id = $1 AND type = 'credit_balance.updated'`, s.org); n != 3 {
			t.Errorf("%d credit_balance.updated events after the void, want 3", n)
		}
	})

	t.Run("TerminationBillsUsageAndCreditsTheFee", func(t *testing.T) {
		t.Parallel()
		s := newRatedSubscription(t, env, "2025-03-01T00:00:00Z", productAddress, big)
		sel := decode[planSelection](t, subscriptionAction(env, s.token, s.id, "select-plan", `{"plan_id":"`+small+`"}`))
		payInvoice(t, env, s.token, sel.Invoice.ID, 11500) // 10000 + VAT 1500
		advance(t, env, s.token, s.clock, "2025-03-10T00:00:00Z")
		s.resolve(t, env, 12) // 2 included, 10 at 100
		advance(t, env, s.token, s.clock, "2025-03-11T00:00:00Z")
		if resp := subscriptionAction(env, s.token, s.id, "terminate", `{"reason":"closing"}`); resp.Status != http.StatusOK {
			t.Fatalf("terminate: %d %s", resp.Status, resp.Body)
		}
		// The last invoice: March's usage so far (1000), less Small's unused fee 10000 × 21/31
		// = 6774.19 up to it; 6774 - 1000 = 5774 to the credit balance.
		invs := invoicesOf(t, env, s.id)
		if len(invs) != 2 {
			t.Fatalf("%d invoices after the termination, want 2", len(invs))
		}
		last := invs[1]
		wantLine(t, last, 0, "per_unit", 10, 100, "2025-03-01", "2025-03-10", false)
		wantLine(t, last, 1, "recurring_fee", 1, -1000, "2025-03-11", "2025-03-31", true)
		wantTotals(t, last, 1000, 1000, 0, 0)
		if !last.IssuedAt.Equal(clockAt(t, "2025-03-11T00:00:00Z")) {
			t.Errorf("last invoice issued at %v", last.IssuedAt)
		}
		wantCreditBalance(t, env, s.token, s.org, 5774)
		if l := creditLedger(t, env, s.token, s.org, 50); len(l) != 1 || l[0].Reason != "termination_credit" || l[0].Amount != 5774 || l[0].InvoiceID != last.ID {
			t.Errorf("ledger %+v", l)
		}
	})

	t.Run("CancelledSubscriptionBillsItsLastPeriodsUsage", func(t *testing.T) {
		t.Parallel()
		s := newRatedSubscription(t, env, "2025-03-01T00:00:00Z", productAddress, small)
		advance(t, env, s.token, s.clock, "2025-03-10T00:00:00Z")
		s.resolve(t, env, 5) // 2 included, 3 at 100
		if resp := subscriptionAction(env, s.token, s.id, "cancel", ""); resp.Status != http.StatusOK {
			t.Fatalf("cancel: %d %s", resp.Status, resp.Body)
		}
		if invs := invoicesOf(t, env, s.id); len(invs) != 0 {
			t.Fatalf("%d invoices before the period's end", len(invs))
		}
		advance(t, env, s.token, s.clock, "2025-04-02T00:00:00Z")
		if sub := call(t, env, http.MethodGet, "/v1/subscriptions/"+s.id, s.token, "", http.StatusOK); sub["service_status"] != "terminated" {
			t.Errorf("service %v after the period's end", sub["service_status"])
		}
		invs := invoicesOf(t, env, s.id)
		if len(invs) != 1 {
			t.Fatalf("%d invoices after the period's end, want 1", len(invs))
		}
		wantLine(t, invs[0], 0, "per_unit", 3, 100, "2025-03-01", "2025-03-31", false)
		wantTotals(t, invs[0], 300, 0, 45, 345)
		if len(invs[0].Lines) != 1 || !invs[0].IssuedAt.Equal(clockAt(t, "2025-04-01T00:00:00Z")) {
			t.Errorf("last invoice %+v", invs[0])
		}
	})
}
