package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/provider/coreapi/internal/apitest"
)

// TestDeprecatedCatalogue checks the deprecation policy of the catalogue: a deprecated plan
// or product keeps working for the subscriptions that have it, and cannot be newly chosen.
func TestDeprecatedCatalogue(t *testing.T) {
	t.Parallel()

	t.Run("PlanKeepsItsSubscriptions", func(t *testing.T) {
		t.Parallel()
		env := apitest.New(t)
		org, token := newOrganization(t, env)
		sub := createSubscription(t, env, token, org, productEinvoice, planEinvoiceSandbox)
		waitForService(t, env, token, sub.ID, "active")
		if resp := subscriptionAction(env, token, sub.ID, "select-plan", `{"plan_id":"`+planEinvoiceSandbox+`"}`); resp.Status != http.StatusOK {
			t.Fatalf("select-plan before deprecation: %d: %s", resp.Status, resp.Body)
		}
		// The provider stops offering the plan.
		env.Exec("UPDATE plans SET status = 'deprecated' WHERE id = $1", planEinvoiceSandbox)

		got := decode[subscription](t, env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/subscriptions/" + sub.ID, Token: token}))
		if got.PlanID != planEinvoiceSandbox || got.ServiceStatus != "active" || got.CommercialStatus != "active" {
			t.Fatalf("the subscription changed with its plan's deprecation: %+v", got)
		}
		for _, step := range []struct{ token, action, body string }{
			{apitest.OperatorToken, "suspend", `{"reason":"Deprecation check"}`},
			{apitest.OperatorToken, "resume", ""},
			{token, "cancel", ""},
			{token, "reactivate", ""},
		} {
			if resp := subscriptionAction(env, step.token, sub.ID, step.action, step.body); resp.Status != http.StatusOK {
				t.Errorf("%s on a deprecated plan: %d: %s", step.action, resp.Status, resp.Body)
			}
		}
		if n := env.Count("SELECT count(*) FROM subscriptions WHERE id = $1 AND plan_id = $2", sub.ID, planEinvoiceSandbox); n != 1 {
			t.Error("the subscription left its deprecated plan without being asked to")
		}
		// Leaving for an active plan works; coming back would be a new selection.
		if resp := subscriptionAction(env, token, sub.ID, "change-plan", `{"plan_id":"`+planEinvoicePayAsYouGo+`"}`); resp.Status != http.StatusOK {
			t.Fatalf("change-plan away from a deprecated plan: %d: %s", resp.Status, resp.Body)
		}
		resp := subscriptionAction(env, token, sub.ID, "change-plan", `{"plan_id":"`+planEinvoiceSandbox+`"}`)
		assertProblem(t, "change-plan back to the deprecated plan", resp, http.StatusUnprocessableEntity, "unprocessable")
		if !hasFieldCode(t, resp, "/plan_id", "plan_not_active") {
			t.Errorf("no plan_not_active error on /plan_id: %s", resp.Body)
		}

		other, otherToken := newOrganization(t, env)
		resp = env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/subscriptions", Token: otherToken,
			Body: subscriptionBody(other, productEinvoice, planEinvoiceSandbox)})
		assertProblem(t, "new subscription to the deprecated plan", resp, http.StatusUnprocessableEntity, "unprocessable")
	})

	t.Run("ProductKeepsItsSubscriptions", func(t *testing.T) {
		t.Parallel()
		env := apitest.New(t)
		org, token := newOrganization(t, env)
		sub := createSubscription(t, env, token, org, productAddress, planAddressPreview)
		waitForService(t, env, token, sub.ID, "active")
		env.Exec("UPDATE products SET availability = 'deprecated' WHERE id = $1", productAddress)

		if resp := subscriptionAction(env, token, sub.ID, "select-plan", `{"plan_id":"`+planAddressPreview+`"}`); resp.Status != http.StatusOK {
			t.Errorf("select-plan on a subscription of a deprecated product: %d: %s", resp.Status, resp.Body)
		}
		if resp := subscriptionAction(env, token, sub.ID, "change-plan", `{"plan_id":"`+planAddressStandardTrial+`"}`); resp.Status != http.StatusOK {
			t.Errorf("change-plan on a subscription of a deprecated product: %d: %s", resp.Status, resp.Body)
		}
		if resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/address/resolve-short", Token: token,
			Body: `{"short_address":"RRRD2929","language":"en"}`}); resp.Status != http.StatusOK {
			t.Errorf("the product's operation for an existing subscriber: %d: %s", resp.Status, resp.Body)
		}

		other, otherToken := newOrganization(t, env)
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/subscriptions", Token: otherToken,
			Body: subscriptionBody(other, productAddress, planAddressPreview)})
		assertProblem(t, "new subscription to a deprecated product", resp, http.StatusUnprocessableEntity, "unprocessable")
		if !hasFieldCode(t, resp, "/product_id", "product_deprecated") {
			t.Errorf("no product_deprecated error on /product_id: %s", resp.Body)
		}
		if n := env.Count("SELECT count(*) FROM subscriptions WHERE organization_id = $1", other); n != 0 {
			t.Errorf("%d subscriptions created for a deprecated product", n)
		}
	})
}

// hasFieldCode reports whether a problem names the field at pointer with code.
func hasFieldCode(t testing.TB, resp *apitest.Response, pointer, code string) bool {
	t.Helper()
	var p struct {
		Errors []struct{ Pointer, Code string }
	}
	if err := json.Unmarshal(resp.Body, &p); err != nil {
		t.Fatalf("problem body: %v: %s", err, resp.Body)
	}
	for _, e := range p.Errors {
		if e.Pointer == pointer && e.Code == code {
			return true
		}
	}
	return false
}
