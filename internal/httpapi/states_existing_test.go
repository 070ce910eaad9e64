package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/provider/coreapi/internal/apitest"
)

// Reachers of the state values the API reached before issue 23 (see states_test.go): each
// drives a fresh organization there with HTTP requests only.

// call sends a request as token and returns the answer's JSON, failing unless it is want.
func call(t *testing.T, env *apitest.Env, method, path, token, body string, want int) map[string]any {
	t.Helper()
	resp := env.Do(apitest.Request{Method: method, Path: path, Token: token, Body: body})
	if resp.Status != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, resp.Status, want, resp.Body)
	}
	return resp.JSON(t)
}

// newSandboxKey creates a sandbox key of a new organization as the operator.
func newSandboxKey(t *testing.T, env *apitest.Env) map[string]any {
	t.Helper()
	org, _ := newOrganization(t, env)
	return call(t, env, http.MethodPost, "/v1/api-keys", apitest.OperatorToken,
		fmt.Sprintf(`{"organization_id":%q,"name":"reacher","environment":"sandbox","scopes":["organizations:read"]}`, org), http.StatusCreated)
}

var (
	_ = reachable("ApiKeyStatus", "active", func(t *testing.T, env *apitest.Env) map[string]any {
		return newSandboxKey(t, env)
	})
	_ = reachable("ApiKeyStatus", "revoked", func(t *testing.T, env *apitest.Env) map[string]any {
		key := newSandboxKey(t, env)
		return call(t, env, http.MethodPost, "/v1/api-keys/"+key["id"].(string)+"/revoke", apitest.OperatorToken, "", http.StatusOK)
	})
	// A key rotated without a grace period expires at once.
	_ = reachable("ApiKeyStatus", "expired", func(t *testing.T, env *apitest.Env) map[string]any {
		key := newSandboxKey(t, env)
		call(t, env, http.MethodPost, "/v1/api-keys/"+key["id"].(string)+"/rotate", apitest.OperatorToken, `{}`, http.StatusCreated)
		return call(t, env, http.MethodGet, "/v1/api-keys/"+key["id"].(string), apitest.OperatorToken, "", http.StatusOK)
	})

	_ = reachable("OnboardingStatus", "sandbox_ready", func(t *testing.T, env *apitest.Env) map[string]any {
		resp := onboard(env, apitest.OperatorToken, verifiedLogin("reacher-"+t.Name(), nil))
		if resp.Status != http.StatusCreated {
			t.Fatalf("onboard: %d %s", resp.Status, resp.Body)
		}
		return resp.JSON(t)["onboarding"].(map[string]any)
	})

	_ = reachable("WebhookEndpointStatus", "enabled", func(t *testing.T, env *apitest.Env) map[string]any {
		org, token := newOrganization(t, env)
		return createEndpoint(t, env, token, endpointBody(org, "https://hooks.example.com/reacher", "subscription.created"))
	})

	_ = reachable("PlanActivation", "active", func(t *testing.T, env *apitest.Env) map[string]any {
		return selectPlan(t, env, planEinvoiceSandbox)
	})
	_ = reachable("PlanActivation", "awaiting_payment", func(t *testing.T, env *apitest.Env) map[string]any {
		return selectPlan(t, env, planEinvoiceGrowthMonthly)
	})
	_ = reachable("BillingInvoiceStatus", "issued", func(t *testing.T, env *apitest.Env) map[string]any {
		return selectPlan(t, env, planEinvoiceGrowthMonthly)["invoice"].(map[string]any)
	})
	_ = reachable("TaxDocumentStatus", "pending", func(t *testing.T, env *apitest.Env) map[string]any {
		return selectPlan(t, env, planEinvoiceGrowthMonthly)["invoice"].(map[string]any)
	})
	_ = reachable("BillingInvoiceStatus", "void", func(t *testing.T, env *apitest.Env) map[string]any {
		_, token, sub := newSubscription(t, env)
		sel := call(t, env, http.MethodPost, "/v1/subscriptions/"+sub["id"].(string)+"/select-plan", token,
			fmt.Sprintf(`{"plan_id":%q}`, planEinvoiceGrowthMonthly), http.StatusOK)
		return call(t, env, http.MethodPost, "/v1/invoices/"+sel["invoice"].(map[string]any)["id"].(string)+"/void", token, "", http.StatusOK)
	})

	_ = reachable("SubscriptionCommercialStatus", "active", func(t *testing.T, env *apitest.Env) map[string]any {
		_, _, sub := newSubscription(t, env)
		return sub
	})
	_ = reachable("SubscriptionCommercialStatus", "cancelled", func(t *testing.T, env *apitest.Env) map[string]any {
		return subscriptionAfter(t, env, "cancel")
	})
	_ = reachable("SubscriptionBillingStatus", "current", func(t *testing.T, env *apitest.Env) map[string]any {
		_, _, sub := newSubscription(t, env)
		return sub
	})
	// A new subscription answers provisioning; the job makes it active.
	_ = reachable("SubscriptionServiceStatus", "provisioning", func(t *testing.T, env *apitest.Env) map[string]any {
		_, _, sub := newSubscription(t, env)
		return sub
	})
	_ = reachable("SubscriptionServiceStatus", "active", func(t *testing.T, env *apitest.Env) map[string]any {
		_, token, sub := newSubscription(t, env)
		waitForService(t, env, token, sub["id"].(string), "active")
		return call(t, env, http.MethodGet, "/v1/subscriptions/"+sub["id"].(string), token, "", http.StatusOK)
	})
	_ = reachable("SubscriptionServiceStatus", "suspended", func(t *testing.T, env *apitest.Env) map[string]any {
		return subscriptionAfter(t, env, "suspend")
	})
	_ = reachable("SubscriptionServiceStatus", "terminated", func(t *testing.T, env *apitest.Env) map[string]any {
		return subscriptionAfter(t, env, "terminate")
	})
)

// newSubscription subscribes a new organization to the einvoice sandbox plan and returns the
// organization, its token and the subscription as created.
func newSubscription(t *testing.T, env *apitest.Env) (org, token string, sub map[string]any) {
	t.Helper()
	org, token = newOrganization(t, env)
	sub = call(t, env, http.MethodPost, "/v1/subscriptions", token, subscriptionBody(org, productEinvoice, planEinvoiceSandbox), http.StatusCreated)
	return org, token, sub
}

// selectPlan selects plan on a new subscription and returns the selection.
func selectPlan(t *testing.T, env *apitest.Env, plan string) map[string]any {
	t.Helper()
	_, token, sub := newSubscription(t, env)
	return call(t, env, http.MethodPost, "/v1/subscriptions/"+sub["id"].(string)+"/select-plan", token,
		fmt.Sprintf(`{"plan_id":%q}`, plan), http.StatusOK)
}

// subscriptionAfter takes action on a new subscription and returns the subscription.
func subscriptionAfter(t *testing.T, env *apitest.Env, action string) map[string]any {
	t.Helper()
	_, token, sub := newSubscription(t, env)
	body := `{}`
	if action == "cancel" {
		body = "" // cancel takes no body
	}
	return call(t, env, http.MethodPost, "/v1/subscriptions/"+sub["id"].(string)+"/"+action, token, body, http.StatusOK)
}
