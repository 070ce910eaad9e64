package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
)

// platformFixture is a platform organization (a reseller) with its development token.
type platformFixture struct {
	env   *apitest.Env
	orgID string
	token string
}

func newPlatform(t *testing.T, env *apitest.Env) *platformFixture {
	t.Helper()
	org := createOrganization(t, env, orgBody(t, "organization_type", `"reseller"`))
	id := org["id"].(string)
	return &platformFixture{env: env, orgID: id, token: "dev:org:" + id}
}

func (p *platformFixture) create(t testing.TB, body string) map[string]any {
	t.Helper()
	resp := p.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/connected-businesses", Token: p.token, Body: body})
	if resp.Status != http.StatusCreated {
		t.Fatalf("create connected business: %d %s", resp.Status, resp.Body)
	}
	return resp.JSON(t)
}

func businessBody(ref string, extra map[string]any) string {
	m := map[string]any{"external_reference": ref, "display_name": "Merchant " + ref, "legal_name_en": "Merchant " + ref + " LLC"}
	for k, v := range extra {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func TestCreateConnectedBusiness(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	p := newPlatform(t, env)

	t.Run("DefaultsToBothProducts", func(t *testing.T) {
		cb := p.create(t, businessBody("m-1", nil))
		if cb["platform_organization_id"] != p.orgID || cb["lifecycle_status"] != "active" || cb["legal_name_ar"] != nil {
			t.Errorf("business: %v", cb)
		}
		resources := cb["resources"].([]any)
		caps := map[string]bool{}
		for _, r := range resources {
			m := r.(map[string]any)
			caps[m["capability_id"].(string)] = m["lifecycle_status"] == "active"
		}
		if len(resources) != 2 || !caps["einvoice.sandbox"] || !caps["address.sandbox"] {
			t.Errorf("resources: %v", resources)
		}
		if n := env.Count("SELECT count(*) FROM service_resources WHERE connected_business_id = $1", cb["id"]); n != 2 {
			t.Errorf("service resources = %d, want 2", n)
		}
	})
	t.Run("OneProduct", func(t *testing.T) {
		cb := p.create(t, businessBody("m-2", map[string]any{"products": []string{"address"}}))
		if r := cb["resources"].([]any); len(r) != 1 || r[0].(map[string]any)["capability_id"] != "address.sandbox" {
			t.Errorf("resources: %v", r)
		}
	})
	t.Run("ErrPlatformModeRequired", func(t *testing.T) {
		std := createOrganization(t, env, minimalOrganization)["id"].(string)
		for name, token := range map[string]string{"StandardCustomer": "dev:org:" + std, "Operator": apitest.OperatorToken} {
			resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/connected-businesses", Token: token, Body: businessBody("x-"+name, nil)})
			assertProblem(t, name, resp, http.StatusForbidden, "platform_mode_required")
		}
		white := createOrganization(t, env, orgBody(t, "organization_type", `"white_label_tenant"`))["id"].(string)
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/connected-businesses", Token: "dev:org:" + white, Body: businessBody("w-1", nil)})
		if resp.Status != http.StatusCreated {
			t.Errorf("white-label tenant: %d %s", resp.Status, resp.Body)
		}
	})
	t.Run("ErrDuplicateExternalReference", func(t *testing.T) {
		p.create(t, businessBody("dup", nil))
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/connected-businesses", Token: p.token, Body: businessBody("dup", nil)})
		assertProblem(t, "duplicate reference", resp, http.StatusConflict, "conflict")
	})
}

func TestCreateConnectedBusinessBounds(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	p := newPlatform(t, env)
	bounds := map[string]int{
		"external_reference": 120, "display_name": 160, "legal_name_en": 160, "legal_name_ar": 160,
		"vat_reference": 120, "commercial_registration_reference": 120, "national_address_reference": 120,
	}
	accepted := 0
	for field, max := range bounds {
		for _, n := range []int{1, max} {
			ref := fmt.Sprintf("%s-%d", field, n)
			extra := map[string]any{field: strings.Repeat("x", n)}
			if field == "external_reference" {
				ref = strings.Repeat("r", n)
				extra = nil
			}
			resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/connected-businesses", Token: p.token, Body: businessBody(ref, extra)})
			if resp.Status != http.StatusCreated {
				t.Errorf("%s of length %d: %d %s", field, n, resp.Status, resp.Body)
			}
			accepted++
		}
		for _, n := range []int{0, max + 1} {
			resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/connected-businesses", Token: p.token,
				Body: businessBody("bad-"+field, map[string]any{field: strings.Repeat("x", n)})})
			assertProblem(t, fmt.Sprintf("%s of length %d", field, n), resp, http.StatusBadRequest, "validation_failed")
			if !hasFieldError(resp, "/"+field) {
				t.Errorf("%s of length %d: errors do not name the field: %s", field, n, resp.Body)
			}
		}
	}
	bad := map[string]string{
		"NoProducts":        businessBody("p", map[string]any{"products": []string{}}),
		"DuplicateProducts": businessBody("p", map[string]any{"products": []string{"address", "address"}}),
		"UnknownProduct":    businessBody("p", map[string]any{"products": []string{"platform"}}),
		"UnknownProperty":   businessBody("p", map[string]any{"website": "https://example.com"}),
		"MissingReference":  businessBody("p", map[string]any{"external_reference": nil}),
		"NullDisplayName":   strings.Replace(businessBody("p", nil), `"display_name":"Merchant p"`, `"display_name":null`, 1),
	}
	for name, body := range bad {
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/connected-businesses", Token: p.token, Body: body})
		assertProblem(t, name, resp, http.StatusBadRequest, "validation_failed")
	}
	if n := env.Count("SELECT count(*) FROM connected_businesses"); n != accepted {
		t.Errorf("businesses = %d, want %d (only the accepted ones)", n, accepted)
	}
}

func TestListConnectedBusinessesWalksEveryItemOnce(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	p := newPlatform(t, env)
	other := newPlatform(t, env)
	other.create(t, businessBody("theirs", nil))
	const total = 7
	want := map[string]bool{}
	for i := range total {
		want[p.create(t, businessBody(fmt.Sprintf("m-%d", i), nil))["id"].(string)] = true
	}
	for limit := 1; limit <= total+1; limit++ {
		seen := map[string]int{}
		path := fmt.Sprintf("/v1/connected-businesses?limit=%d", limit)
		for pages := 0; path != ""; pages++ {
			if pages > total+1 {
				t.Fatalf("limit %d: pagination does not end", limit)
			}
			resp := env.Do(apitest.Request{Method: http.MethodGet, Path: path, Token: p.token})
			if resp.Status != http.StatusOK {
				t.Fatalf("limit %d: %d %s", limit, resp.Status, resp.Body)
			}
			page := resp.JSON(t)
			items := page["items"].([]any)
			if len(items) > limit {
				t.Fatalf("limit %d: page of %d", limit, len(items))
			}
			for _, it := range items {
				seen[it.(map[string]any)["id"].(string)]++
			}
			path = ""
			if c, ok := page["next_cursor"].(string); ok {
				path = fmt.Sprintf("/v1/connected-businesses?limit=%d&cursor=%s", limit, c)
			}
		}
		for id := range want {
			if seen[id] != 1 {
				t.Errorf("limit %d: business %s seen %d times", limit, id, seen[id])
			}
		}
		if len(seen) != total {
			t.Errorf("limit %d: saw %d businesses, want %d (another platform's must not appear)", limit, len(seen), total)
		}
	}
	for _, bad := range []string{"?limit=0", "?limit=101", "?cursor=not-a-uuid"} {
		assertProblem(t, bad, env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/connected-businesses" + bad, Token: p.token}),
			http.StatusBadRequest, "validation_failed")
	}
}

func TestUpdateConnectedBusiness(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	p := newPlatform(t, env)
	cb := p.create(t, businessBody("u-1", map[string]any{"legal_name_ar": "تاجر", "vat_reference": "300000000000003"}))
	path := "/v1/connected-businesses/" + cb["id"].(string)
	patch := func(body string) *apitest.Response {
		return env.Do(apitest.Request{Method: http.MethodPatch, Path: path, Token: p.token, Body: body})
	}

	noop := patch(`{"display_name":"Merchant u-1"}`)
	if noop.Status != http.StatusOK || noop.JSON(t)["updated_at"] != cb["updated_at"] {
		t.Errorf("a no-op patch must leave updated_at: %s (was %v)", noop.Body, cb["updated_at"])
	}
	if _, ok := noop.JSON(t)["resources"]; ok {
		t.Errorf("PATCH answers the summary, without resources: %s", noop.Body)
	}
	empty := patch(`{}`)
	if empty.Status != http.StatusOK || empty.JSON(t)["updated_at"] != cb["updated_at"] {
		t.Errorf("an empty patch must change nothing: %s", empty.Body)
	}
	time.Sleep(5 * time.Millisecond)
	changed := patch(`{"display_name":"Renamed","legal_name_ar":null,"vat_reference":"399999999900003","legal_name_en":"Renamed LLC"}`)
	got := changed.JSON(t)
	if changed.Status != http.StatusOK || got["display_name"] != "Renamed" || got["legal_name_ar"] != nil ||
		got["vat_reference"] != "399999999900003" || got["legal_name_en"] != "Renamed LLC" || got["updated_at"] == cb["updated_at"] {
		t.Fatalf("patch: %d %s", changed.Status, changed.Body)
	}
	for name, body := range map[string]string{
		"UnknownField": `{"external_reference":"new"}`, "NullDisplayName": `{"display_name":null}`,
		"EmptyName": `{"display_name":""}`, "LongVat": `{"vat_reference":"` + strings.Repeat("3", 121) + `"}`,
		"BadStatus": `{"lifecycle_status":"deleted"}`,
	} {
		assertProblem(t, name, patch(body), http.StatusBadRequest, "validation_failed")
	}
	if n := env.Count("SELECT count(*) FROM audit_events WHERE action = 'connected_business.updated'"); n != 1 {
		t.Errorf("update audit events = %d, want 1 (no-ops record nothing)", n)
	}
}

func TestConnectedBusinessLifecycleAndCredentials(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	p := newPlatform(t, env)
	cb := p.create(t, businessBody("c-1", map[string]any{"products": []string{"address"}}))
	id := cb["id"].(string)
	credPath := "/v1/connected-businesses/" + id + "/credentials"
	credential := func(body string) *apitest.Response {
		return env.Do(apitest.Request{Method: http.MethodPost, Path: credPath, Token: p.token, Body: body})
	}
	setStatus := func(status string) *apitest.Response {
		return env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v1/connected-businesses/" + id, Token: p.token,
			Body: `{"lifecycle_status":"` + status + `"}`})
	}

	resp := credential(`{"product":"address"}`)
	if resp.Status != http.StatusCreated {
		t.Fatalf("credential: %d %s", resp.Status, resp.Body)
	}
	cred := resp.JSON(t)
	resource := cb["resources"].([]any)[0].(map[string]any)["id"]
	if cred["connected_business_id"] != id || cred["service_resource_id"] != resource || cred["product"] != "address" ||
		!strings.HasPrefix(cred["full_key"].(string), cred["prefix"].(string)+"_") {
		t.Errorf("credential: %v", cred)
	}
	var name string
	_ = env.Pool.QueryRow(t.Context(), "SELECT name FROM api_keys WHERE id = $1", cred["id"]).Scan(&name)
	if name != "Connected business sandbox key" {
		t.Errorf("default credential name = %q", name)
	}
	key := cred["full_key"].(string)
	// Limited to the business's product operations: not even its platform's organization.
	assertProblem(t, "credential outside its product",
		env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/organizations/" + p.orgID, Token: key}),
		http.StatusForbidden, "insufficient_scope")

	assertProblem(t, "product not provisioned", credential(`{"product":"einvoice"}`), http.StatusUnprocessableEntity, "unprocessable")

	if r := setStatus("suspended"); r.Status != http.StatusOK || r.JSON(t)["lifecycle_status"] != "suspended" {
		t.Fatalf("suspend: %d %s", r.Status, r.Body)
	}
	if n := env.Count("SELECT count(*) FROM service_resources WHERE connected_business_id = $1 AND lifecycle_status = 'suspended'", id); n != 1 {
		t.Errorf("resources do not follow the business into suspension")
	}
	assertProblem(t, "credential of a suspended business",
		env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/organizations/" + p.orgID, Token: key}),
		http.StatusUnauthorized, "unauthenticated")
	assertProblem(t, "new credential while suspended", credential(`{"product":"address"}`), http.StatusConflict, "invalid_state_transition")

	resolve := func() *apitest.Response {
		return env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/address/resolve-short", Token: key,
			Body: `{"short_address":"RRMA1234","language":"en"}`})
	}
	assertProblem(t, "product operation while suspended", resolve(), http.StatusUnauthorized, "unauthenticated")
	setStatus("active")
	if r := resolve(); r.Status != http.StatusOK {
		t.Errorf("the credential's own product operation: %d %s", r.Status, r.Body)
	}
	assertProblem(t, "credential works again (and is still scoped)",
		env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/organizations/" + p.orgID, Token: key}),
		http.StatusForbidden, "insufficient_scope")

	if r := setStatus("closed"); r.Status != http.StatusOK {
		t.Fatalf("close: %d %s", r.Status, r.Body)
	}
	assertProblem(t, "credential of a closed business", credential(`{"product":"address"}`), http.StatusConflict, "invalid_state_transition")
	if r := setStatus("closed"); r.Status != http.StatusOK {
		t.Errorf("closing a closed business is a no-op: %d %s", r.Status, r.Body)
	}
	for name, body := range map[string]string{"NoProduct": `{}`, "Platform": `{"product":"platform"}`,
		"LongName": `{"product":"address","name":"` + strings.Repeat("n", 121) + `"}`, "EmptyName": `{"product":"address","name":""}`} {
		assertProblem(t, name, credential(body), http.StatusBadRequest, "validation_failed")
	}
}

func TestConnectedBusinessTenancy(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	mine, theirs := newPlatform(t, env), newPlatform(t, env)
	cb := theirs.create(t, businessBody("t-1", nil))
	path := "/v1/connected-businesses/" + cb["id"].(string)
	for name, req := range map[string]apitest.Request{
		"Get":        {Method: http.MethodGet, Path: path},
		"Patch":      {Method: http.MethodPatch, Path: path, Body: `{"lifecycle_status":"closed"}`},
		"Credential": {Method: http.MethodPost, Path: path + "/credentials", Body: `{"product":"address"}`},
	} {
		req.Token = mine.token
		assertProblem(t, name, env.Do(req), http.StatusNotFound, "not_found")
	}
	if n := env.Count("SELECT count(*) FROM connected_businesses WHERE lifecycle_status <> 'active'"); n != 0 {
		t.Error("a cross-tenant patch changed a business")
	}
	if n := env.Count("SELECT count(*) FROM api_keys"); n != 0 {
		t.Error("a cross-tenant credential was created")
	}
	if r := env.Do(apitest.Request{Method: http.MethodGet, Path: path, Token: apitest.OperatorToken}); r.Status != http.StatusOK {
		t.Errorf("the operator reads every business: %d", r.Status)
	}
	assertProblem(t, "unknown", env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/connected-businesses/" + uuid.NewString(), Token: mine.token}),
		http.StatusNotFound, "not_found")
}

func TestConnectedBusinessIdempotentCreate(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	sibling := env.Sibling()
	p := newPlatform(t, env)
	body := businessBody("idem-1", nil)
	var wg sync.WaitGroup
	statuses := make([]int, 50)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			target := env
			if i%2 == 0 {
				target = sibling
			}
			statuses[i] = postWithKey(target, p.token, "/v1/connected-businesses", "create-idem-1", body).Status
		}()
	}
	wg.Wait()
	for _, s := range statuses {
		if s != http.StatusCreated && s != http.StatusConflict {
			t.Errorf("status %d", s)
		}
	}
	if n := env.Count("SELECT count(*) FROM connected_businesses"); n != 1 {
		t.Fatalf("50 concurrent creates with one key made %d businesses", n)
	}
	if n := env.Count("SELECT count(*) FROM service_resources"); n != 2 {
		t.Errorf("service resources = %d, want 2", n)
	}
	replay := postWithKey(sibling, p.token, "/v1/connected-businesses", "create-idem-1", body)
	if replay.Status != http.StatusCreated || replay.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: %d %v", replay.Status, replay.Header)
	}
	assertProblem(t, "reuse", postWithKey(env, p.token, "/v1/connected-businesses", "create-idem-1", businessBody("idem-2", nil)),
		http.StatusUnprocessableEntity, "idempotency_key_reused")
}

// TestConnectedBusinessCredentialRotationKeepsItsBusiness: the replacement of a rotated
// connected-business credential inherits every binding of the key it replaces, so suspending
// or closing the business stops it at the very next request (issue 21, item 5).
func TestConnectedBusinessCredentialRotationKeepsItsBusiness(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	p := newPlatform(t, env)
	cb := p.create(t, businessBody("r-1", map[string]any{"products": []string{"address"}}))
	id := cb["id"].(string)
	resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/connected-businesses/" + id + "/credentials", Token: p.token, Body: `{"product":"address"}`})
	if resp.Status != http.StatusCreated {
		t.Fatalf("credential: %d %s", resp.Status, resp.Body)
	}
	cred := resp.JSON(t)
	// Everything a key is bound to: every column but its identity, material and history.
	bindings := func(keyID any) string {
		var b string
		if err := env.Pool.QueryRow(t.Context(), `SELECT (to_jsonb(api_keys) - '{id,prefix,secret_hash,created_at,updated_at,created_by,last_used_at,revoked_at,replaced_by}'::text[])::text
			FROM api_keys WHERE id = $1`, keyID).Scan(&b); err != nil {
			t.Fatalf("bindings of %v: %v", keyID, err)
		}
		return b
	}
	want := bindings(cred["id"])
	rotate := func(keyID any) *apitest.Response {
		return env.Do(apitest.Request{Method: http.MethodPost, Path: fmt.Sprintf("/v1/api-keys/%v/rotate", keyID), Token: p.token, Body: `{"grace_period_seconds":3600}`})
	}
	rot := rotate(cred["id"])
	if rot.Status != http.StatusCreated {
		t.Fatalf("rotate: %d %s", rot.Status, rot.Body)
	}
	successor := rot.JSON(t)
	if got := bindings(successor["id"]); got != want {
		t.Errorf("the replacement's bindings differ from the key's:\n got %s\nwant %s", got, want)
	}
	if n := env.Count("SELECT count(*) FROM api_keys WHERE id = $1 AND connected_business_id = $2 AND service_resource_id = $3",
		successor["id"], id, cred["service_resource_id"]); n != 1 {
		t.Errorf("the replacement is not bound to business %s and its resource", id)
	}

	key := successor["full_key"].(string)
	resolve := func() *apitest.Response {
		return env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/address/resolve-short", Token: key, Body: `{"short_address":"RRMA1234","language":"en"}`})
	}
	setStatus := func(status string) {
		t.Helper()
		r := env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v1/connected-businesses/" + id, Token: p.token, Body: `{"lifecycle_status":"` + status + `"}`})
		if r.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", status, r.Status, r.Body)
		}
	}
	if r := resolve(); r.Status != http.StatusOK {
		t.Fatalf("the replacement's product operation: %d %s", r.Status, r.Body)
	}
	assertProblem(t, "the replacement is still scoped to its product",
		env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/organizations/" + p.orgID, Token: key}), http.StatusForbidden, "insufficient_scope")

	setStatus("suspended")
	assertProblem(t, "replacement of a suspended business, next request", resolve(), http.StatusUnauthorized, "unauthenticated")
	assertProblem(t, "rotate while suspended", rotate(successor["id"]), http.StatusConflict, "invalid_state_transition")
	setStatus("active")
	if r := resolve(); r.Status != http.StatusOK {
		t.Errorf("resumed: %d %s", r.Status, r.Body)
	}
	setStatus("closed")
	assertProblem(t, "replacement of a closed business, next request", resolve(), http.StatusUnauthorized, "unauthenticated")
	assertProblem(t, "rotate after closing", rotate(successor["id"]), http.StatusConflict, "invalid_state_transition")
	if n := env.Count("SELECT count(*) FROM api_keys"); n != 2 {
		t.Errorf("api keys = %d, want the credential and its one replacement", n)
	}
}

// A connected-business credential is a key: a platform key grants only the product scope it
// holds, so a key without address:read cannot mint an address credential (issue 21, item 1).
func TestConnectedBusinessCredentialNeedsTheProductScope(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	p := newPlatform(t, env)
	cb := p.create(t, businessBody("s-1", map[string]any{"products": []string{"einvoice", "address"}}))
	path := "/v1/connected-businesses/" + cb["id"].(string) + "/credentials"
	body, _ := json.Marshal(map[string]any{"organization_id": p.orgID, "name": "platform", "environment": "sandbox",
		"scopes": []string{"connected-businesses:write", "invoice:generate"}})
	resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: apitest.OperatorToken, Body: string(body)})
	if resp.Status != http.StatusCreated {
		t.Fatalf("platform key: %d %s", resp.Status, resp.Body)
	}
	key := resp.JSON(t)["full_key"].(string)
	count := func() int {
		return env.Count("SELECT count(*) FROM api_keys WHERE connected_business_id = $1", cb["id"])
	}

	assertProblem(t, "address credential without address:read",
		env.Do(apitest.Request{Method: http.MethodPost, Path: path, Token: key, Body: `{"product":"address"}`}),
		http.StatusForbidden, "insufficient_scope")
	if n := count(); n != 0 {
		t.Fatalf("a refused credential was stored: %d rows", n)
	}
	if r := env.Do(apitest.Request{Method: http.MethodPost, Path: path, Token: key, Body: `{"product":"einvoice"}`}); r.Status != http.StatusCreated {
		t.Fatalf("einvoice credential with invoice:generate: %d %s", r.Status, r.Body)
	}
	if r := env.Do(apitest.Request{Method: http.MethodPost, Path: path, Token: apitest.OperatorToken, Body: `{"product":"address"}`}); r.Status != http.StatusCreated {
		t.Fatalf("the operator: %d %s", r.Status, r.Body)
	}
	if n := count(); n != 2 {
		t.Errorf("credentials stored: %d, want 2", n)
	}
}
