package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
	"github.com/provider/coreapi/internal/httpapi"
)

// testClock is the API's TestClock.
type testClock struct {
	ID             string    `json:"id"`
	OrganizationID string    `json:"organization_id"`
	FrozenTime     time.Time `json:"frozen_time"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// clockAt parses an RFC 3339 time of a test.
func clockAt(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// createClock puts org on a test clock frozen at frozen.
func createClock(t testing.TB, env *apitest.Env, token, org, frozen string) testClock {
	t.Helper()
	resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/test-clocks", Token: token,
		Body: fmt.Sprintf(`{"organization_id":%q,"frozen_time":%q}`, org, frozen)})
	if resp.Status != http.StatusCreated {
		t.Fatalf("create test clock: %d %s", resp.Status, resp.Body)
	}
	c := decode[testClock](t, resp)
	if c.OrganizationID != org || !c.FrozenTime.Equal(clockAt(t, frozen)) {
		t.Errorf("clock %+v, want organization %s at %s", c, org, frozen)
	}
	return c
}

func advanceRequest(env *apitest.Env, token, id, to string, header http.Header) *apitest.Response {
	return env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/test-clocks/" + id + "/advance", Token: token,
		Body: fmt.Sprintf(`{"frozen_time":%q}`, to), Header: header})
}

// advance moves the clock to to and checks the answer.
func advance(t testing.TB, env *apitest.Env, token, id, to string) {
	t.Helper()
	resp := advanceRequest(env, token, id, to, nil)
	if resp.Status != http.StatusOK {
		t.Fatalf("advance to %s: %d %s", to, resp.Status, resp.Body)
	}
	if c := decode[testClock](t, resp); !c.FrozenTime.Equal(clockAt(t, to)) || c.ID != id {
		t.Errorf("advanced clock %+v, want %s at %s", c, id, to)
	}
}

// storedInvoice is a billing invoice as the API answers it, with its lines.
type storedInvoice struct {
	ID            string `json:"id"`
	BillingPeriod struct {
		Start string `json:"start"`
		End   string `json:"end"`
	} `json:"billing_period"`
	Lines    []renewalLine `json:"-"`
	Subtotal int64         `json:"subtotal"`
	Discount int64         `json:"discount"`
	Tax      int64         `json:"tax"`
	Total    int64         `json:"total"`
	Status   string        `json:"status"`
	IssuedAt time.Time     `json:"issued_at"`
	DueAt    time.Time     `json:"due_at"`
}

// renewalLine is a line of an invoice as the API answers it.
type renewalLine struct {
	Description   string  `json:"description"`
	ComponentType string  `json:"component_type"`
	PriceID       *string `json:"price_id"`
	Proration     bool    `json:"proration"`
	Period        struct {
		Start string `json:"start"`
		End   string `json:"end"`
	} `json:"period"`
	Quantity   int64 `json:"quantity"`
	UnitAmount int64 `json:"unit_amount"`
	Amount     int64 `json:"amount"`
	Tax        int64 `json:"tax"`
}

// invoicesOf reads the subscription's invoices and their lines through the API, oldest first.
func invoicesOf(t testing.TB, env *apitest.Env, sub string) []storedInvoice {
	t.Helper()
	resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/invoices?limit=100&subscription_id=" + sub, Token: apitest.OperatorToken})
	if resp.Status != http.StatusOK {
		t.Fatalf("list invoices: %d %s", resp.Status, resp.Body)
	}
	page := decode[struct {
		Items []storedInvoice `json:"items"`
	}](t, resp)
	for i, inv := range page.Items {
		lines := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/invoices/" + inv.ID + "/lines?limit=100", Token: apitest.OperatorToken})
		if lines.Status != http.StatusOK {
			t.Fatalf("invoice lines: %d %s", lines.Status, lines.Body)
		}
		page.Items[i].Lines = decode[struct {
			Items []renewalLine `json:"items"`
		}](t, lines).Items
	}
	return page.Items
}

// wantInvoice checks one invoice line by line: its period, its charges (component and amount,
// in order), that they add up to the subtotal, that the tax is 15 % of it rounded half up,
// and that it was issued at issued (the time the step fell due) and is due 14 days later.
func wantInvoice(t testing.TB, inv storedInvoice, start, end string, issued time.Time, charges ...any) {
	t.Helper()
	if inv.BillingPeriod.Start != start || inv.BillingPeriod.End != end {
		t.Errorf("invoice %s: period %s..%s, want %s..%s", inv.ID, inv.BillingPeriod.Start, inv.BillingPeriod.End, start, end)
	}
	if len(inv.Lines) != len(charges)/2 {
		t.Fatalf("invoice %s: lines %+v, want %v", inv.ID, inv.Lines, charges)
	}
	var sum, tax int64
	for i, l := range inv.Lines {
		if l.ComponentType != charges[2*i].(string) || l.Amount != charges[2*i+1].(int64) || l.Quantity*l.UnitAmount != l.Amount ||
			l.Period.Start != start || l.Period.End != end {
			t.Errorf("invoice %s: line %d %+v, want %v %v for %s..%s", inv.ID, i, l, charges[2*i], charges[2*i+1], start, end)
		}
		sum += l.Amount
		tax += l.Tax
	}
	if inv.Subtotal != sum || inv.Discount != 0 || inv.Tax != (sum*15+50)/100 || inv.Tax != tax || inv.Total != inv.Subtotal+inv.Tax {
		t.Errorf("invoice %s: subtotal/discount/tax/total %d/%d/%d/%d for lines summing to %d with tax %d", inv.ID, inv.Subtotal, inv.Discount, inv.Tax, inv.Total, sum, tax)
	}
	if inv.Status != "issued" || !inv.IssuedAt.Equal(issued) || !inv.DueAt.Equal(issued.Add(14*24*time.Hour)) {
		t.Errorf("invoice %s: %s, issued %v due %v; want issued at %v, due 14 days later", inv.ID, inv.Status, inv.IssuedAt, inv.DueAt, issued)
	}
}

// wantRenewed checks that the subscription has n invoices, the last of them the renewal of
// start..end issued at issued for fee (+ 15 % VAT: total), and renews next at renewsAt; it
// returns the invoices.
func wantRenewed(t testing.TB, env *apitest.Env, token, sub string, n int, start, end, issued string, fee, total int64, renewsAt string) []storedInvoice {
	t.Helper()
	invs := invoicesOf(t, env, sub)
	if len(invs) != n {
		t.Fatalf("%d invoices, want %d", len(invs), n)
	}
	last := invs[n-1]
	wantInvoice(t, last, start, end, clockAt(t, issued), "recurring_fee", fee)
	if last.Total != total {
		t.Errorf("invoice %s: total %d, want %d", last.ID, last.Total, total)
	}
	wantRenewsAt(t, getSubscription(t, env, token, sub), renewsAt)
	return invs
}

// wantRenewsAt checks the subscription's renews_at (empty: null).
func wantRenewsAt(t testing.TB, sub subscription, want string) {
	t.Helper()
	switch {
	case want == "" && sub.RenewsAt != nil:
		t.Errorf("subscription %s renews at %v, want null", sub.ID, sub.RenewsAt)
	case want != "" && (sub.RenewsAt == nil || !sub.RenewsAt.Equal(clockAt(t, want))):
		t.Errorf("subscription %s renews at %v, want %s", sub.ID, sub.RenewsAt, want)
	}
}

// payInvoice pays amount of the invoice in full with the sandbox token that succeeds.
func payInvoice(t testing.TB, env *apitest.Env, token, invoice string, amount int64) {
	t.Helper()
	resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/invoices/" + invoice + "/payments", Token: token,
		Body: fmt.Sprintf(`{"amount":%d,"payment_method":"pm_sandbox_success"}`, amount)})
	if resp.Status != http.StatusCreated || resp.JSON(t)["status"] != "succeeded" {
		t.Fatalf("pay %d of %s: %d %s", amount, invoice, resp.Status, resp.Body)
	}
}

// wantEnded advances the clock past a cancelled subscription's period to to and checks that its
// service was terminated exactly at endedAt, the period's end, with still n invoices.
func wantEnded(t testing.TB, env *apitest.Env, token, clock, sub, to, endedAt string, n int) {
	t.Helper()
	advance(t, env, token, clock, to)
	s := getSubscription(t, env, token, sub)
	if s.ServiceStatus != "terminated" || s.TerminatedAt == nil || !s.TerminatedAt.Equal(clockAt(t, endedAt)) {
		t.Errorf("after the period's end: service %s terminated at %v, want terminated at %s", s.ServiceStatus, s.TerminatedAt, endedAt)
	}
	if invs := invoicesOf(t, env, sub); len(invs) != n {
		t.Errorf("%d invoices after the end, want still %d", len(invs), n)
	}
}

// TestRenewalJourney follows a subscription on a test clock from its selection to its end: a
// monthly plan with a 30-day trial that needs no payment method (so the selection is active at
// once: no payment is needed before the first renewal), the trial's end billing the first
// month, a month's renewal, cancel, and the service ending with the period already invoiced.
// Every step runs at the clock's time, and the wall clock's renewal run never touches it.
func TestRenewalJourney(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org, token := newOrganization(t, env)
	clock := createClock(t, env, token, org, "2025-03-01T09:30:00Z")

	sub := createSubscription(t, env, token, org, productAddress, planAddressPreview)
	if !sub.StartedAt.Equal(clockAt(t, "2025-03-01T09:30:00Z")) {
		t.Errorf("started at %v, want the clock's time", sub.StartedAt)
	}
	waitForService(t, env, token, sub.ID, "active")
	sel := decode[planSelection](t, subscriptionAction(env, token, sub.ID, "select-plan", `{"plan_id":"`+planAddressStandardTrial+`"}`))
	if sel.Activation != "active" || sel.Invoice != nil {
		t.Fatalf("selection %+v, want active without an invoice", sel)
	}
	wantRenewsAt(t, sel.Subscription, "2025-03-31T09:30:00Z") // the trial's end

	// During the trial nothing is billed.
	advance(t, env, token, clock.ID, "2025-03-31T09:29:59Z")
	if invs := invoicesOf(t, env, sub.ID); len(invs) != 0 {
		t.Fatalf("%d invoices during the trial", len(invs))
	}
	// The trial's end bills the first month (no setup fee on this plan), at the trial's end.
	advance(t, env, token, clock.ID, "2025-04-01T00:00:00Z")
	invs := wantRenewed(t, env, token, sub.ID, 1, "2025-03-31", "2025-04-29", "2025-03-31T09:30:00Z", 14900, 17135, "2025-04-30T09:30:00Z")
	payInvoice(t, env, token, invs[0].ID, 17135) // in time: no dunning

	// A month on: the next month's invoice, and renews_at a month further.
	// The cycle keeps the anchor's day, the 31st: April's renewal falls on the 30th, May's on the 31st.
	advance(t, env, token, clock.ID, "2025-05-01T00:00:00Z")
	invs = wantRenewed(t, env, token, sub.ID, 2, "2025-04-30", "2025-05-30", "2025-04-30T09:30:00Z", 14900, 17135, "2025-05-31T09:30:00Z")
	payInvoice(t, env, token, invs[1].ID, 17135)
	if n := env.Count(`SELECT count(*) FROM subscription_renewals WHERE subscription_id = $1`, sub.ID); n != 2 {
		t.Errorf("%d renewals recorded, want 2", n)
	}
	if n := env.Count(`SELECT count(*) FROM webhook_events WHERE organization_id = $1 AND type = 'billing_invoice.issued'
		AND data->>'id' IN (SELECT id::text FROM billing_invoices WHERE subscription_id = $2)`, org, sub.ID); n != 2 {
		t.Errorf("%d billing_invoice.issued events, want one per invoice", n)
	}

	// Cancel: renewal stops; the service runs to the end of the period already invoiced.
	resp := subscriptionAction(env, token, sub.ID, "cancel", "")
	if resp.Status != http.StatusOK {
		t.Fatalf("cancel: %d %s", resp.Status, resp.Body)
	}
	advance(t, env, token, clock.ID, "2025-05-31T09:29:59Z")
	if s := getSubscription(t, env, token, sub.ID); s.ServiceStatus != "active" || s.CommercialStatus != "cancelled" || s.RenewsAt != nil {
		t.Errorf("before the period's end: %s/%s renews %v, want cancelled/active, no renewal", s.CommercialStatus, s.ServiceStatus, s.RenewsAt)
	}
	wantEnded(t, env, token, clock.ID, sub.ID, "2025-07-01T00:00:00Z", "2025-05-31T09:30:00Z", 2)
	if n := env.Count(`SELECT count(*) FROM audit_events WHERE resource_id = $1 AND action = 'subscription.terminated'`, sub.ID); n != 1 {
		t.Errorf("%d subscription.terminated audit events, want 1", n)
	}
	if n := env.Count(`SELECT count(*) FROM webhook_events WHERE type = 'subscription.terminated' AND data->>'id' = $1`, sub.ID); n != 1 {
		t.Errorf("%d subscription.terminated events, want 1", n)
	}
}

// TestRenewalPeriods: a monthly and an annual plan renew on whole periods from their start,
// and only the recurring fee is billed again (the annual plan's setup-fee discount belongs to
// its first invoice); a one-time plan never renews; a selection whose first invoice is unpaid
// does not renew (paying it lets it: TestBillingJourney).
func TestRenewalPeriods(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	start := "2025-01-31T12:00:00Z"
	// renewed is the one renewal a case wants: its invoice and the renewal after it.
	type renewed struct {
		start, end, issued string
		fee, total         int64
	}
	cases := []struct {
		name, product, plan, selectPlan string
		to                              string
		renewal                         *renewed // nil: none
		renewsAt                        string   // after the advance ("": null)
		invoices                        int      // of the subscription after the advance
	}{
		// January 31 + 1 month is February 28; the period ends the day before March 31.
		// (Advanced to before its invoice falls due: unpaid after that, dunning starts.)
		{name: "Monthly", product: productEinvoice, plan: planEinvoiceGrowthMonthly, to: "2025-03-14T00:00:00Z",
			renewal: &renewed{"2025-02-28", "2025-03-30", "2025-02-28T12:00:00Z", 29900, 34385}, renewsAt: "2025-03-31T12:00:00Z", invoices: 1},
		{name: "Annual", product: productEinvoice, plan: planEinvoiceGrowthAnnual, to: "2026-02-01T00:00:00Z",
			renewal: &renewed{"2026-01-31", "2027-01-30", "2026-01-31T12:00:00Z", 299000, 343850}, renewsAt: "2027-01-31T12:00:00Z", invoices: 1},
		{name: "OneTimeNever", product: productPlatform, plan: planPlatformDeveloper, selectPlan: planPlatformOnboarding, to: "2026-01-01T00:00:00Z",
			invoices: 1},
		// The selection's invoice is unpaid: renews_at stays where it was.
		{name: "AwaitingPaymentNever", product: productEinvoice, plan: planEinvoiceSandbox, selectPlan: planEinvoiceGrowthMonthly, to: "2025-06-01T00:00:00Z",
			renewsAt: "2025-02-28T12:00:00Z", invoices: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			org, token := newOrganization(t, env)
			clock := createClock(t, env, apitest.OperatorToken, org, start)
			sub := createSubscription(t, env, token, org, tc.product, tc.plan)
			waitForService(t, env, token, sub.ID, "active")
			if tc.selectPlan != "" {
				if resp := subscriptionAction(env, token, sub.ID, "select-plan", `{"plan_id":"`+tc.selectPlan+`"}`); resp.Status != http.StatusOK {
					t.Fatalf("select-plan: %d %s", resp.Status, resp.Body)
				}
			}
			advance(t, env, token, clock.ID, tc.to)
			invs := invoicesOf(t, env, sub.ID)
			if len(invs) != tc.invoices {
				t.Fatalf("%d invoices, want %d", len(invs), tc.invoices)
			}
			renewals := env.Count(`SELECT count(*) FROM subscription_renewals WHERE subscription_id = $1`, sub.ID)
			if r := tc.renewal; r != nil {
				wantInvoice(t, invs[0], r.start, r.end, clockAt(t, r.issued), "recurring_fee", r.fee)
				if invs[0].Total != r.total || renewals != 1 {
					t.Errorf("total %d and %d renewals, want %d and 1", invs[0].Total, renewals, r.total)
				}
			} else if renewals != 0 {
				t.Errorf("renewed %d times, want never", renewals)
			}
			wantRenewsAt(t, getSubscription(t, env, apitest.OperatorToken, sub.ID), tc.renewsAt)
		})
	}
}

// TestRenewalReactivate: reactivating before the period's end resumes renewal at the renewal
// the cancellation withdrew, so the next period is billed and the service never ends.
func TestRenewalReactivate(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org, token := newOrganization(t, env)
	clock := createClock(t, env, token, org, "2025-03-01T09:30:00Z")
	sub := createSubscription(t, env, token, org, productEinvoice, planEinvoiceGrowthMonthly)
	waitForService(t, env, token, sub.ID, "active")
	for _, action := range []string{"cancel", "reactivate"} {
		if resp := subscriptionAction(env, token, sub.ID, action, ""); resp.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", action, resp.Status, resp.Body)
		}
	}
	wantRenewsAt(t, getSubscription(t, env, token, sub.ID), "2025-04-01T09:30:00Z")
	advance(t, env, token, clock.ID, "2025-04-02T00:00:00Z")
	payInvoice(t, env, token, invoicesOf(t, env, sub.ID)[0].ID, 34385) // April's, in time: no dunning
	advance(t, env, token, clock.ID, "2025-05-15T00:00:00Z")
	s := getSubscription(t, env, token, sub.ID)
	if s.ServiceStatus != "active" || s.CommercialStatus != "active" {
		t.Errorf("%s/%s, want active/active", s.CommercialStatus, s.ServiceStatus)
	}
	wantRenewsAt(t, s, "2025-06-01T09:30:00Z")
	invs := invoicesOf(t, env, sub.ID)
	if len(invs) != 2 {
		t.Fatalf("%d invoices, want April's and May's", len(invs))
	}
	if invs[0].BillingPeriod.Start != "2025-04-01" || invs[0].BillingPeriod.End != "2025-04-30" || invs[0].Status != "paid" {
		t.Errorf("April's invoice %+v, want 2025-04-01..2025-04-30, paid", invs[0])
	}
	wantInvoice(t, invs[1], "2025-05-01", "2025-05-31", clockAt(t, "2025-05-01T09:30:00Z"), "recurring_fee", int64(29900))
}

// TestRenewalWhileSuspended: a suspended service generates no invoice. The period that opens
// while the operator has suspended the service is renewed without one (the cycle moves on), and
// the first renewal after the service resumes bills again.
func TestRenewalWhileSuspended(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org, token := newOrganization(t, env)
	clock := createClock(t, env, token, org, "2025-03-01T09:30:00Z")
	sub := createSubscription(t, env, token, org, productEinvoice, planEinvoiceGrowthMonthly)
	waitForService(t, env, token, sub.ID, "active")
	if resp := subscriptionAction(env, apitest.OperatorToken, sub.ID, "suspend", `{"reason":"Abuse review"}`); resp.Status != http.StatusOK {
		t.Fatalf("suspend: %d %s", resp.Status, resp.Body)
	}
	advance(t, env, token, clock.ID, "2025-04-15T00:00:00Z")
	wantRenewsAt(t, getSubscription(t, env, token, sub.ID), "2025-05-01T09:30:00Z")
	if invs := invoicesOf(t, env, sub.ID); len(invs) != 0 {
		t.Fatalf("%d invoices while suspended, want none", len(invs))
	}
	if n := env.Count(`SELECT count(*) FROM subscription_renewals WHERE subscription_id = $1 AND invoice_id IS NULL`, sub.ID); n != 1 {
		t.Errorf("%d renewals without invoice recorded, want April's", n)
	}

	if resp := subscriptionAction(env, apitest.OperatorToken, sub.ID, "resume", `{"reason":"Review closed"}`); resp.Status != http.StatusOK {
		t.Fatalf("resume: %d %s", resp.Status, resp.Body)
	}
	advance(t, env, token, clock.ID, "2025-05-15T00:00:00Z")
	invs := invoicesOf(t, env, sub.ID)
	if len(invs) != 1 {
		t.Fatalf("%d invoices after resuming, want May's", len(invs))
	}
	wantInvoice(t, invs[0], "2025-05-01", "2025-05-31", clockAt(t, "2025-05-01T09:30:00Z"), "recurring_fee", int64(29900))
}

// wantFieldProblem checks a 422 unprocessable answer whose field error at /frozen_time has code.
func wantFieldProblem(t testing.TB, name string, resp *apitest.Response, code string) {
	t.Helper()
	assertProblem(t, name, resp, http.StatusUnprocessableEntity, "unprocessable")
	var p struct {
		Errors []struct{ Code, Pointer string } `json:"errors"`
	}
	if err := json.Unmarshal(resp.Body, &p); err != nil || len(p.Errors) != 1 || p.Errors[0].Code != code || p.Errors[0].Pointer != "/frozen_time" {
		t.Errorf("%s: field errors %+v, want %s at /frozen_time", name, p.Errors, code)
	}
}

// TestTestClocks: who may use a clock, what an advance refuses (and that a refusal changes
// nothing), and idempotent replays of both operations.
func TestTestClocks(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, func(c *httpapi.Config) { c.ProductionTrafficEnabled = true })
	org := createOrganization(t, env, productionReadyOrganization)["id"].(string) // may have a production key
	token := apitest.OrgToken(uuid.MustParse(org))
	other, otherToken := newOrganization(t, env)
	key := func(k string) http.Header { return http.Header{"Idempotency-Key": {k}} }

	// Create, replayed with the same key: one clock.
	body := fmt.Sprintf(`{"organization_id":%q,"frozen_time":"2025-03-01T09:30:00Z"}`, org)
	first := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/test-clocks", Token: token, Body: body, Header: key("clock-1")})
	again := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/test-clocks", Token: token, Body: body, Header: key("clock-1")})
	if first.Status != http.StatusCreated || again.Status != http.StatusCreated || string(first.Body) != string(again.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("create and replay: %d %s / %d %s %v", first.Status, first.Body, again.Status, again.Body, again.Header)
	}
	clock := decode[testClock](t, first)
	if n := env.Count(`SELECT count(*) FROM test_clocks WHERE organization_id = $1`, org); n != 1 {
		t.Errorf("%d clocks", n)
	}
	if n := env.Count(`SELECT count(*) FROM audit_events WHERE resource_id = $1 AND action = 'test_clock.created'`, clock.ID); n != 1 {
		t.Errorf("%d test_clock.created audit events", n)
	}
	// A second clock for the organization: 409, nothing stored.
	assertProblem(t, "second clock", env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/test-clocks", Token: token, Body: body}), http.StatusConflict, "conflict")
	// Another organization's id: 403; its clock: 404 to read and to advance; the operator may.
	assertProblem(t, "clock for another organization", env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/test-clocks", Token: otherToken, Body: body}), http.StatusForbidden, "forbidden")
	assertProblem(t, "another's clock", env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/test-clocks/" + clock.ID, Token: otherToken}), http.StatusNotFound, "not_found")
	assertProblem(t, "advance another's clock", advanceRequest(env, otherToken, clock.ID, "2025-04-01T00:00:00Z", nil), http.StatusNotFound, "not_found")
	if resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/test-clocks/" + clock.ID, Token: apitest.OperatorToken}); resp.Status != http.StatusOK {
		t.Errorf("operator get: %d %s", resp.Status, resp.Body)
	}
	advance(t, env, apitest.OperatorToken, clock.ID, "2025-03-02T00:00:00Z")
	if n := env.Count(`SELECT count(*) FROM test_clocks WHERE organization_id = $1`, other); n != 0 {
		t.Errorf("the other organization has %d clocks", n)
	}

	// Refusals change nothing.
	for name, tc := range map[string]struct{ to, code string }{
		"backwards": {"2025-03-01T23:59:59Z", "frozen_time_before_clock"},
		"too far":   {"2030-03-02T00:00:01Z", "frozen_time_too_far"},
		"past 2100": {"2100-01-01T00:00:00Z", "frozen_time_too_far"},
	} {
		wantFieldProblem(t, name, advanceRequest(env, token, clock.ID, tc.to, nil), tc.code)
	}
	wantFieldProblem(t, "created out of range", env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/test-clocks", Token: otherToken,
		Body: fmt.Sprintf(`{"organization_id":%q,"frozen_time":"1999-12-31T23:59:59Z"}`, other)}), "frozen_time_out_of_range")
	if c := decode[testClock](t, env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/test-clocks/" + clock.ID, Token: token})); !c.FrozenTime.Equal(clockAt(t, "2025-03-02T00:00:00Z")) {
		t.Errorf("after refusals the clock is at %v", c.FrozenTime)
	}

	// An advance replayed with its key: the same answer, and the clock does not move again
	// (a later advance to the same time is allowed and takes the steps due then).
	sub := createSubscription(t, env, token, org, productEinvoice, planEinvoiceGrowthMonthly)
	waitForService(t, env, token, sub.ID, "active")
	adv := advanceRequest(env, token, clock.ID, "2025-04-05T00:00:00Z", key("advance-1"))
	replay := advanceRequest(env, token, clock.ID, "2025-04-05T00:00:00Z", key("advance-1"))
	if adv.Status != http.StatusOK || replay.Status != http.StatusOK || string(adv.Body) != string(replay.Body) || replay.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("advance and replay: %d %s / %d %s", adv.Status, adv.Body, replay.Status, replay.Body)
	}
	advance(t, env, token, clock.ID, "2025-04-05T00:00:00Z")
	if invs := invoicesOf(t, env, sub.ID); len(invs) != 1 {
		t.Errorf("%d invoices after an advance, its replay and an advance to the same time; want 1", len(invs))
	}
	if n := env.Count(`SELECT count(*) FROM audit_events WHERE resource_id = $1 AND action = 'test_clock.advanced'`, clock.ID); n != 3 {
		t.Errorf("%d test_clock.advanced audit events, want 3 (the operator's, the advance, the same-time advance)", n)
	}

	// A production key may not use clocks; a sandbox key may.
	for env_, want := range map[string]int{"production": http.StatusForbidden, "sandbox": http.StatusOK} {
		k := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: apitest.OperatorToken,
			Body: fmt.Sprintf(`{"organization_id":%q,"name":"clock","environment":%q,"scopes":["subscriptions:write","subscriptions:read"]}`, org, env_)})
		if k.Status != http.StatusCreated {
			t.Fatalf("create %s key: %d %s", env_, k.Status, k.Body)
		}
		resp := advanceRequest(env, k.JSON(t)["full_key"].(string), clock.ID, "2025-04-06T00:00:00Z", nil)
		if resp.Status != want || (want == http.StatusForbidden && !strings.Contains(string(resp.Body), `"code":"forbidden"`)) {
			t.Errorf("advance with a %s key: %d %s, want %d", env_, resp.Status, resp.Body, want)
		}
	}
}
