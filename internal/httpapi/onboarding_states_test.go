package httpapi_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
)

// The onboarding moves with what the organization does: active at its first successful
// product operation, completed when a charging plan is active (getOrganizationOnboarding).

var _ = reachable("OnboardingStatus", "active", func(t *testing.T, env *apitest.Env) map[string]any {
	o := newOnboarded(t, env, "reacher-"+t.Name())
	generateInvoice(t, env, o.key, invoiceBody(t, o.org, nil))
	return o.read(t, env, o.token)
})

var _ = reachable("OnboardingStatus", "completed", func(t *testing.T, env *apitest.Env) map[string]any {
	o := newOnboarded(t, env, "reacher-"+t.Name())
	generateInvoice(t, env, o.key, invoiceBody(t, o.org, nil))
	o.selectPlan(t, env, planEinvoicePayAsYouGo, "active")
	return o.read(t, env, o.token)
})

// onboarded is an organization onboarded through a verified login: its developer key (the
// product scopes only), a token of the organization with every scope, and its sandbox
// subscription.
type onboarded struct {
	org, key, token, subscription string
}

func newOnboarded(t testing.TB, env *apitest.Env, subject string) onboarded {
	t.Helper()
	resp := onboard(env, apitest.OperatorToken, verifiedLogin(subject, nil))
	if resp.Status != http.StatusCreated {
		t.Fatalf("onboard: %d %s", resp.Status, resp.Body)
	}
	got := resp.JSON(t)
	org := got["organization"].(map[string]any)["id"].(string)
	return onboarded{
		org: org, key: got["api_key_secret"].(map[string]any)["full_key"].(string),
		token: apitest.OrgToken(uuid.MustParse(org)), subscription: got["subscription"].(map[string]any)["id"].(string),
	}
}

func (o onboarded) path() string { return "/v1/organizations/" + o.org + "/onboarding" }

// read answers the onboarding as token reads it.
func (o onboarded) read(t testing.TB, env *apitest.Env, token string) map[string]any {
	t.Helper()
	resp := env.Do(apitest.Request{Method: http.MethodGet, Path: o.path(), Token: token})
	if resp.Status != http.StatusOK {
		t.Fatalf("read onboarding: %d %s", resp.Status, resp.Body)
	}
	return resp.JSON(t)
}

// selectPlan selects plan on the organization's sandbox subscription and checks the activation.
func (o onboarded) selectPlan(t testing.TB, env *apitest.Env, plan, activation string) {
	t.Helper()
	resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/subscriptions/" + o.subscription + "/select-plan", Token: o.token,
		Body: fmt.Sprintf(`{"plan_id":%q}`, plan)})
	if resp.Status != http.StatusOK || resp.JSON(t)["activation"] != activation {
		t.Fatalf("select-plan %s: %d %s, want activation %s", plan, resp.Status, resp.Body, activation)
	}
}

// expect checks the onboarding as the organization reads it and as stored.
func (o onboarded) expect(t testing.TB, env *apitest.Env, status string, steps ...string) map[string]any {
	t.Helper()
	got := o.read(t, env, o.token)
	var answered []string
	for _, s := range got["completed_steps"].([]any) {
		answered = append(answered, s.(string))
	}
	want := append([]string{"organization_created", "sandbox_provisioned", "credential_created"}, steps...)
	if got["status"] != status || !slices.Equal(answered, want) {
		t.Errorf("onboarding: status %v steps %v, want %s %v", got["status"], answered, status, want)
	}
	stored := fmt.Sprintf("%s %v", status, want)
	if n := env.Count("SELECT count(*) FROM onboardings WHERE organization_id = $1 AND status || ' [' || array_to_string(completed_steps, ' ') || ']' = $2", o.org, stored); n != 1 {
		t.Errorf("stored onboarding is not %s", stored)
	}
	return got
}

func (o onboarded) audits(env *apitest.Env, action string) int {
	return env.Count("SELECT count(*) FROM audit_events WHERE organization_id = $1 AND resource_type = 'onboarding' AND action = $2", o.org, action)
}

func TestOnboardingMovesWithWhatTheOrganizationDoes(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	o := newOnboarded(t, env, "moves")
	o.expect(t, env, "sandbox_ready")

	// A refused operation is no success: nothing moves.
	refused := env.Do(apitest.Request{Method: http.MethodPost, Path: invoicePath, Token: o.key,
		Body: invoiceBody(t, o.org, map[string]string{"line_items": `[]`})})
	if refused.Status < 400 || refused.Status >= 500 {
		t.Fatalf("invalid invoice: %d %s", refused.Status, refused.Body)
	}
	before := o.expect(t, env, "sandbox_ready")

	generateInvoice(t, env, o.key, invoiceBody(t, o.org, nil))
	active := o.expect(t, env, "active", "first_request", "first_success")
	if active["updated_at"] == before["updated_at"] {
		t.Errorf("updated_at did not change: %v", active["updated_at"])
	}
	// Later successes append nothing and leave the record alone.
	generateInvoice(t, env, o.key, invoiceBody(t, o.org, nil))
	if again := o.expect(t, env, "active", "first_request", "first_success"); again["updated_at"] != active["updated_at"] {
		t.Errorf("a second success changed the onboarding: %v", again)
	}

	// A free plan is no milestone; a charging plan awaiting payment is selected, not live.
	o.selectPlan(t, env, planEinvoiceSandbox, "active")
	o.expect(t, env, "active", "first_request", "first_success")
	o.selectPlan(t, env, planEinvoiceGrowthMonthly, "awaiting_payment")
	o.expect(t, env, "active", "first_request", "first_success", "plan_selected")
	o.selectPlan(t, env, planEinvoicePayAsYouGo, "active")
	o.expect(t, env, "completed", "first_request", "first_success", "plan_selected", "subscription_active")
	o.selectPlan(t, env, planEinvoiceGrowthAnnual, "awaiting_payment")
	o.expect(t, env, "completed", "first_request", "first_success", "plan_selected", "subscription_active")

	for action, want := range map[string]int{"onboarding.active": 1, "onboarding.step_completed": 1, "onboarding.completed": 1} {
		if n := o.audits(env, action); n != want {
			t.Errorf("%d %s audit events, want %d", n, action, want)
		}
	}
	// The operator onboarding the same login again answers the current state.
	repeat := onboard(env, apitest.OperatorToken, verifiedLogin("moves", nil))
	if repeat.Status != http.StatusOK || repeat.JSON(t)["onboarding"].(map[string]any)["status"] != "completed" {
		t.Errorf("repeat: %d %s", repeat.Status, repeat.Body)
	}
}

// An organization live commercially before its first success is completed at once; the
// success still counts as a milestone, and the status does not go back.
func TestOnboardingCompletedBeforeFirstSuccess(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	o := newOnboarded(t, env, "plan-first")
	o.selectPlan(t, env, planEinvoicePayAsYouGo, "active")
	o.expect(t, env, "completed", "plan_selected", "subscription_active")
	generateInvoice(t, env, o.key, invoiceBody(t, o.org, nil))
	o.expect(t, env, "completed", "plan_selected", "subscription_active", "first_request", "first_success")
	if n, m := o.audits(env, "onboarding.completed"), o.audits(env, "onboarding.step_completed"); n != 1 || m != 1 {
		t.Errorf("audit events: %d completed, %d step_completed", n, m)
	}
}

func TestOnboardingRead(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	o := newOnboarded(t, env, "reader")
	other := newOnboarded(t, env, "other-reader")
	plain, plainToken := newOrganization(t, env)

	mine := o.read(t, env, o.token)
	if mine["organization_id"] != o.org || mine["identity_subject"] != "reader" || mine["status"] != "sandbox_ready" {
		t.Errorf("own onboarding: %v", mine)
	}
	if byOperator := o.read(t, env, apitest.OperatorToken); byOperator["id"] != mine["id"] {
		t.Errorf("operator's read: %v", byOperator)
	}
	// Another organization's onboarding is 404 exactly like an unknown organization's; so is
	// an organization that was never onboarded through a verified login.
	for name, req := range map[string]apitest.Request{
		"another tenant's":    {Method: http.MethodGet, Path: other.path(), Token: o.token},
		"unknown":             {Method: http.MethodGet, Path: "/v1/organizations/" + uuid.NewString() + "/onboarding", Token: o.token},
		"not onboarded":       {Method: http.MethodGet, Path: "/v1/organizations/" + plain + "/onboarding", Token: plainToken},
		"not onboarded (op.)": {Method: http.MethodGet, Path: "/v1/organizations/" + plain + "/onboarding", Token: apitest.OperatorToken},
	} {
		assertProblem(t, name, env.Do(req), http.StatusNotFound, "not_found")
	}
	// The developer key has the product scopes only.
	assertProblem(t, "developer key", env.Do(apitest.Request{Method: http.MethodGet, Path: o.path(), Token: o.key}),
		http.StatusForbidden, "insufficient_scope")
	assertProblem(t, "malformed id", env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/organizations/not-an-id/onboarding", Token: o.token}),
		http.StatusBadRequest, "validation_failed")
	// Reading changes nothing.
	if n := env.Count("SELECT count(*) FROM onboardings WHERE updated_at <> created_at"); n != 0 {
		t.Errorf("%d onboardings changed by reads", n)
	}
}
