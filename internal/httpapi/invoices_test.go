package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/provider/coreapi/internal/apitest"
)

// invoiceFixture is an organization with a subscription whose plan selection issued an
// invoice: the growth monthly plan, 79900 + 15 % VAT = 91885 SAR minor units.
type invoiceFixture struct {
	org, token, sub, invoice string
	selection                map[string]any
}

func newInvoice(t *testing.T, env *apitest.Env, plan string) invoiceFixture {
	t.Helper()
	org, token, sub := newSubscription(t, env)
	sel := call(t, env, http.MethodPost, "/v1/subscriptions/"+sub["id"].(string)+"/select-plan", token,
		fmt.Sprintf(`{"plan_id":%q}`, plan), http.StatusOK)
	return invoiceFixture{org: org, token: token, sub: sub["id"].(string), invoice: sel["invoice"].(map[string]any)["id"].(string), selection: sel}
}

func (f invoiceFixture) pay(env *apitest.Env, token string, amount int64, method string) *apitest.Response {
	return env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/invoices/" + f.invoice + "/payments", Token: token,
		Body: fmt.Sprintf(`{"amount":%d,"payment_method":%q}`, amount, method)})
}

// storedInvoice is the payment state of the invoice in the database.
func (f invoiceFixture) stored(t *testing.T, env *apitest.Env) (status string, amountPaid int64, paid bool) {
	t.Helper()
	if err := env.Pool.QueryRow(context.Background(), `SELECT status, amount_paid, paid_at IS NOT NULL FROM billing_invoices
		WHERE organization_id = $1 AND id = $2`, f.org, f.invoice).Scan(&status, &amountPaid, &paid); err != nil {
		t.Fatal(err)
	}
	return status, amountPaid, paid
}

func TestInvoices_ReadListAndLines(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newInvoice(t, env, planEinvoiceGrowthAnnual) // setup fee waived by a discount: a negative line
	other, otherToken := newOrganization(t, env)

	got := call(t, env, http.MethodGet, "/v1/invoices/"+f.invoice, f.token, "", http.StatusOK)
	if fmt.Sprint(got) != fmt.Sprint(f.selection["invoice"]) {
		t.Errorf("GET %v\nwant the select-plan invoice %v", got, f.selection["invoice"])
	}
	if op := call(t, env, http.MethodGet, "/v1/invoices/"+f.invoice, apitest.OperatorToken, "", http.StatusOK); op["id"] != f.invoice {
		t.Errorf("operator read %v", op)
	}

	t.Run("LinesAddUp", func(t *testing.T) {
		lines := call(t, env, http.MethodGet, "/v1/invoices/"+f.invoice+"/lines", f.token, "", http.StatusOK)
		if lines["next_cursor"] != nil {
			t.Errorf("next_cursor %v", lines["next_cursor"])
		}
		var charges, discounts, tax, total int64
		items := lines["items"].([]any)
		for _, it := range items {
			l := it.(map[string]any)
			amount, lineTax := int64(l["amount"].(float64)), int64(l["tax"].(float64))
			if int64(l["quantity"].(float64))*int64(l["unit_amount"].(float64)) != amount || l["proration"] != false {
				t.Errorf("line %v: quantity × unit_amount is not amount", l)
			}
			if amount >= 0 {
				charges += amount
			} else {
				discounts -= amount
				if l["price_id"] == nil || l["component_type"] != "discount" && l["component_type"] != "credit" {
					t.Errorf("discount line without its price component: %v", l)
				}
			}
			tax += lineTax
			total += amount + lineTax
		}
		if len(items) < 2 || discounts == 0 {
			t.Fatalf("want a charge and a discount line: %v", items)
		}
		want := func(k string) int64 { return int64(got[k].(float64)) }
		if charges != want("subtotal") || discounts != want("discount") || tax != want("tax") || total != want("total") {
			t.Errorf("lines add up to %d/%d/%d/%d, invoice %v", charges, discounts, tax, total, got)
		}
	})

	t.Run("ListFilters", func(t *testing.T) {
		list := func(token, query string, status int) []any {
			t.Helper()
			page := call(t, env, http.MethodGet, "/v1/invoices?"+query, token, "", status)
			if status != http.StatusOK {
				return nil
			}
			return page["items"].([]any)
		}
		if items := list(f.token, "", http.StatusOK); len(items) != 1 || items[0].(map[string]any)["id"] != f.invoice {
			t.Errorf("own list %v", items)
		}
		if items := list(f.token, "subscription_id="+f.sub+"&status=issued", http.StatusOK); len(items) != 1 {
			t.Errorf("filtered list %v", items)
		}
		if items := list(f.token, "status=paid", http.StatusOK); len(items) != 0 {
			t.Errorf("paid invoices %v", items)
		}
		if items := list(otherToken, "", http.StatusOK); len(items) != 0 {
			t.Errorf("another tenant sees %v", items)
		}
		list(otherToken, "organization_id="+f.org, http.StatusForbidden)
		if items := list(apitest.OperatorToken, "organization_id="+f.org, http.StatusOK); len(items) != 1 {
			t.Errorf("operator list %v", items)
		}
		// Keyset pages: a second invoice, one per page.
		newInvoice(t, env, planEinvoiceGrowthMonthly)
		page1 := call(t, env, http.MethodGet, "/v1/invoices?limit=1", apitest.OperatorToken, "", http.StatusOK)
		cursor, _ := page1["next_cursor"].(string)
		if len(page1["items"].([]any)) != 1 || cursor == "" {
			t.Fatalf("page 1 %v", page1)
		}
		page2 := call(t, env, http.MethodGet, "/v1/invoices?limit=1&cursor="+cursor, apitest.OperatorToken, "", http.StatusOK)
		if items := page2["items"].([]any); len(items) != 1 || items[0].(map[string]any)["id"] == page1["items"].([]any)[0].(map[string]any)["id"] {
			t.Errorf("page 2 %v", page2)
		}
	})

	t.Run("AnotherTenantsInvoiceIsNotFound", func(t *testing.T) {
		for _, r := range []struct{ method, path, body string }{
			{http.MethodGet, "/v1/invoices/" + f.invoice, ""},
			{http.MethodGet, "/v1/invoices/" + f.invoice + "/lines", ""},
			{http.MethodPost, "/v1/invoices/" + f.invoice + "/payments", `{"amount":1,"payment_method":"pm_sandbox_success"}`},
			{http.MethodPost, "/v1/invoices/" + f.invoice + "/void", ""},
		} {
			resp := env.Do(apitest.Request{Method: r.method, Path: r.path, Token: otherToken, Body: r.body})
			assertProblem(t, r.method+" "+r.path, resp, http.StatusNotFound, "not_found")
		}
		if status, paid, _ := f.stored(t, env); status != "issued" || paid != 0 {
			t.Errorf("another tenant changed the invoice: %s %d", status, paid)
		}
		if n := env.Count("SELECT count(*) FROM billing_payments WHERE organization_id = $1 OR organization_id = $2", f.org, other); n != 0 {
			t.Errorf("%d payments recorded", n)
		}
	})
}

func TestInvoices_Payments(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newInvoice(t, env, planEinvoiceGrowthMonthly)
	const total = 91885

	// Declined, then insufficient funds: recorded, nothing applied.
	for method, code := range map[string]string{"pm_sandbox_declined": "card_declined", "pm_sandbox_insufficient_funds": "insufficient_funds"} {
		resp := f.pay(env, f.token, total, method)
		if resp.Status != http.StatusCreated {
			t.Fatalf("%s: %d %s", method, resp.Status, resp.Body)
		}
		p := resp.JSON(t)
		if p["status"] != "failed" || p["failure_code"] != code || p["failure_message"] == nil || p["invoice_id"] != f.invoice || p["amount"] != float64(total) {
			t.Errorf("%s: %v", method, p)
		}
	}
	if status, paid, _ := f.stored(t, env); status != "issued" || paid != 0 {
		t.Fatalf("a failed payment changed the invoice: %s %d", status, paid)
	}
	if n := auditCount(env, f.invoice, "billing_invoice.payment_failed"); n != 2 {
		t.Errorf("%d payment_failed audit events", n)
	}

	// Overpayment and a zero amount are refused and record nothing.
	assertProblem(t, "overpay", f.pay(env, f.token, total+1, "pm_sandbox_success"), http.StatusUnprocessableEntity, "unprocessable")
	if resp := f.pay(env, f.token, total+1, "pm_sandbox_success"); !containsField(resp, "/amount", "amount_exceeds_amount_due") {
		t.Errorf("overpayment names no field: %s", resp.Body)
	}
	assertProblem(t, "zero", f.pay(env, f.token, 0, "pm_sandbox_success"), http.StatusUnprocessableEntity, "unprocessable")

	// A partial payment, replayed with its key: applied once.
	req := apitest.Request{Method: http.MethodPost, Path: "/v1/invoices/" + f.invoice + "/payments", Token: f.token,
		Body: `{"amount":40000,"payment_method":"pm_sandbox_success"}`, Header: http.Header{"Idempotency-Key": {"pay-part-1"}}}
	first := env.Do(req)
	again := env.Do(req)
	if first.Status != http.StatusCreated || again.Status != http.StatusCreated || string(first.Body) != string(again.Body) ||
		again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %s / %d %s", first.Status, first.Body, again.Status, again.Body)
	}
	if status, paid, isPaid := f.stored(t, env); status != "partially_paid" || paid != 40000 || isPaid {
		t.Errorf("after a partial payment: %s %d paid_at %v", status, paid, isPaid)
	}
	inv := call(t, env, http.MethodGet, "/v1/invoices/"+f.invoice, f.token, "", http.StatusOK)
	if inv["status"] != "partially_paid" || inv["paid_at"] != nil {
		t.Errorf("partially paid invoice %v", inv)
	}
	if n := auditCount(env, f.sub, "subscription.plan_activated"); n != 0 {
		t.Errorf("a partial payment activated the selection")
	}

	// More than the rest is refused; the rest pays it.
	assertProblem(t, "overpay the rest", f.pay(env, f.token, total-40000+1, "pm_sandbox_success"), http.StatusUnprocessableEntity, "unprocessable")
	resp := f.pay(env, f.token, total-40000, "pm_sandbox_success")
	if resp.Status != http.StatusCreated || resp.JSON(t)["status"] != "succeeded" {
		t.Fatalf("pay the rest: %d %s", resp.Status, resp.Body)
	}
	inv = call(t, env, http.MethodGet, "/v1/invoices/"+f.invoice, f.token, "", http.StatusOK)
	if inv["status"] != "paid" || inv["paid_at"] == nil {
		t.Errorf("paid invoice %v", inv)
	}
	if status, paid, isPaid := f.stored(t, env); status != "paid" || paid != total || !isPaid {
		t.Errorf("stored: %s %d paid_at %v", status, paid, isPaid)
	}
	if n := auditCount(env, f.sub, "subscription.plan_activated"); n != 1 {
		t.Errorf("%d plan_activated audit events, want 1", n)
	}

	// A paid invoice takes no payment, and cannot be voided.
	assertProblem(t, "pay a paid invoice", f.pay(env, f.token, 1, "pm_sandbox_success"), http.StatusConflict, "invalid_state_transition")
	assertProblem(t, "void a paid invoice", env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/invoices/" + f.invoice + "/void", Token: f.token}),
		http.StatusConflict, "invalid_state_transition")

	// The payments: two failed, two succeeded, readable by the organization only.
	payments := call(t, env, http.MethodGet, "/v1/payments?invoice_id="+f.invoice, f.token, "", http.StatusOK)["items"].([]any)
	if len(payments) != 4 {
		t.Fatalf("payments %v", payments)
	}
	if n := env.Count("SELECT count(*) FROM billing_payments WHERE invoice_id = $1 AND status = 'succeeded'", f.invoice); n != 2 {
		t.Errorf("%d succeeded payments stored, want 2", n)
	}
	id := payments[0].(map[string]any)["id"].(string)
	if p := call(t, env, http.MethodGet, "/v1/payments/"+id, f.token, "", http.StatusOK); p["status"] != "failed" {
		t.Errorf("payment %v", p)
	}
	_, otherToken := newOrganization(t, env)
	assertProblem(t, "another tenant's payment", env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/payments/" + id, Token: otherToken}),
		http.StatusNotFound, "not_found")
	if items := call(t, env, http.MethodGet, "/v1/payments?invoice_id="+f.invoice, otherToken, "", http.StatusOK)["items"].([]any); len(items) != 0 {
		t.Errorf("another tenant lists %v", items)
	}
}

// containsField reports whether the problem of resp names pointer with code.
func containsField(resp *apitest.Response, pointer, code string) bool {
	var p struct {
		Errors []struct{ Pointer, Code string }
	}
	if err := json.Unmarshal(resp.Body, &p); err != nil {
		return false
	}
	for _, e := range p.Errors {
		if e.Pointer == pointer && e.Code == code {
			return true
		}
	}
	return false
}

func TestInvoices_ConcurrentPaymentsNeverExceedTheTotal(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newInvoice(t, env, planEinvoiceGrowthMonthly)
	const total, each, tries = 91885, 30000, 8
	statuses := make([]int, tries)
	var wg sync.WaitGroup
	for i := range tries {
		wg.Go(func() { statuses[i] = f.pay(env, f.token, each, "pm_sandbox_success").Status })
	}
	wg.Wait()
	succeeded := 0
	for _, s := range statuses {
		switch s {
		case http.StatusCreated:
			succeeded++
		case http.StatusUnprocessableEntity:
		default:
			t.Errorf("status %d", s)
		}
	}
	if succeeded != total/each {
		t.Errorf("%d payments of %d succeeded, want %d", succeeded, each, total/each)
	}
	status, paid, _ := f.stored(t, env)
	if stored := env.Count("SELECT count(*) FROM billing_payments WHERE invoice_id = $1", f.invoice); paid != int64(stored*each) || paid > total || status != "partially_paid" {
		t.Errorf("amount_paid %d from %d payments, status %s", paid, stored, status)
	}
}

func TestInvoices_VoidAndUncollectible(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	post := func(f invoiceFixture, action, token string) *apitest.Response {
		return env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/invoices/" + f.invoice + "/" + action, Token: token,
			Header: http.Header{"Idempotency-Key": {f.invoice + action}}})
	}

	t.Run("OwnerVoidsAnUnpaidInvoice", func(t *testing.T) {
		t.Parallel()
		f := newInvoice(t, env, planEinvoiceGrowthMonthly)
		first, again := post(f, "void", f.token), post(f, "void", f.token)
		if first.Status != http.StatusOK || first.JSON(t)["status"] != "void" || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("void: %d %s / %s", first.Status, first.Body, again.Header)
		}
		if status, _, _ := f.stored(t, env); status != "void" || auditCount(env, f.invoice, "billing_invoice.voided") != 1 {
			t.Errorf("stored %s", status)
		}
		assertProblem(t, "void twice", voidAgain(env, f.token, f.invoice), http.StatusConflict, "invalid_state_transition")
		assertProblem(t, "pay a void invoice", f.pay(env, f.token, 1, "pm_sandbox_success"), http.StatusConflict, "invalid_state_transition")
	})

	t.Run("NothingPaidOnlyThenOperatorToo", func(t *testing.T) {
		t.Parallel()
		f := newInvoice(t, env, planEinvoiceGrowthMonthly)
		if resp := f.pay(env, f.token, 100, "pm_sandbox_success"); resp.Status != http.StatusCreated {
			t.Fatalf("pay: %d %s", resp.Status, resp.Body)
		}
		assertProblem(t, "void partially paid", post(f, "void", apitest.OperatorToken), http.StatusConflict, "invalid_state_transition")
		if status, paid, _ := f.stored(t, env); status != "partially_paid" || paid != 100 {
			t.Errorf("stored %s %d", status, paid)
		}
	})

	t.Run("OnlyTheOperatorWritesOff", func(t *testing.T) {
		t.Parallel()
		f := newInvoice(t, env, planEinvoiceGrowthMonthly)
		assertProblem(t, "tenant", post(f, "mark-uncollectible", f.token), http.StatusForbidden, "forbidden")
		if status, _, _ := f.stored(t, env); status != "issued" || auditCount(env, f.invoice, "billing_invoice.uncollectible") != 0 {
			t.Fatalf("a refused write-off changed the invoice: %s", status)
		}
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/invoices/" + f.invoice + "/mark-uncollectible", Token: apitest.OperatorToken})
		if resp.Status != http.StatusOK || resp.JSON(t)["status"] != "uncollectible" {
			t.Fatalf("operator: %d %s", resp.Status, resp.Body)
		}
		if status, _, _ := f.stored(t, env); status != "uncollectible" || auditCount(env, f.invoice, "billing_invoice.uncollectible") != 1 {
			t.Errorf("stored %s", status)
		}
		assertProblem(t, "void it", post(f, "void", f.token), http.StatusConflict, "invalid_state_transition")
		// Written off, it still takes payments, and stays uncollectible until paid in full (dunning).
		if resp := f.pay(env, f.token, 1, "pm_sandbox_success"); resp.Status != http.StatusCreated {
			t.Errorf("pay an uncollectible invoice: %d %s", resp.Status, resp.Body)
		}
		if status, paid, _ := f.stored(t, env); status != "uncollectible" || paid != 1 {
			t.Errorf("after a part: stored %s %d, want uncollectible 1", status, paid)
		}
	})
}

// An endpoint receives one event per issuance: invoice.issued, or the deprecated
// billing_invoice.issued when it names only that.
func TestInvoices_IssuedEventAndItsDeprecatedAlias(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org, token, sub := newSubscription(t, env)
	endpoints := map[string][]string{
		"alias":     {"billing_invoice.issued"},
		"both":      {"billing_invoice.issued", "invoice.issued"},
		"successor": {"invoice.issued"},
	}
	ids := map[string]string{}
	for name, events := range endpoints {
		ids[name] = createEndpoint(t, env, token, endpointBody(org, "https://hooks.example.com/"+name, events...))["id"].(string)
	}
	call(t, env, http.MethodPost, "/v1/subscriptions/"+sub["id"].(string)+"/select-plan", token,
		fmt.Sprintf(`{"plan_id":%q}`, planEinvoiceGrowthMonthly), http.StatusOK)
	want := map[string]string{"alias": "billing_invoice.issued", "both": "invoice.issued", "successor": "invoice.issued"}
	for name, typ := range want {
		rows, err := env.Pool.Query(context.Background(), `SELECT e.type FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
			WHERE d.organization_id = $1 AND d.endpoint_id = $2`, org, ids[name])
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			got = append(got, s)
		}
		rows.Close()
		if len(got) != 1 || got[0] != typ {
			t.Errorf("endpoint %s received %v, want [%s]", name, got, typ)
		}
	}
}

var (
	_ = reachable("BillingInvoiceStatus", "partially_paid", func(t *testing.T, env *apitest.Env) map[string]any {
		f := newInvoice(t, env, planEinvoiceGrowthMonthly)
		call(t, env, http.MethodPost, "/v1/invoices/"+f.invoice+"/payments", f.token, `{"amount":1000,"payment_method":"pm_sandbox_success"}`, http.StatusCreated)
		return call(t, env, http.MethodGet, "/v1/invoices/"+f.invoice, f.token, "", http.StatusOK)
	})
	_ = reachable("BillingInvoiceStatus", "paid", func(t *testing.T, env *apitest.Env) map[string]any {
		f := newInvoice(t, env, planEinvoiceGrowthMonthly)
		call(t, env, http.MethodPost, "/v1/invoices/"+f.invoice+"/payments", f.token, `{"amount":91885,"payment_method":"pm_sandbox_success"}`, http.StatusCreated)
		return call(t, env, http.MethodGet, "/v1/invoices/"+f.invoice, f.token, "", http.StatusOK)
	})
	_ = reachable("BillingInvoiceStatus", "uncollectible", func(t *testing.T, env *apitest.Env) map[string]any {
		f := newInvoice(t, env, planEinvoiceGrowthMonthly)
		return call(t, env, http.MethodPost, "/v1/invoices/"+f.invoice+"/mark-uncollectible", apitest.OperatorToken, "", http.StatusOK)
	})
	_ = reachable("PaymentStatus", "succeeded", func(t *testing.T, env *apitest.Env) map[string]any {
		f := newInvoice(t, env, planEinvoiceGrowthMonthly)
		return call(t, env, http.MethodPost, "/v1/invoices/"+f.invoice+"/payments", f.token, `{"amount":91885,"payment_method":"pm_sandbox_success"}`, http.StatusCreated)
	})
	_ = reachable("PaymentStatus", "failed", func(t *testing.T, env *apitest.Env) map[string]any {
		f := newInvoice(t, env, planEinvoiceGrowthMonthly)
		return call(t, env, http.MethodPost, "/v1/invoices/"+f.invoice+"/payments", f.token, `{"amount":91885,"payment_method":"pm_sandbox_declined"}`, http.StatusCreated)
	})
)

// Paying the first invoice of a charging plan selected awaiting payment makes the
// organization live commercially: its onboarding completes in the payment's transaction.
func TestInvoices_PayingTheSelectionCompletesTheOnboarding(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	o := newOnboarded(t, env, "pays")
	sel := call(t, env, http.MethodPost, "/v1/subscriptions/"+o.subscription+"/select-plan", o.token,
		fmt.Sprintf(`{"plan_id":%q}`, planEinvoiceGrowthMonthly), http.StatusOK)
	invoice := "/v1/invoices/" + sel["invoice"].(map[string]any)["id"].(string) + "/payments"
	o.expect(t, env, "sandbox_ready", "plan_selected")

	call(t, env, http.MethodPost, invoice, o.token, `{"amount":91885,"payment_method":"pm_sandbox_declined"}`, http.StatusCreated)
	call(t, env, http.MethodPost, invoice, o.token, `{"amount":50000,"payment_method":"pm_sandbox_success"}`, http.StatusCreated)
	o.expect(t, env, "sandbox_ready", "plan_selected")

	call(t, env, http.MethodPost, invoice, o.token, `{"amount":41885,"payment_method":"pm_sandbox_success"}`, http.StatusCreated)
	o.expect(t, env, "completed", "plan_selected", "subscription_active")
	if n := o.audits(env, "onboarding.completed"); n != 1 {
		t.Errorf("%d onboarding.completed audit events", n)
	}
}

// Reading invoices does not pay them: each operation asks for its own scope.
func TestInvoices_Scopes(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newInvoice(t, env, planEinvoiceGrowthMonthly)
	key := call(t, env, http.MethodPost, "/v1/api-keys", apitest.OperatorToken,
		fmt.Sprintf(`{"organization_id":%q,"name":"reader","environment":"sandbox","scopes":["invoices:read"]}`, f.org), http.StatusCreated)["full_key"].(string)
	call(t, env, http.MethodGet, "/v1/invoices/"+f.invoice, key, "", http.StatusOK)
	assertProblem(t, "pay", f.pay(env, key, 91885, "pm_sandbox_success"), http.StatusForbidden, "insufficient_scope")
	assertProblem(t, "void", env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/invoices/" + f.invoice + "/void", Token: key}),
		http.StatusForbidden, "insufficient_scope")
	assertProblem(t, "payments", env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/payments", Token: key}),
		http.StatusForbidden, "insufficient_scope")
	if status, paid, _ := f.stored(t, env); status != "issued" || paid != 0 {
		t.Errorf("a refused request changed the invoice: %s %d", status, paid)
	}
}

// voidAgain voids an invoice already voided, as a client would: the first void queued its
// credit note's job, which locks the invoice, and a void meeting it may be told to retry (503,
// retryable).
func voidAgain(env *apitest.Env, token, invoice string) *apitest.Response {
	again := func() *apitest.Response {
		return env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/invoices/" + invoice + "/void", Token: token})
	}
	resp := again()
	for try := 0; try < 5 && resp.Status == http.StatusServiceUnavailable; try++ {
		time.Sleep(200 * time.Millisecond)
		resp = again()
	}
	return resp
}
