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
)

// Organization administration (issue 23): PATCH /v1/organizations/{id}, and connected
// businesses following the specification's any-to-any transition table.

func patchOrganization(env *apitest.Env, token, id, body string) *apitest.Response {
	return env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v1/organizations/" + id, Token: token, Body: body})
}

// storedRow is the row id of table as stored, to show a refusal changed nothing.
func storedRow(t testing.TB, env *apitest.Env, table, id string) string {
	t.Helper()
	var row string
	if err := env.Pool.QueryRow(t.Context(), "SELECT to_jsonb(r)::text FROM "+table+" r WHERE id = $1", id).Scan(&row); err != nil {
		t.Fatal(err)
	}
	return row
}

func organizationRow(t testing.TB, env *apitest.Env, id string) string {
	t.Helper()
	return storedRow(t, env, "organizations", id)
}

// organizationEvents returns the data of the organization.updated events of org, oldest first.
func organizationEvents(t testing.TB, env *apitest.Env, org string) []map[string]any {
	t.Helper()
	rows, err := env.Pool.Query(t.Context(), "SELECT data FROM webhook_events WHERE organization_id = $1 AND type = 'organization.updated' ORDER BY id", org)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []map[string]any
	for rows.Next() {
		var data map[string]any
		if err := rows.Scan(&data); err != nil {
			t.Fatal(err)
		}
		out = append(out, data)
	}
	return out
}

func TestUpdateOrganization_ByTheOrganization(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org := createOrganization(t, env, orgBody(t, "vat_reference", `"310123456700003"`))
	id := org["id"].(string)
	token := apitest.OrgToken(uuid.MustParse(id))

	for name, body := range map[string]string{"Empty": `{}`, "SameValues": `{"display_name":"Example","vat_reference":"310123456700003","national_address_reference":null}`} {
		resp := patchOrganization(env, token, id, body)
		if resp.Status != http.StatusOK || resp.JSON(t)["updated_at"] != org["updated_at"] {
			t.Errorf("%s: a patch that changes nothing must leave updated_at: %d %s", name, resp.Status, resp.Body)
		}
	}
	if n := env.Count("SELECT count(*) FROM audit_events WHERE action = 'organization.updated'"); n != 0 || len(organizationEvents(t, env, id)) != 0 {
		t.Errorf("a no-op patch recorded %d audit events or emitted an event", n)
	}

	time.Sleep(5 * time.Millisecond) // updated_at has microseconds: make the change visible
	resp := patchOrganization(env, token, id, `{"display_name":"Renamed","legal_name_en":"Renamed Co","legal_name_ar":"شركة جديدة",
		"vat_reference":null,"commercial_registration_reference":"1010123456","national_address_reference":"RRRD2929"}`)
	if resp.Status != http.StatusOK {
		t.Fatalf("patch: %d %s", resp.Status, resp.Body)
	}
	got := resp.JSON(t)
	if got["display_name"] != "Renamed" || got["legal_name_en"] != "Renamed Co" || got["legal_name_ar"] != "شركة جديدة" ||
		got["vat_reference"] != nil || got["commercial_registration_reference"] != "1010123456" ||
		got["national_address_reference"] != "RRRD2929" || got["updated_at"] == org["updated_at"] || got["lifecycle_status"] != "pending" {
		t.Errorf("patched organization: %s", resp.Body)
	}
	var again map[string]any
	if getJSON(t, env, token, "/v1/organizations/"+id, &again); fmt.Sprint(again) != fmt.Sprint(got) {
		t.Errorf("GET after PATCH %v, PATCH answered %v", again, got)
	}

	// Audited with before and after, by the organization.
	var actor, before, after string
	if err := env.Pool.QueryRow(t.Context(), `SELECT actor_type, before->>'display_name', after->>'display_name' FROM audit_events
		WHERE action = 'organization.updated' AND resource_id = $1`, id).Scan(&actor, &before, &after); err != nil {
		t.Fatalf("audit event: %v", err)
	}
	if actor != "organization" || before != "Example" || after != "Renamed" {
		t.Errorf("audit event: actor %s, display_name %s -> %s", actor, before, after)
	}
	// organization.updated carries the organization exactly as the API answered it.
	events := organizationEvents(t, env, id)
	if len(events) != 1 {
		t.Fatalf("%d organization.updated events, want 1", len(events))
	}
	validateEventData(t, "organization.updated", events[0])
	if fmt.Sprint(events[0]) != fmt.Sprint(got) {
		t.Errorf("event data %v, API answer %v", events[0], got)
	}

	// The statuses are the operator's: refused whatever else the body carries, even with the
	// current value, and nothing changes.
	stored := organizationRow(t, env, id)
	for field, value := range map[string]string{"lifecycle_status": "active", "verification_status": "unverified",
		"risk_status": "normal", "data_residency_policy": "unrestricted"} {
		resp := patchOrganization(env, token, id, fmt.Sprintf(`{"display_name":"Sneaky","%s":%q}`, field, value))
		assertProblem(t, field, resp, http.StatusForbidden, "forbidden")
		if !hasFieldError(resp, "/"+field) {
			t.Errorf("%s: the problem does not name the field: %s", field, resp.Body)
		}
	}
	if organizationRow(t, env, id) != stored || len(organizationEvents(t, env, id)) != 1 {
		t.Error("a refused patch changed the organization or emitted an event")
	}

	for name, body := range map[string]string{
		"UnknownField": `{"organization_type":"reseller"}`, "Country": `{"country":"AE"}`, "NullName": `{"display_name":null}`,
		"NullLegalName": `{"legal_name_ar":null}`, "EmptyName": `{"legal_name_en":""}`, "LongName": `{"display_name":"` + strings.Repeat("n", 161) + `"}`,
		"LongReference": `{"vat_reference":"` + strings.Repeat("3", 121) + `"}`, "EmptyReference": `{"national_address_reference":""}`,
		"BadStatus": `{"lifecycle_status":"deleted"}`, "NotAnObject": `[]`,
	} {
		assertProblem(t, name, patchOrganization(env, token, id, body), http.StatusBadRequest, "validation_failed")
	}
	if organizationRow(t, env, id) != stored {
		t.Error("an invalid patch changed the organization")
	}
}

func TestUpdateOrganization_ByTheOperator(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	id := createOrganization(t, env, minimalOrganization)["id"].(string)
	operator := func(body string) *apitest.Response { return patchOrganization(env, apitest.OperatorToken, id, body) }

	// A refused move names the field, from and to, and refuses the whole request.
	stored := organizationRow(t, env, id)
	resp := operator(`{"display_name":"Moved","lifecycle_status":"suspended"}`)
	assertProblem(t, "pending -> suspended", resp, http.StatusConflict, "invalid_state_transition")
	if detail := resp.JSON(t)["detail"].(string); !strings.Contains(detail, "lifecycle_status") || !strings.Contains(detail, "from pending to suspended") {
		t.Errorf("detail does not name the field, from and to: %s", detail)
	}
	assertProblem(t, "unverified -> verified", operator(`{"verification_status":"verified"}`), http.StatusConflict, "invalid_state_transition")
	if organizationRow(t, env, id) != stored {
		t.Error("a refused transition changed the organization")
	}

	// Allowed moves, several fields at once, and the operator may edit names too.
	steps := []struct{ body, field, want string }{
		{`{"lifecycle_status":"active","verification_status":"pending_review","display_name":"By operator"}`, "lifecycle_status", "active"},
		{`{"verification_status":"rejected"}`, "verification_status", "rejected"},
		{`{"verification_status":"pending_review"}`, "verification_status", "pending_review"},
		{`{"verification_status":"verified","risk_status":"suspended_risk","data_residency_policy":"unrestricted"}`, "risk_status", "suspended_risk"},
		{`{"risk_status":"normal"}`, "risk_status", "normal"},
		{`{"lifecycle_status":"suspended"}`, "lifecycle_status", "suspended"},
		{`{"lifecycle_status":"active"}`, "lifecycle_status", "active"},
		{`{"lifecycle_status":"terminated"}`, "lifecycle_status", "terminated"},
		{`{"lifecycle_status":"archived"}`, "lifecycle_status", "archived"},
	}
	for _, s := range steps {
		resp := operator(s.body)
		if resp.Status != http.StatusOK || resp.JSON(t)[s.field] != s.want {
			t.Fatalf("%s: %d %s", s.body, resp.Status, resp.Body)
		}
	}
	var got map[string]any
	getJSON(t, env, apitest.OperatorToken, "/v1/organizations/"+id, &got)
	if got["verification_status"] != "verified" || got["data_residency_policy"] != "unrestricted" || got["display_name"] != "By operator" {
		t.Errorf("after the moves: %v", got)
	}
	// archived is final; verified moves nowhere; the same value is no move.
	stored = organizationRow(t, env, id)
	for _, body := range []string{`{"lifecycle_status":"active"}`, `{"lifecycle_status":"terminated"}`, `{"verification_status":"rejected"}`} {
		assertProblem(t, body, operator(body), http.StatusConflict, "invalid_state_transition")
	}
	if r := operator(`{"lifecycle_status":"archived","verification_status":"verified"}`); r.Status != http.StatusOK || r.JSON(t)["updated_at"] != got["updated_at"] {
		t.Errorf("re-sending the current statuses is no change: %d %s", r.Status, r.Body)
	}
	if organizationRow(t, env, id) != stored {
		t.Error("a refused or empty move changed the organization")
	}
	var actors string
	_ = env.Pool.QueryRow(t.Context(), `SELECT string_agg(DISTINCT actor_type, ',') FROM audit_events WHERE action = 'organization.updated' AND resource_id = $1`, id).Scan(&actors)
	if n := env.Count(`SELECT count(*) FROM audit_events WHERE action = 'organization.updated' AND resource_id = $1`, id); n != len(steps) || actors != "operator" {
		t.Errorf("%d audit events by %q, want %d by the operator", n, actors, len(steps))
	}
	if n := len(organizationEvents(t, env, id)); n != len(steps) {
		t.Errorf("%d organization.updated events, want %d", n, len(steps))
	}
}

// TestUpdateOrganization_WhoMay: another tenant's organization is 404 and untouched; a
// connected-business credential and a key without organizations:write cannot patch their
// organization; the operator can patch any, and an unknown id is 404.
func TestUpdateOrganization_WhoMay(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	p := newPlatform(t, env)
	other := createOrganization(t, env, minimalOrganization)["id"].(string)
	stored := organizationRow(t, env, other)
	for name, body := range map[string]string{"Names": `{"display_name":"Hijacked"}`, "Empty": `{}`} {
		assertProblem(t, "another tenant's organization: "+name, patchOrganization(env, p.token, other, body), http.StatusNotFound, "not_found")
	}
	if organizationRow(t, env, other) != stored {
		t.Error("a cross-tenant patch changed the organization")
	}
	assertProblem(t, "unknown", patchOrganization(env, apitest.OperatorToken, uuid.NewString(), `{"display_name":"X"}`), http.StatusNotFound, "not_found")

	// A connected-business credential of the platform: its own scopes only.
	cb := p.create(t, businessBody("who-1", map[string]any{"products": []string{"address"}}))
	cred := businessCredential(t, env, p.token, cb["id"].(string))
	own := organizationRow(t, env, p.orgID)
	assertProblem(t, "connected-business credential", patchOrganization(env, cred, p.orgID, `{"display_name":"Mine now"}`),
		http.StatusForbidden, "insufficient_scope")
	assertProblem(t, "connected-business credential on its business",
		env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v1/connected-businesses/" + cb["id"].(string), Token: cred, Body: `{"lifecycle_status":"active"}`}),
		http.StatusForbidden, "insufficient_scope")
	// A key that may read but not write its organization.
	key := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: p.token,
		Body: fmt.Sprintf(`{"organization_id":%q,"name":"reader","environment":"sandbox","scopes":["organizations:read"]}`, p.orgID)})
	if key.Status != http.StatusCreated {
		t.Fatalf("key: %d %s", key.Status, key.Body)
	}
	assertProblem(t, "read-only key", patchOrganization(env, key.JSON(t)["full_key"].(string), p.orgID, `{"display_name":"X"}`),
		http.StatusForbidden, "insufficient_scope")
	if organizationRow(t, env, p.orgID) != own {
		t.Error("a refused credential changed its organization")
	}
}

func businessCredential(t testing.TB, env *apitest.Env, token, business string) string {
	t.Helper()
	resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/connected-businesses/" + business + "/credentials", Token: token, Body: `{"product":"address"}`})
	if resp.Status != http.StatusCreated {
		t.Fatalf("credential: %d %s", resp.Status, resp.Body)
	}
	return resp.JSON(t)["full_key"].(string)
}

// TestConnectedBusiness_Reopen: closed is not final (the specification's transition table);
// closing withdraws the credentials on the very next request, reopening gives them back on
// the very next request; the operator's closure stands against the platform. The server
// caches credentials as production does, for an hour: only the invalidation explains a refusal.
func TestConnectedBusiness_Reopen(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, apitest.WithCredentialCache(time.Hour))
	p := newPlatform(t, env)
	cb := p.create(t, businessBody("reopen-1", map[string]any{"products": []string{"address"}}))
	id := cb["id"].(string)
	cred := businessCredential(t, env, p.token, id)
	setStatus := func(token, status string) *apitest.Response {
		return env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v1/connected-businesses/" + id, Token: token,
			Body: `{"lifecycle_status":"` + status + `"}`})
	}
	resolve := func() *apitest.Response {
		return env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/address/resolve-short", Token: cred,
			Body: `{"short_address":"RRMA1234","language":"en"}`})
	}
	for range 2 { // the second from the cache
		if r := resolve(); r.Status != http.StatusOK {
			t.Fatalf("the credential before closing: %d %s", r.Status, r.Body)
		}
	}

	closed := setStatus(p.token, "closed")
	if closed.Status != http.StatusOK || closed.JSON(t)["lifecycle_status"] != "closed" {
		t.Fatalf("close: %d %s", closed.Status, closed.Body)
	}
	assertProblem(t, "credential of a closed business, next request", resolve(), http.StatusUnauthorized, "unauthenticated")

	// Re-sending the current status is a write: updated_at changes (the specification's table).
	time.Sleep(5 * time.Millisecond)
	again := setStatus(p.token, "closed")
	if again.Status != http.StatusOK || again.JSON(t)["updated_at"] == closed.JSON(t)["updated_at"] {
		t.Errorf("a PATCH carrying lifecycle_status must change updated_at: %s (was %v)", again.Body, closed.JSON(t)["updated_at"])
	}

	reopened := setStatus(p.token, "active")
	if reopened.Status != http.StatusOK || reopened.JSON(t)["lifecycle_status"] != "active" {
		t.Fatalf("reopen: %d %s", reopened.Status, reopened.Body)
	}
	if r := resolve(); r.Status != http.StatusOK {
		t.Errorf("credential of a reopened business, next request: %d %s", r.Status, r.Body)
	}
	var detail map[string]any
	getJSON(t, env, p.token, "/v1/connected-businesses/"+id, &detail)
	for _, r := range detail["resources"].([]any) {
		if s := r.(map[string]any)["lifecycle_status"]; s != "active" {
			t.Errorf("a reopened business's resource is %v", s)
		}
	}

	// The operator's closure: the platform may not reopen it (nor re-close it as its own),
	// and the credential stays refused; the operator may.
	if r := setStatus(apitest.OperatorToken, "closed"); r.Status != http.StatusOK {
		t.Fatalf("operator close: %d %s", r.Status, r.Body)
	}
	stored := storedRow(t, env, "connected_businesses", id)
	for _, status := range []string{"active", "suspended", "closed"} {
		assertProblem(t, "platform changes the operator's closure to "+status, setStatus(p.token, status), http.StatusForbidden, "forbidden")
	}
	if now := storedRow(t, env, "connected_businesses", id); now != stored {
		t.Errorf("a refused reopening changed the business: %s -> %s", stored, now)
	}
	assertProblem(t, "credential while the operator's closure stands", resolve(), http.StatusUnauthorized, "unauthenticated")
	if r := env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v1/connected-businesses/" + id, Token: p.token, Body: `{"display_name":"Still mine"}`}); r.Status != http.StatusOK {
		t.Errorf("the platform still edits the names of a business the operator closed: %d %s", r.Status, r.Body)
	}
	if r := setStatus(apitest.OperatorToken, "active"); r.Status != http.StatusOK {
		t.Fatalf("operator reopen: %d %s", r.Status, r.Body)
	}
	if r := resolve(); r.Status != http.StatusOK {
		t.Errorf("credential after the operator reopened: %d %s", r.Status, r.Body)
	}
	if r := setStatus(p.token, "suspended"); r.Status != http.StatusOK {
		t.Errorf("once active again the platform decides again: %d %s", r.Status, r.Body)
	}
	assertProblem(t, "credential of a suspended business, next request", resolve(), http.StatusUnauthorized, "unauthenticated")
	var actors []string
	rows, _ := env.Pool.Query(t.Context(), `SELECT actor_type || ':' || (after->>'lifecycle_status') FROM audit_events
		WHERE action = 'connected_business.updated' AND resource_id = $1 ORDER BY id`, id)
	for rows.Next() {
		var a string
		_ = rows.Scan(&a)
		actors = append(actors, a)
	}
	want := []string{"organization:closed", "organization:closed", "organization:active", "operator:closed", "organization:closed", "operator:active", "organization:suspended"}
	if strings.Join(actors, " ") != strings.Join(want, " ") {
		t.Errorf("audit trail %v, want %v", actors, want)
	}
}

// organizationThrough is a reacher: a new organization (pending, unverified, normal), then
// each body PATCHed by the operator in turn; it returns the last answer.
func organizationThrough(bodies ...string) stateReacher {
	return func(t *testing.T, env *apitest.Env) map[string]any {
		got := createOrganization(t, env, minimalOrganization)
		id := got["id"].(string)
		for _, body := range bodies {
			resp := patchOrganization(env, apitest.OperatorToken, id, body)
			if resp.Status != http.StatusOK {
				t.Fatalf("%s: %d %s", body, resp.Status, resp.Body)
			}
			got = resp.JSON(t)
		}
		return got
	}
}

// businessThrough is a reacher: a new business of a new platform, then each lifecycle_status
// PATCHed by the platform in turn; it returns the last answer.
func businessThrough(statuses ...string) stateReacher {
	return func(t *testing.T, env *apitest.Env) map[string]any {
		p := newPlatform(t, env)
		got := p.create(t, businessBody("reach", nil))
		for _, status := range statuses {
			body, _ := json.Marshal(map[string]string{"lifecycle_status": status})
			resp := env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v1/connected-businesses/" + got["id"].(string), Token: p.token, Body: string(body)})
			if resp.Status != http.StatusOK {
				t.Fatalf("%s: %d %s", body, resp.Status, resp.Body)
			}
			got = resp.JSON(t)
		}
		return got
	}
}

var (
	_ = reachable("OrganizationLifecycleStatus", "pending", organizationThrough())
	_ = reachable("OrganizationLifecycleStatus", "active", organizationThrough(`{"lifecycle_status":"active"}`))
	_ = reachable("OrganizationLifecycleStatus", "suspended", organizationThrough(`{"lifecycle_status":"active"}`, `{"lifecycle_status":"suspended"}`))
	_ = reachable("OrganizationLifecycleStatus", "terminated", organizationThrough(`{"lifecycle_status":"terminated"}`))
	_ = reachable("OrganizationLifecycleStatus", "archived", organizationThrough(`{"lifecycle_status":"terminated"}`, `{"lifecycle_status":"archived"}`))

	_ = reachable("OrganizationVerificationStatus", "unverified", organizationThrough())
	_ = reachable("OrganizationVerificationStatus", "pending_review", organizationThrough(`{"verification_status":"pending_review"}`))
	_ = reachable("OrganizationVerificationStatus", "verified", organizationThrough(`{"verification_status":"pending_review"}`, `{"verification_status":"verified"}`))
	_ = reachable("OrganizationVerificationStatus", "rejected", organizationThrough(`{"verification_status":"pending_review"}`, `{"verification_status":"rejected"}`))

	_ = reachable("OrganizationRiskStatus", "normal", organizationThrough(`{"risk_status":"watch"}`, `{"risk_status":"normal"}`))
	_ = reachable("OrganizationRiskStatus", "watch", organizationThrough(`{"risk_status":"watch"}`))
	_ = reachable("OrganizationRiskStatus", "restricted", organizationThrough(`{"risk_status":"restricted"}`))
	_ = reachable("OrganizationRiskStatus", "suspended_risk", organizationThrough(`{"risk_status":"suspended_risk"}`))

	_ = reachable("ConnectedBusinessLifecycleStatus", "active", businessThrough("closed", "active"))
	_ = reachable("ConnectedBusinessLifecycleStatus", "suspended", businessThrough("suspended"))
	_ = reachable("ConnectedBusinessLifecycleStatus", "closed", businessThrough("closed"))
)
