package httpapi_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/provider/coreapi/internal/apitest"
)

func TestListAuditEvents(t *testing.T) {
	t.Parallel()
	f := newKeyFixture(t)
	other := createOrganization(t, f.env, minimalOrganization)["id"].(string)
	key := f.createKey(t, []string{"audit-events:read", "organizations:read"}, nil)
	f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys/" + key["id"].(string) + "/revoke", Token: apitest.OperatorToken})
	reader := f.createKey(t, []string{"audit-events:read"}, nil)["full_key"].(string)
	list := func(token, query string) *apitest.Response {
		return f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/audit-events" + query, Token: token})
	}

	resp := list(reader, "")
	if resp.Status != http.StatusOK {
		t.Fatalf("list: %d %s", resp.Status, resp.Body)
	}
	items := resp.JSON(t)["items"].([]any)
	// organization.created, api_key.created x2, api_key.revoked: newest first.
	wantActions := []string{"api_key.created", "api_key.revoked", "api_key.created", "organization.created"}
	if len(items) != len(wantActions) {
		t.Fatalf("events: %s", resp.Body)
	}
	for i, it := range items {
		e := it.(map[string]any)
		if e["action"] != wantActions[i] || e["organization_id"] != f.orgID {
			t.Errorf("event %d: %v", i, e)
		}
	}
	revoked := items[1].(map[string]any)
	actor := revoked["actor"].(map[string]any)
	if actor["type"] != "operator" || actor["id"] != apitest.OperatorToken || revoked["before"] == nil || revoked["after"] == nil {
		t.Errorf("revocation event: %v", revoked)
	}
	if revoked["after"].(map[string]any)["revoked_at"] == nil {
		t.Errorf("the after summary lacks revoked_at: %v", revoked["after"])
	}

	byResource := list(reader, "?resource_type=api_key&resource_id="+key["id"].(string)).JSON(t)["items"].([]any)
	if len(byResource) != 2 {
		t.Errorf("events of one key: %d", len(byResource))
	}
	if got := list(reader, "?action=organization.created").JSON(t)["items"].([]any); len(got) != 1 {
		t.Errorf("by action: %d", len(got))
	}
	future := url.QueryEscape(time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	if got := list(reader, "?since="+future).JSON(t)["items"].([]any); len(got) != 0 {
		t.Errorf("since the future: %d", len(got))
	}

	// Pagination walks every event once.
	seen := map[string]bool{}
	for path := "?limit=1"; path != ""; {
		page := list(reader, path).JSON(t)
		for _, it := range page["items"].([]any) {
			id := it.(map[string]any)["id"].(string)
			if seen[id] {
				t.Fatalf("event %s seen twice", id)
			}
			seen[id] = true
		}
		path = ""
		if c, ok := page["next_cursor"].(string); ok {
			path = "?limit=1&cursor=" + c
		}
	}
	if len(seen) != 4 {
		t.Errorf("paged through %d events, want 4", len(seen))
	}

	assertProblem(t, "another organization", list(reader, "?organization_id="+other), http.StatusForbidden, "forbidden")
	if all := list(apitest.OperatorToken, "").JSON(t)["items"].([]any); len(all) != 5 {
		t.Errorf("the operator sees every organization's events: %d, want 5", len(all))
	}
	for _, bad := range []string{"?action=created", "?resource_type=planet", "?limit=201", "?since=yesterday"} {
		assertProblem(t, bad, list(reader, bad), http.StatusBadRequest, "validation_failed")
	}
	lacking := f.createKey(t, []string{"organizations:read"}, nil)["full_key"].(string)
	assertProblem(t, "without audit-events:read", list(lacking, ""), http.StatusForbidden, "insufficient_scope")
}
