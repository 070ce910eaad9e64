package httpapi_test

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
)

func verifiedLogin(subject string, fields map[string]any) string {
	body := map[string]any{
		"identity": map[string]any{"issuer": "https://id.example.com", "subject": subject, "email": "dev@example.com",
			"email_verified": true, "given_name": "Sara", "family_name": "Ali"},
		"organization": map[string]any{"legal_name_ar": "شركة المثال", "legal_name_en": "Example Co", "display_name": "Example",
			"organization_type": "standard_customer", "country": "SA"},
		"traffic_type": "sandbox_customer",
	}
	for k, v := range fields {
		body[k] = v
	}
	b, _ := json.Marshal(body)
	return string(b)
}

func onboard(env *apitest.Env, token, body string) *apitest.Response {
	return env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/onboarding/verified-logins", Token: token, Body: body})
}

func TestVerifiedLoginOnboarding(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	first := onboard(env, apitest.OperatorToken, verifiedLogin("user-1", nil))
	if first.Status != http.StatusCreated {
		t.Fatalf("onboard: %d %s", first.Status, first.Body)
	}
	got := first.JSON(t)
	org := got["organization"].(map[string]any)["id"].(string)
	secret := got["api_key_secret"].(map[string]any)
	if got["created"] != true || secret["full_key"] == "" || got["subscription"].(map[string]any)["organization_id"] != org ||
		got["resource"].(map[string]any)["capability_id"] != "einvoice.sandbox" || got["onboarding"].(map[string]any)["status"] != "sandbox_ready" {
		t.Fatalf("onboarded: %s", first.Body)
	}
	for table, want := range map[string]int{
		"organizations": 1, "subscriptions": 1, "service_resources": 1, "api_keys": 1, "onboardings": 1,
		"river_job WHERE kind = 'provision_subscription'": 1,
	} {
		if n := env.Count("SELECT count(*) FROM " + table); n != want {
			t.Errorf("%s = %d, want %d", table, n, want)
		}
	}
	if n := env.Count("SELECT count(*) FROM growth_events WHERE organization_id = $1 AND traffic_type = 'sandbox_customer' AND event_name IN ('organization_created','sandbox_provisioned','credential_created')", org); n != 3 {
		t.Errorf("growth events = %d, want 3", n)
	}
	if n := env.Count("SELECT count(*) FROM audit_events WHERE organization_id = $1", org); n < 4 {
		t.Errorf("audit events = %d, want organization, subscription, key and onboarding", n)
	}
	// The developer key works for the sandbox product, and only for it.
	key := secret["full_key"].(string)
	generateInvoice(t, env, key, invoiceBody(t, org, nil))
	assertProblem(t, "key outside its scopes", env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/organizations/" + org, Token: key}),
		http.StatusForbidden, "insufficient_scope")

	again := onboard(env, apitest.OperatorToken, verifiedLogin("user-1", map[string]any{"traffic_type": "public"}))
	if again.Status != http.StatusOK {
		t.Fatalf("repeat: %d %s", again.Status, again.Body)
	}
	repeat := again.JSON(t)
	if repeat["created"] != false || repeat["api_key_secret"] != nil || repeat["organization"].(map[string]any)["id"] != org ||
		repeat["api_key"].(map[string]any)["id"] != got["api_key"].(map[string]any)["id"] {
		t.Errorf("repeat: %s", again.Body)
	}
	if n := env.Count("SELECT count(*) FROM organizations"); n != 1 {
		t.Errorf("a repeat created organizations: %d", n)
	}
}

func TestVerifiedLoginOnboardingRace(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	sibling := env.Sibling()
	var wg sync.WaitGroup
	var mu sync.Mutex
	created, orgs := 0, map[string]bool{}
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			target := env
			if i%2 == 1 {
				target = sibling
			}
			resp := onboard(target, apitest.OperatorToken, verifiedLogin("racer", nil))
			mu.Lock()
			defer mu.Unlock()
			switch resp.Status {
			case http.StatusCreated:
				created++
			case http.StatusOK:
			default:
				t.Errorf("status %d: %s", resp.Status, resp.Body)
				return
			}
			orgs[resp.JSON(t)["organization"].(map[string]any)["id"].(string)] = true
		}()
	}
	wg.Wait()
	if created != 1 || len(orgs) != 1 {
		t.Errorf("12 racing onboardings: %d created, %d organizations", created, len(orgs))
	}
	for _, table := range []string{"organizations", "subscriptions", "api_keys", "onboardings"} {
		if n := env.Count("SELECT count(*) FROM " + table); n != 1 {
			t.Errorf("%s = %d, want 1", table, n)
		}
	}
}

func TestVerifiedLoginOnboardingRefusals(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	unverified := verifiedLogin("u", map[string]any{"identity": map[string]any{"issuer": "https://id.example.com", "subject": "u",
		"email": "dev@example.com", "email_verified": false}})
	assertProblem(t, "unverified", onboard(env, apitest.OperatorToken, unverified), http.StatusUnprocessableEntity, "unprocessable")
	assertProblem(t, "organization principal", onboard(env, apitest.OrgToken(uuid.MustParse(createOrganization(t, env, minimalOrganization)["id"].(string))), verifiedLogin("u", nil)), http.StatusForbidden, "forbidden")
	for name, body := range map[string]string{
		"NoIdentity":   `{"organization":{"legal_name_ar":"a","legal_name_en":"b","display_name":"c","organization_type":"vendor","country":"SA"}}`,
		"BadEmail":     verifiedLogin("u", map[string]any{"identity": map[string]any{"issuer": "i", "subject": "u", "email": "nope", "email_verified": true}}),
		"BadCountry":   verifiedLogin("u", map[string]any{"organization": map[string]any{"legal_name_ar": "a", "legal_name_en": "b", "display_name": "c", "organization_type": "vendor", "country": "sa"}}),
		"UnknownField": verifiedLogin("u", map[string]any{"password": "x"}),
		"BadTraffic":   verifiedLogin("u", map[string]any{"traffic_type": "bots"}),
	} {
		assertProblem(t, name, onboard(env, apitest.OperatorToken, body), http.StatusBadRequest, "validation_failed")
	}
	if n := env.Count("SELECT count(*) FROM organizations"); n != 1 { // the organization principal's own
		t.Errorf("refused onboardings created %d organizations", n-1)
	}
}
