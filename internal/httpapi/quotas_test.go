package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
	"github.com/provider/coreapi/internal/core"
)

// quotaCase is one quota: how to add one more of what it bounds, how to make room again, and
// what the database holds of it (the count, and the audit trail, which a refusal leaves alone).
type quotaCase struct {
	quota core.Quota
	// setup returns the request adding one (body given a serial number) and the SQL count of
	// what the quota bounds.
	setup func(t *testing.T, env *apitest.Env) (add func(n int) apitest.Request, count string, free func(t *testing.T, created map[string]any))
}

var quotaCases = map[string]quotaCase{
	"APIKeys": {core.QuotaAPIKeys, func(t *testing.T, env *apitest.Env) (func(int) apitest.Request, string, func(*testing.T, map[string]any)) {
		org := createOrganization(t, env, minimalOrganization)["id"].(string)
		add := func(n int) apitest.Request {
			return apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: apitest.OperatorToken,
				Body: fmt.Sprintf(`{"organization_id":%q,"name":"key %d","environment":"sandbox","scopes":["address:read"]}`, org, n)}
		}
		free := func(t *testing.T, key map[string]any) {
			mustStatus(t, env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys/" + key["id"].(string) + "/revoke", Token: apitest.OperatorToken}), http.StatusOK)
		}
		return add, "SELECT count(*) FROM api_keys WHERE revoked_at IS NULL AND organization_id = '" + org + "'", free
	}},
	"WebhookEndpoints": {core.QuotaWebhookEndpoints, func(t *testing.T, env *apitest.Env) (func(int) apitest.Request, string, func(*testing.T, map[string]any)) {
		org := createOrganization(t, env, minimalOrganization)["id"].(string)
		token := apitest.OrgToken(uuid.MustParse(org))
		add := func(n int) apitest.Request {
			return apitest.Request{Method: http.MethodPost, Path: "/v1/webhook-endpoints", Token: token,
				Body: endpointBody(org, fmt.Sprintf("https://hooks.example.com/%d", n), "api_key.created")}
		}
		free := func(t *testing.T, ep map[string]any) {
			mustStatus(t, env.Do(apitest.Request{Method: http.MethodDelete, Path: "/v1/webhook-endpoints/" + ep["id"].(string), Token: token}), http.StatusNoContent)
		}
		return add, "SELECT count(*) FROM webhook_endpoints WHERE organization_id = '" + org + "'", free
	}},
	"ConnectedBusinesses": {core.QuotaConnectedBusinesses, func(t *testing.T, env *apitest.Env) (func(int) apitest.Request, string, func(*testing.T, map[string]any)) {
		p := newPlatform(t, env)
		add := func(n int) apitest.Request {
			return apitest.Request{Method: http.MethodPost, Path: "/v1/connected-businesses", Token: p.token, Body: businessBody(fmt.Sprintf("q-%d", n), nil)}
		}
		free := func(t *testing.T, cb map[string]any) {
			mustStatus(t, setLifecycle(env, p.token, cb["id"].(string), "closed"), http.StatusOK)
		}
		return add, "SELECT count(*) FROM connected_businesses WHERE lifecycle_status <> 'closed' AND organization_id = '" + p.orgID + "'", free
	}},
	"CredentialsPerBusiness": {core.QuotaCredentialsPerBusiness, func(t *testing.T, env *apitest.Env) (func(int) apitest.Request, string, func(*testing.T, map[string]any)) {
		p := newPlatform(t, env)
		id := p.create(t, businessBody("m-1", nil))["id"].(string)
		add := func(int) apitest.Request {
			return apitest.Request{Method: http.MethodPost, Path: "/v1/connected-businesses/" + id + "/credentials", Token: p.token, Body: `{"product":"address"}`}
		}
		free := func(t *testing.T, cred map[string]any) {
			mustStatus(t, env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys/" + cred["id"].(string) + "/revoke", Token: apitest.OperatorToken}), http.StatusOK)
		}
		return add, "SELECT count(*) FROM api_keys WHERE revoked_at IS NULL AND connected_business_id = '" + id + "'", free
	}},
	"OpenSupportCases": {core.QuotaOpenSupportCases, func(t *testing.T, env *apitest.Env) (func(int) apitest.Request, string, func(*testing.T, map[string]any)) {
		f := supportFixtureOn(t, env)
		add := func(n int) apitest.Request {
			return apitest.Request{Method: http.MethodPost, Path: "/v1/support-cases", Token: f.token,
				Body: withFields(t, f.minimalCase(), map[string]any{"subject": fmt.Sprintf("Case %d", n)})}
		}
		free := func(t *testing.T, c map[string]any) {
			mustStatus(t, env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/support-cases/" + c["id"].(string) + "/close", Token: f.token}), http.StatusOK)
		}
		return add, "SELECT count(*) FROM support_cases WHERE status NOT IN ('resolved', 'closed') AND organization_id = '" + f.orgID + "'", free
	}},
}

func mustStatus(t *testing.T, resp *apitest.Response, status int) {
	t.Helper()
	if resp.Status != status {
		t.Fatalf("%d, want %d: %s", resp.Status, status, resp.Body)
	}
}

func setLifecycle(env *apitest.Env, token, id, status string) *apitest.Response {
	return env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v1/connected-businesses/" + id, Token: token,
		Body: `{"lifecycle_status":"` + status + `"}`})
}

// TestQuotas fills each quota to its limit: one more is 409 quota_exceeded naming the limit, and
// changes nothing (neither the rows nor the audit trail); making room (revoking, deleting,
// closing one) lets the next through.
func TestQuotas(t *testing.T) {
	t.Parallel()
	const limit = 3
	for name, c := range quotaCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := apitest.New(t)
			env.DB.Quotas[c.quota] = limit
			add, count, free := c.setup(t, env)
			var created []map[string]any
			for n := range limit {
				resp := env.Do(add(n))
				mustStatus(t, resp, http.StatusCreated)
				created = append(created, resp.JSON(t))
			}
			audits := env.Count("SELECT count(*) FROM audit_events")
			refused := env.Do(add(limit))
			assertProblem(t, "over the quota", refused, http.StatusConflict, core.EQuotaExceeded)
			if detail := refused.JSON(t)["detail"].(string); !strings.Contains(detail, fmt.Sprintf("has %d ", limit)) || !strings.Contains(detail, fmt.Sprintf("limit of %d", limit)) {
				t.Errorf("detail %q names neither the count nor the limit", detail)
			}
			if n := env.Count(count); n != limit {
				t.Errorf("after the refusal the database holds %d, want %d", n, limit)
			}
			if n := env.Count("SELECT count(*) FROM audit_events"); n != audits {
				t.Errorf("the refusal wrote %d audit events", n-audits)
			}
			free(t, created[0])
			mustStatus(t, env.Do(add(limit+1)), http.StatusCreated)
			assertProblem(t, "full again", env.Do(add(limit+2)), http.StatusConflict, core.EQuotaExceeded)
		})
	}
}

// TestQuotasHoldUnderConcurrency sends many creates at once against a quota with room for a
// few: exactly the limit succeed, every other is quota_exceeded, and the database holds the
// limit (the count is taken with the owner's row locked).
func TestQuotasHoldUnderConcurrency(t *testing.T) {
	t.Parallel()
	const limit, attempts = 4, 16
	for name, c := range quotaCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := apitest.New(t)
			env.DB.Quotas[c.quota] = limit
			add, count, _ := c.setup(t, env)
			statuses := make([]int, attempts)
			codes := make([]string, attempts)
			var wg sync.WaitGroup
			for i := range attempts {
				wg.Go(func() {
					resp := env.Do(add(100 + i))
					statuses[i] = resp.Status
					var p struct{ Code string }
					_ = json.Unmarshal(resp.Body, &p)
					codes[i] = p.Code
				})
			}
			wg.Wait()
			created := 0
			for i, s := range statuses {
				switch {
				case s == http.StatusCreated:
					created++
				case s != http.StatusConflict || codes[i] != core.EQuotaExceeded:
					t.Errorf("attempt %d: %d %s, want 201 or 409 quota_exceeded", i, s, codes[i])
				}
			}
			if created != limit {
				t.Errorf("%d creates succeeded, want exactly %d", created, limit)
			}
			if n := env.Count(count); n != limit {
				t.Errorf("the database holds %d, want %d", n, limit)
			}
		})
	}
}

// TestQuotaReopeningAClosedBusiness: reopening a closed business counts toward the quota.
func TestQuotaReopeningAClosedBusiness(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	env.DB.Quotas[core.QuotaConnectedBusinesses] = 1
	p := newPlatform(t, env)
	first := p.create(t, businessBody("r-1", nil))["id"].(string)
	mustStatus(t, setLifecycle(env, p.token, first, "closed"), http.StatusOK)
	second := p.create(t, businessBody("r-2", nil))["id"].(string)
	assertProblem(t, "reopen over the quota", setLifecycle(env, p.token, first, "active"), http.StatusConflict, core.EQuotaExceeded)
	if n := env.Count("SELECT count(*) FROM connected_businesses WHERE id = $1 AND lifecycle_status = 'closed'", first); n != 1 {
		t.Errorf("the refused reopening changed the business")
	}
	mustStatus(t, setLifecycle(env, p.token, second, "closed"), http.StatusOK)
	mustStatus(t, setLifecycle(env, p.token, first, "active"), http.StatusOK)
}

// TestAPIKeyRestrictionListsAreBounded: at most 100 allowed_ips and 100 allowed_origins.
func TestAPIKeyRestrictionListsAreBounded(t *testing.T) {
	t.Parallel()
	f := newKeyFixture(t)
	for _, field := range []string{"allowed_ips", "allowed_origins"} {
		entries := make([]string, 101)
		for i := range entries {
			entries[i] = fmt.Sprintf("10.0.%d.%d", i/256, i%256)
			if field == "allowed_origins" {
				entries[i] = fmt.Sprintf("https://app%d.example.com", i)
			}
		}
		body, _ := json.Marshal(map[string]any{"organization_id": f.orgID, "name": "k", "environment": "sandbox",
			"scopes": []string{"address:read"}, field: entries})
		assertProblem(t, field, f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: apitest.OperatorToken, Body: string(body)}),
			http.StatusBadRequest, core.EValidation)
		f.createKey(t, []string{"address:read"}, map[string]any{field: entries[:100]})
	}
	if n := f.env.Count("SELECT count(*) FROM api_keys WHERE organization_id = $1", f.orgID); n != 2 {
		t.Errorf("keys = %d, want the 2 within the bound", n)
	}
}
