package httpapi_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/httpapi"
)

// keyFixture is an organization with helpers to mint keys for it. The organization is
// active and verified, so it may have production keys (core.Entitle).
type keyFixture struct {
	env   *apitest.Env
	orgID string
}

func newKeyFixture(t *testing.T, options ...func(*httpapi.Config)) *keyFixture {
	t.Helper()
	env := apitest.New(t, options...)
	org := createOrganization(t, env, productionReadyOrganization)
	return &keyFixture{env: env, orgID: org["id"].(string)}
}

// createKey creates a key with the given extra body fields and returns the response body.
func (f *keyFixture) createKey(t testing.TB, scopes []string, extra map[string]any) map[string]any {
	t.Helper()
	body := map[string]any{"organization_id": f.orgID, "name": "test key", "environment": "sandbox", "scopes": scopes}
	for k, v := range extra {
		body[k] = v
	}
	b, _ := json.Marshal(body)
	resp := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: apitest.OperatorToken, Body: string(b)})
	if resp.Status != http.StatusCreated {
		t.Fatalf("create key: status %d: %s", resp.Status, resp.Body)
	}
	return resp.JSON(t)
}

func (f *keyFixture) get(token, path string) *apitest.Response {
	return f.env.Do(apitest.Request{Method: http.MethodGet, Path: path, Token: token})
}

func TestAPIKeyLifecycle(t *testing.T) {
	t.Parallel()
	f := newKeyFixture(t)
	key := f.createKey(t, []string{"organizations:read", "api-keys:read", "api-keys:write"}, nil)
	full, secret, id := key["full_key"].(string), key["secret"].(string), key["id"].(string)
	orgPath := "/v1/organizations/" + f.orgID

	if !strings.HasPrefix(full, "sk_sandbox_") || !strings.HasSuffix(full, "_"+secret) || key["prefix"] != strings.TrimSuffix(full, "_"+secret) {
		t.Fatalf("full_key %q does not read <prefix>_<secret> (prefix %v)", full, key["prefix"])
	}
	if key["status"] != "active" || key["created_by"] != apitest.OperatorToken || key["last_used_at"] != nil {
		t.Errorf("new key: %v", key)
	}
	if n := f.env.Count("SELECT count(*) FROM api_keys WHERE strpos(row_to_json(api_keys)::text, $1) > 0", secret); n != 0 {
		t.Errorf("the secret is stored in clear")
	}

	if resp := f.get(full, orgPath); resp.Status != http.StatusOK {
		t.Fatalf("using the key: %d %s", resp.Status, resp.Body)
	}
	read := f.get(full, "/v1/api-keys/"+id)
	if read.Status != http.StatusOK || strings.Contains(string(read.Body), secret) || strings.Contains(string(read.Body), "full_key") {
		t.Fatalf("read: %d %s", read.Status, read.Body)
	}
	if read.JSON(t)["last_used_at"] == nil {
		t.Errorf("last_used_at not maintained: %s", read.Body)
	}
	list := f.get(full, "/v1/api-keys")
	if list.Status != http.StatusOK || strings.Contains(string(list.Body), secret) || strings.Contains(string(list.Body), `"secret"`) {
		t.Fatalf("list: %d %s", list.Status, list.Body)
	}

	// Rotate with a grace period: both keys work, then only the new one.
	rot := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys/" + id + "/rotate", Token: full, Body: `{"grace_period_seconds":3600}`})
	if rot.Status != http.StatusCreated {
		t.Fatalf("rotate: %d %s", rot.Status, rot.Body)
	}
	replacement := rot.JSON(t)
	newFull := replacement["full_key"].(string)
	if replacement["id"] == id || newFull == full || fmt.Sprint(replacement["scopes"]) != fmt.Sprint(key["scopes"]) {
		t.Fatalf("replacement does not carry the same settings as a new key: %v", replacement)
	}
	for _, k := range []string{full, newFull} {
		if resp := f.get(k, orgPath); resp.Status != http.StatusOK {
			t.Errorf("during the grace period a key failed: %d %s", resp.Status, resp.Body)
		}
	}
	f.env.Exec("UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1", id) // the grace period ends
	assertProblem(t, "old key after grace", f.get(full, orgPath), http.StatusUnauthorized, "unauthenticated")
	if got := f.get(newFull, "/v1/api-keys/"+id).JSON(t)["status"]; got != "expired" {
		t.Errorf("old key status = %v, want expired", got)
	}

	revoke := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys/" + replacement["id"].(string) + "/revoke", Token: newFull})
	if revoke.Status != http.StatusOK || revoke.JSON(t)["status"] != "revoked" || revoke.JSON(t)["revoked_at"] == nil {
		t.Fatalf("revoke: %d %s", revoke.Status, revoke.Body)
	}
	assertProblem(t, "revoked key", f.get(newFull, orgPath), http.StatusUnauthorized, "unauthenticated")
	again := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys/" + replacement["id"].(string) + "/revoke", Token: apitest.OperatorToken})
	if again.Status != http.StatusOK || again.JSON(t)["revoked_at"] != revoke.JSON(t)["revoked_at"] {
		t.Errorf("revoking twice must change nothing: %s", again.Body)
	}
	rotRevoked := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys/" + replacement["id"].(string) + "/rotate", Token: apitest.OperatorToken})
	assertProblem(t, "rotate revoked key", rotRevoked, http.StatusConflict, "conflict")

	if n := f.env.Count("SELECT count(*) FROM audit_events WHERE resource_type = 'api_key'"); n != 4 {
		t.Errorf("audit events for keys = %d, want 4 (created, created by rotation, rotated, revoked)", n)
	}
}

func TestAPIKeyRotateWithoutGraceExpiresAtOnce(t *testing.T) {
	t.Parallel()
	f := newKeyFixture(t)
	key := f.createKey(t, []string{"organizations:read"}, nil)
	rot := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys/" + key["id"].(string) + "/rotate", Token: apitest.OperatorToken})
	if rot.Status != http.StatusCreated {
		t.Fatalf("rotate: %d %s", rot.Status, rot.Body)
	}
	assertProblem(t, "old key", f.get(key["full_key"].(string), "/v1/organizations/"+f.orgID), http.StatusUnauthorized, "unauthenticated")
	if resp := f.get(rot.JSON(t)["full_key"].(string), "/v1/organizations/"+f.orgID); resp.Status != http.StatusOK {
		t.Errorf("replacement: %d %s", resp.Status, resp.Body)
	}
}

func TestAPIKeyExpiry(t *testing.T) {
	t.Parallel()
	f := newKeyFixture(t)
	key := f.createKey(t, []string{"organizations:read"}, map[string]any{"expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	if resp := f.get(key["full_key"].(string), "/v1/organizations/"+f.orgID); resp.Status != http.StatusOK {
		t.Fatalf("before expiry: %d %s", resp.Status, resp.Body)
	}
	f.env.Exec("UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1", key["id"])
	assertProblem(t, "expired key", f.get(key["full_key"].(string), "/v1/organizations/"+f.orgID), http.StatusUnauthorized, "unauthenticated")
}

func TestAPIKeyCreateValidation(t *testing.T) {
	t.Parallel()
	f := newKeyFixture(t)
	base := map[string]any{"organization_id": f.orgID, "name": "k", "environment": "sandbox", "scopes": []string{"usage:read"}}
	with := func(k string, v any) string {
		m := map[string]any{}
		for kk, vv := range base {
			m[kk] = vv
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	cases := []struct{ name, body, pointer string }{
		{"NoScopes", with("scopes", []string{}), "/scopes"},
		{"UnknownScope", with("scopes", []string{"usage:read", "root"}), "/scopes/1"},
		{"DuplicateScopes", with("scopes", []string{"usage:read", "usage:read"}), "/scopes"},
		{"Environment", with("environment", "staging"), "/environment"},
		{"EmptyName", with("name", ""), "/name"},
		{"MissingName", with("name", nil), "/name"},
		{"BadIP", with("allowed_ips", []string{"10.0.0.1", "not-an-ip"}), "/allowed_ips/1"},
		{"BadCIDR", with("allowed_ips", []string{"10.0.0.0/33"}), "/allowed_ips/0"},
		{"BadOrigin", with("allowed_origins", []string{"app.example.com"}), "/allowed_origins/0"},
		{"OriginWithPath", with("allowed_origins", []string{"https://app.example.com/login"}), "/allowed_origins/0"},
		{"UnknownPolicy", with("rate_limit_policy", "unlimited"), "/rate_limit_policy"},
		{"PastExpiry", with("expires_at", "2020-01-01T00:00:00Z"), "/expires_at"},
		{"BadExpiryFormat", with("expires_at", "tomorrow"), "/expires_at"},
		{"UnknownProperty", with("owner", "x"), "/owner"},
	}
	for _, tc := range cases {
		resp := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: apitest.OperatorToken, Body: tc.body})
		assertProblem(t, tc.name, resp, http.StatusBadRequest, "validation_failed")
		if !hasFieldError(resp, tc.pointer) {
			t.Errorf("%s: errors do not name %s: %s", tc.name, tc.pointer, resp.Body)
		}
	}
	unknownOrg := with("organization_id", uuid.NewString())
	assertProblem(t, "unknown organization",
		f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: apitest.OperatorToken, Body: unknownOrg}),
		http.StatusUnprocessableEntity, "unprocessable")
	if n := f.env.Count("SELECT count(*) FROM api_keys"); n != 0 {
		t.Errorf("bad input created %d keys", n)
	}
}

func TestAPIKeyTenancy(t *testing.T) {
	t.Parallel()
	f := newKeyFixture(t)
	other := createOrganization(t, f.env, minimalOrganization)["id"].(string)
	mine := f.createKey(t, []string{"api-keys:read", "api-keys:write", "organizations:read"}, nil)
	theirsBody, _ := json.Marshal(map[string]any{"organization_id": other, "name": "theirs", "environment": "sandbox", "scopes": []string{"api-keys:read"}})
	theirsResp := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: apitest.OperatorToken, Body: string(theirsBody)})
	theirs := theirsResp.JSON(t)
	token := mine["full_key"].(string)

	for _, path := range []string{"/v1/api-keys/" + theirs["id"].(string), "/v1/organizations/" + other} {
		assertProblem(t, "read "+path, f.get(token, path), http.StatusNotFound, "not_found")
	}
	for _, action := range []string{"revoke", "rotate"} {
		resp := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys/" + theirs["id"].(string) + "/" + action, Token: token})
		assertProblem(t, action+" theirs", resp, http.StatusNotFound, "not_found")
	}
	assertProblem(t, "list theirs", f.get(token, "/v1/api-keys?organization_id="+other), http.StatusForbidden, "forbidden")
	create := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: token, Body: string(theirsBody)})
	assertProblem(t, "create for them", create, http.StatusForbidden, "forbidden")

	list := f.get(token, "/v1/api-keys").JSON(t)
	items := list["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["id"] != mine["id"] {
		t.Errorf("a key lists only its organization's keys: %v", items)
	}
	if n := f.env.Count("SELECT count(*) FROM api_keys WHERE revoked_at IS NOT NULL OR replaced_by IS NOT NULL"); n != 0 {
		t.Errorf("a cross-tenant attempt changed %d keys", n)
	}
}

func TestAPIKeyCannotGrantScopesItLacks(t *testing.T) {
	t.Parallel()
	f := newKeyFixture(t)
	weak := f.createKey(t, []string{"api-keys:write"}, nil)
	body, _ := json.Marshal(map[string]any{"organization_id": f.orgID, "name": "strong", "environment": "sandbox", "scopes": []string{"api-keys:write", "organizations:write"}})
	resp := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: weak["full_key"].(string), Body: string(body)})
	assertProblem(t, "escalation", resp, http.StatusForbidden, "insufficient_scope")
	if !strings.Contains(string(resp.Body), "organizations:write") {
		t.Errorf("the problem must name the scope: %s", resp.Body)
	}
	ok, _ := json.Marshal(map[string]any{"organization_id": f.orgID, "name": "same", "environment": "sandbox", "scopes": []string{"api-keys:write"}})
	created := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: weak["full_key"].(string), Body: string(ok)})
	if created.Status != http.StatusCreated || created.JSON(t)["created_by"] != "api_key:"+weak["id"].(string) {
		t.Errorf("a key may create a key with its own scopes, named as its creator: %d %s", created.Status, created.Body)
	}
}

// TestEveryOperationEnforcesItsScopes is generated from the document: for each secured
// operation, a key holding every scope but the ones it needs is refused with 403
// insufficient_scope, and a key holding exactly one requirement gets past the scope check.
func TestEveryOperationEnforcesItsScopes(t *testing.T) {
	t.Parallel()
	f := newKeyFixture(t)
	f.env.DB.Quotas[core.QuotaAPIKeys] = 1_000 // two keys per operation, more than the default quota
	doc, err := httpapi.LoadDocument()
	if err != nil {
		t.Fatal(err)
	}
	all := allScopes(doc)
	checked := 0
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		for method, op := range item.Operations() {
			if op.Security == nil || len(*op.Security) == 0 {
				continue
			}
			needed := map[string]bool{}
			for _, req := range *op.Security {
				for _, scopes := range req {
					for _, s := range scopes {
						needed[s] = true
					}
				}
			}
			var without []string
			for _, s := range all {
				if !needed[s] {
					without = append(without, s)
				}
			}
			lacking := f.createKey(t, without, nil)["full_key"].(string)
			req := exampleRequest(t, method, path, item, op)
			req.Token = lacking
			assertProblem(t, op.OperationID+" without its scope", f.env.Do(req), http.StatusForbidden, "insufficient_scope")

			var exact []string
			for _, scopes := range (*op.Security)[0] {
				exact = append(exact, scopes...)
			}
			req.Token = f.createKey(t, exact, nil)["full_key"].(string)
			resp := f.env.Do(req)
			// The problem's code, not the body: a successful body may mention the code (request logs).
			if resp.Status == http.StatusUnauthorized || (resp.Status == http.StatusForbidden && resp.JSON(t)["code"] == "insufficient_scope") {
				t.Errorf("%s with scopes %v: %d %s", op.OperationID, exact, resp.Status, resp.Body)
			}
			checked++
		}
	}
	if checked < 40 {
		t.Errorf("checked %d operations", checked)
	}
}

// allScopes lists every scope the document declares, in order.
func allScopes(doc *openapi3.T) []string {
	all := make([]string, 0, 40)
	for s := range httpapi.ScopesOf(doc) {
		all = append(all, s)
	}
	sort.Strings(all)
	return all
}

// burstsUntilLimited sends bursts of 30 concurrent requests until one is refused with 429,
// at most 5 bursts, and returns every answer. Concurrent, so faster than the strict policy's
// refill (10 a second) however slowly a loaded machine answers each request.
func burstsUntilLimited(send func() *apitest.Response) []*apitest.Response {
	var all []*apitest.Response
	for burst := 0; burst < 5; burst++ {
		answers := make([]*apitest.Response, 30)
		var wg sync.WaitGroup
		for i := range answers {
			wg.Go(func() { answers[i] = send() })
		}
		wg.Wait()
		all = append(all, answers...)
		if slices.ContainsFunc(answers, func(r *apitest.Response) bool { return r.Status == http.StatusTooManyRequests }) {
			break
		}
	}
	return all
}

func TestAPIKeyRestrictions(t *testing.T) {
	t.Parallel()
	f := newKeyFixture(t)
	orgPath := "/v1/organizations/" + f.orgID
	read := []string{"organizations:read"}

	t.Run("AllowedIPs", func(t *testing.T) {
		elsewhere := f.createKey(t, read, map[string]any{"allowed_ips": []string{"10.0.0.0/8", "2001:db8::/32"}})
		assertProblem(t, "from loopback", f.get(elsewhere["full_key"].(string), orgPath), http.StatusForbidden, "ip_not_allowed")
		here := f.createKey(t, read, map[string]any{"allowed_ips": []string{"10.0.0.0/8", "127.0.0.1"}})
		if resp := f.get(here["full_key"].(string), orgPath); resp.Status != http.StatusOK {
			t.Errorf("allowed address refused: %d %s", resp.Status, resp.Body)
		}
	})
	t.Run("AllowedOrigins", func(t *testing.T) {
		key := f.createKey(t, read, map[string]any{"allowed_origins": []string{"https://app.example.com"}})["full_key"].(string)
		call := func(origin string) *apitest.Response {
			h := http.Header{}
			if origin != "" {
				h.Set("Origin", origin)
			}
			return f.env.Do(apitest.Request{Method: http.MethodGet, Path: orgPath, Token: key, Header: h})
		}
		assertProblem(t, "foreign origin", call("https://evil.example.com"), http.StatusForbidden, "origin_not_allowed")
		for _, origin := range []string{"", "https://app.example.com"} {
			if resp := call(origin); resp.Status != http.StatusOK {
				t.Errorf("origin %q refused: %d %s", origin, resp.Status, resp.Body)
			}
		}
	})
	t.Run("RateLimit", func(t *testing.T) {
		key := f.createKey(t, read, map[string]any{"rate_limit_policy": "strict"})["full_key"].(string)
		var limited *apitest.Response
		for _, resp := range burstsUntilLimited(func() *apitest.Response { return f.get(key, orgPath) }) {
			if resp.Status == http.StatusTooManyRequests {
				limited = resp
			} else if resp.Header.Get("RateLimit-Limit") != "20" {
				t.Fatalf("RateLimit-Limit = %q, want 20", resp.Header.Get("RateLimit-Limit"))
			}
		}
		if limited == nil {
			t.Fatal("5 bursts of 30 concurrent requests never hit the strict policy (burst 20)")
		}
		assertProblem(t, "over the limit", limited, http.StatusTooManyRequests, "rate_limited")
		if limited.Header.Get("Retry-After") == "" || limited.Header.Get("RateLimit-Remaining") != "0" {
			t.Errorf("429 headers: %v", limited.Header)
		}
	})
	t.Run("ProductionGated", func(t *testing.T) {
		prod := f.createKey(t, read, map[string]any{"environment": "production"})
		if !strings.HasPrefix(prod["full_key"].(string), "sk_production_") {
			t.Errorf("production key prefix: %v", prod["prefix"])
		}
		assertProblem(t, "production key", f.get(prod["full_key"].(string), orgPath), http.StatusForbidden, "production_gated")
	})
}

func TestProductionTrafficEnabled(t *testing.T) {
	t.Parallel()
	f := newKeyFixture(t, func(c *httpapi.Config) { c.ProductionTrafficEnabled = true })
	prod := f.createKey(t, []string{"organizations:read"}, map[string]any{"environment": "production"})
	if resp := f.get(prod["full_key"].(string), "/v1/organizations/"+f.orgID); resp.Status != http.StatusOK {
		t.Errorf("production key with production traffic enabled: %d %s", resp.Status, resp.Body)
	}
}

func TestDevelopmentTokensOffInProduction(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, func(c *httpapi.Config) { c.Development = false })
	resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/organizations/" + uuid.NewString(), Token: apitest.OperatorToken})
	assertProblem(t, "dev token in production", resp, http.StatusUnauthorized, "unauthenticated")
}

func TestOAuthToken(t *testing.T) {
	t.Parallel()
	f := newKeyFixture(t)
	key := f.createKey(t, []string{"organizations:read", "api-keys:read", "api-keys:write"}, nil)
	prefix, secret := key["prefix"].(string), key["secret"].(string)
	token := func(body string) *apitest.Response {
		return f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/oauth/token", Body: body})
	}
	jsonBody := func(fields map[string]any) string {
		b, _ := json.Marshal(fields)
		return string(b)
	}

	t.Run("NarrowedScopes", func(t *testing.T) {
		resp := token(jsonBody(map[string]any{"grant_type": "client_credentials", "client_id": prefix, "client_secret": secret, "scope": "organizations:read"}))
		if resp.Status != http.StatusOK {
			t.Fatalf("token: %d %s", resp.Status, resp.Body)
		}
		if resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("token response Cache-Control = %q", resp.Header.Get("Cache-Control"))
		}
		tok := resp.JSON(t)
		if tok["token_type"] != "Bearer" || tok["expires_in"] != 3600.0 || tok["scope"] != "organizations:read" {
			t.Errorf("token: %v", tok)
		}
		access := tok["access_token"].(string)
		if n := f.env.Count("SELECT count(*) FROM oauth_tokens WHERE strpos(row_to_json(oauth_tokens)::text, $1) > 0", access); n != 0 {
			t.Errorf("the token is stored in clear")
		}
		if r := f.get(access, "/v1/organizations/"+f.orgID); r.Status != http.StatusOK {
			t.Errorf("token with organizations:read: %d %s", r.Status, r.Body)
		}
		assertProblem(t, "token beyond its scopes", f.get(access, "/v1/api-keys"), http.StatusForbidden, "insufficient_scope")
	})
	t.Run("DefaultsToKeyScopesAndDiesWithKey", func(t *testing.T) {
		other := f.createKey(t, []string{"organizations:read", "usage:read"}, nil)
		resp := token(jsonBody(map[string]any{"grant_type": "client_credentials", "client_id": other["id"], "client_secret": other["secret"]}))
		if resp.Status != http.StatusOK || resp.JSON(t)["scope"] != "organizations:read usage:read" {
			t.Fatalf("token by key id: %d %s", resp.Status, resp.Body)
		}
		access := resp.JSON(t)["access_token"].(string)
		f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys/" + other["id"].(string) + "/revoke", Token: apitest.OperatorToken})
		assertProblem(t, "token of revoked key", f.get(access, "/v1/organizations/"+f.orgID), http.StatusUnauthorized, "unauthenticated")
		again := token(jsonBody(map[string]any{"grant_type": "client_credentials", "client_id": other["prefix"], "client_secret": other["secret"]}))
		assertProblem(t, "revoked key as client", again, http.StatusUnauthorized, "invalid_client")
	})
	t.Run("ExpiredToken", func(t *testing.T) {
		resp := token(jsonBody(map[string]any{"grant_type": "client_credentials", "client_id": prefix, "client_secret": secret}))
		access := resp.JSON(t)["access_token"].(string)
		f.env.Exec("UPDATE oauth_tokens SET expires_at = now() - interval '1 second'")
		assertProblem(t, "expired token", f.get(access, "/v1/organizations/"+f.orgID), http.StatusUnauthorized, "unauthenticated")
	})
	t.Run("FormAndBasic", func(t *testing.T) {
		form := url.Values{"grant_type": {"client_credentials"}, "client_id": {prefix}, "client_secret": {secret}}
		resp := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/oauth/token", Body: form.Encode(), ContentType: "application/x-www-form-urlencoded"})
		if resp.Status != http.StatusOK {
			t.Errorf("form: %d %s", resp.Status, resp.Body)
		}
		basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(prefix)+":"+url.QueryEscape(secret)))
		resp = f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/oauth/token", Body: "grant_type=client_credentials",
			ContentType: "application/x-www-form-urlencoded", Header: http.Header{"Authorization": {basic}}})
		if resp.Status != http.StatusOK {
			t.Errorf("basic: %d %s", resp.Status, resp.Body)
		}
		wrong := "Basic " + base64.StdEncoding.EncodeToString([]byte(prefix+":wrong"))
		resp = f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/oauth/token", Body: "grant_type=client_credentials",
			ContentType: "application/x-www-form-urlencoded", Header: http.Header{"Authorization": {wrong}}})
		assertProblem(t, "basic wrong secret", resp, http.StatusUnauthorized, "invalid_client")
		if !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic") {
			t.Errorf("401 after Basic must challenge Basic: %q", resp.Header.Get("WWW-Authenticate"))
		}
		resp = f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/oauth/token", Body: form.Encode(),
			ContentType: "application/x-www-form-urlencoded", Header: http.Header{"Authorization": {basic}}})
		assertProblem(t, "both ways", resp, http.StatusBadRequest, "invalid_request")
	})
	t.Run("GrantErrors", func(t *testing.T) {
		cases := []struct {
			name, body string
			status     int
			code       string
		}{
			{"WrongSecret", jsonBody(map[string]any{"grant_type": "client_credentials", "client_id": prefix, "client_secret": "nope"}), 401, "invalid_client"},
			{"UnknownClient", jsonBody(map[string]any{"grant_type": "client_credentials", "client_id": "sk_sandbox_unknown", "client_secret": secret}), 401, "invalid_client"},
			{"GrantType", jsonBody(map[string]any{"grant_type": "password", "client_id": prefix, "client_secret": secret}), 400, "unsupported_grant_type"},
			{"MissingSecret", jsonBody(map[string]any{"grant_type": "client_credentials", "client_id": prefix}), 400, "invalid_request"},
			{"UnknownField", jsonBody(map[string]any{"grant_type": "client_credentials", "client_id": prefix, "client_secret": secret, "audience": "x"}), 400, "invalid_request"},
			{"Malformed", `{"grant_type":`, 400, "invalid_request"},
			{"ScopeNotHeld", jsonBody(map[string]any{"grant_type": "client_credentials", "client_id": prefix, "client_secret": secret, "scope": "organizations:read usage:read"}), 400, "invalid_scope"},
			{"ScopeUnknown", jsonBody(map[string]any{"grant_type": "client_credentials", "client_id": prefix, "client_secret": secret, "scope": "everything"}), 400, "invalid_scope"},
		}
		for _, tc := range cases {
			resp := token(tc.body)
			assertProblem(t, tc.name, resp, tc.status, tc.code)
			if got := resp.JSON(t)["error"]; got != tc.code {
				t.Errorf("%s: RFC 6749 error = %v, want %s", tc.name, got, tc.code)
			}
		}
	})
}

// accessToken exchanges key (a create response) for an OAuth access token with scope, or
// with every scope of the key when scope is empty.
func (f *keyFixture) accessToken(t testing.TB, key map[string]any, scope string) string {
	t.Helper()
	fields := map[string]any{"grant_type": "client_credentials", "client_id": key["prefix"], "client_secret": key["secret"]}
	if scope != "" {
		fields["scope"] = scope
	}
	b, _ := json.Marshal(fields)
	resp := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/oauth/token", Body: string(b)})
	if resp.Status != http.StatusOK {
		t.Fatalf("token: %d %s", resp.Status, resp.Body)
	}
	return resp.JSON(t)["access_token"].(string)
}

func (f *keyFixture) keyAction(token string, key map[string]any, action string) *apitest.Response {
	return f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys/" + key["id"].(string) + "/" + action, Token: token})
}

// assertKeyUntouched checks that key is neither revoked nor replaced, and still authenticates.
func (f *keyFixture) assertKeyUntouched(t testing.TB, name string, key map[string]any) {
	t.Helper()
	if n := f.env.Count("SELECT count(*) FROM api_keys WHERE id = $1 AND revoked_at IS NULL AND replaced_by IS NULL", key["id"]); n != 1 {
		t.Errorf("%s: the key was revoked or replaced", name)
	}
	if resp := f.get(key["full_key"].(string), "/v1/organizations/"+f.orgID); resp.Status != http.StatusOK {
		t.Errorf("%s: the key no longer works: %d %s", name, resp.Status, resp.Body)
	}
}

// TestAPIKeyRotateAndRevokeHeldToTheRuleOfCreation: rotating or revoking a key needs what
// creating it needs, every scope of the key and its environment, so no credential can reach a
// key stronger than itself through rotation (issue 21, item 1).
func TestAPIKeyRotateAndRevokeHeldToTheRuleOfCreation(t *testing.T) {
	t.Parallel()
	f := newKeyFixture(t, func(c *httpapi.Config) { c.ProductionTrafficEnabled = true })
	orgPath := "/v1/organizations/" + f.orgID
	keyCount := func() int { return f.env.Count("SELECT count(*) FROM api_keys") }

	t.Run("ErrKeyWithScopesTheCallerLacks", func(t *testing.T) {
		weak := f.createKey(t, []string{"api-keys:write", "organizations:read"}, nil)
		strong := f.createKey(t, []string{"api-keys:write", "organizations:read", "organizations:write"}, nil)
		before := keyCount()
		for _, action := range []string{"rotate", "revoke"} {
			resp := f.keyAction(weak["full_key"].(string), strong, action)
			assertProblem(t, action, resp, http.StatusForbidden, "insufficient_scope")
			if !strings.Contains(string(resp.Body), "organizations:write") || strings.Contains(string(resp.Body), "sk_sandbox_") {
				t.Errorf("%s: the problem must name the missing scope and hold no key: %s", action, resp.Body)
			}
		}
		if n := keyCount(); n != before {
			t.Errorf("a refused rotation created %d keys", n-before)
		}
		f.assertKeyUntouched(t, "strong key", strong)
	})

	t.Run("ErrTokenNarrowedBelowItsKey", func(t *testing.T) {
		parent := f.createKey(t, []string{"api-keys:write", "organizations:read"}, nil)
		narrowed := f.accessToken(t, parent, "api-keys:write")
		for _, action := range []string{"rotate", "revoke"} {
			resp := f.keyAction(narrowed, parent, action)
			assertProblem(t, action+" its parent", resp, http.StatusForbidden, "insufficient_scope")
			if strings.Contains(string(resp.Body), "full_key") {
				t.Errorf("%s: a refusal carries a key: %s", action, resp.Body)
			}
		}
		f.assertKeyUntouched(t, "parent", parent)

		// With all of its key's scopes, a token may rotate it; the old key stops at once.
		full := f.accessToken(t, parent, "")
		rot := f.keyAction(full, parent, "rotate")
		if rot.Status != http.StatusCreated {
			t.Fatalf("a token holding every scope of its key rotates it: %d %s", rot.Status, rot.Body)
		}
		assertProblem(t, "rotated key, next request", f.get(parent["full_key"].(string), orgPath), http.StatusUnauthorized, "unauthenticated")
	})

	t.Run("ErrSandboxCredentialOnProductionKey", func(t *testing.T) {
		sandbox := f.createKey(t, []string{"api-keys:write", "organizations:read"}, nil)
		production := f.createKey(t, []string{"organizations:read"}, map[string]any{"environment": "production"})
		before := f.env.Count("SELECT count(*) FROM api_keys WHERE environment = 'production'")
		body, _ := json.Marshal(map[string]any{"organization_id": f.orgID, "name": "prod", "environment": "production", "scopes": []string{"organizations:read"}})
		for name, resp := range map[string]*apitest.Response{
			"create": f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: sandbox["full_key"].(string), Body: string(body)}),
			"rotate": f.keyAction(sandbox["full_key"].(string), production, "rotate"),
			"revoke": f.keyAction(sandbox["full_key"].(string), production, "revoke"),
		} {
			assertProblem(t, name, resp, http.StatusForbidden, "forbidden")
			if strings.Contains(string(resp.Body), "sk_production_") {
				t.Errorf("%s: a sandbox credential received a production key: %s", name, resp.Body)
			}
		}
		if n := f.env.Count("SELECT count(*) FROM api_keys WHERE environment = 'production'"); n != before {
			t.Errorf("production keys: %d, want %d", n, before)
		}
		f.assertKeyUntouched(t, "production key", production)
	})

	t.Run("WithinTheRule", func(t *testing.T) {
		production := f.createKey(t, []string{"api-keys:write", "organizations:read"}, map[string]any{"environment": "production"})
		body, _ := json.Marshal(map[string]any{"organization_id": f.orgID, "name": "child", "environment": "sandbox", "scopes": []string{"organizations:read"}})
		created := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: production["full_key"].(string), Body: string(body)})
		if created.Status != http.StatusCreated {
			t.Fatalf("a production key creates a sandbox key of its scopes: %d %s", created.Status, created.Body)
		}
		child := created.JSON(t)
		rot := f.keyAction(production["full_key"].(string), child, "rotate")
		if rot.Status != http.StatusCreated {
			t.Fatalf("rotating a weaker key: %d %s", rot.Status, rot.Body)
		}
		successor := rot.JSON(t)
		if revoke := f.keyAction(production["full_key"].(string), successor, "revoke"); revoke.Status != http.StatusOK {
			t.Fatalf("revoking a weaker key: %d %s", revoke.Status, revoke.Body)
		}
		assertProblem(t, "revoked key, next request", f.get(successor["full_key"].(string), orgPath), http.StatusUnauthorized, "unauthenticated")
		self := f.keyAction(production["full_key"].(string), production, "rotate")
		if self.Status != http.StatusCreated {
			t.Fatalf("a key rotates itself: %d %s", self.Status, self.Body)
		}
		assertProblem(t, "self-rotated key, next request", f.get(production["full_key"].(string), orgPath), http.StatusUnauthorized, "unauthenticated")
	})
}

// TestAPIKeyRotatedKeyHasOneSuccessor: a key in its grace period is still usable but cannot
// be rotated a second time, even by many requests at once (issue 21, item 10).
func TestAPIKeyRotatedKeyHasOneSuccessor(t *testing.T) {
	t.Parallel()
	f := newKeyFixture(t)

	key := f.createKey(t, []string{"api-keys:write", "organizations:read"}, nil)
	rotate := func(token string) *apitest.Response {
		return f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys/" + key["id"].(string) + "/rotate", Token: token, Body: `{"grace_period_seconds":3600}`})
	}
	first := rotate(key["full_key"].(string))
	if first.Status != http.StatusCreated {
		t.Fatalf("rotate: %d %s", first.Status, first.Body)
	}
	successor := first.JSON(t)["id"].(string)
	for name, token := range map[string]string{"TheKeyItself": key["full_key"].(string), "Operator": apitest.OperatorToken} {
		again := rotate(token)
		assertProblem(t, name, again, http.StatusConflict, "api_key_already_rotated")
		if !strings.Contains(string(again.Body), successor) {
			t.Errorf("%s: the problem must name the replacement %s: %s", name, successor, again.Body)
		}
	}
	if n := f.env.Count("SELECT count(*) FROM api_keys"); n != 2 {
		t.Errorf("api keys = %d, want the key and one successor", n)
	}
	if resp := f.get(key["full_key"].(string), "/v1/organizations/"+f.orgID); resp.Status != http.StatusOK {
		t.Errorf("the key still works in its grace period: %d %s", resp.Status, resp.Body)
	}

	t.Run("Concurrent", func(t *testing.T) {
		other := f.createKey(t, []string{"organizations:read"}, nil)
		keysBefore := f.env.Count("SELECT count(*) FROM api_keys")
		const n = 8
		statuses := make([]int, n)
		codes := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys/" + other["id"].(string) + "/rotate",
					Token: apitest.OperatorToken, Body: `{"grace_period_seconds":600}`})
				statuses[i] = resp.Status
				var p struct{ Code string }
				_ = json.Unmarshal(resp.Body, &p)
				codes[i] = p.Code
			}()
		}
		wg.Wait()
		created := 0
		for i := range n {
			switch {
			case statuses[i] == http.StatusCreated:
				created++
			case statuses[i] != http.StatusConflict || codes[i] != "api_key_already_rotated":
				t.Errorf("rotation %d: %d %s", i, statuses[i], codes[i])
			}
		}
		if created != 1 {
			t.Errorf("%d of %d concurrent rotations succeeded, want 1", created, n)
		}
		if c := f.env.Count("SELECT count(*) FROM api_keys"); c != keysBefore+1 {
			t.Errorf("api keys = %d after the rotations, want %d (one successor)", c, keysBefore+1)
		}
	})
}
