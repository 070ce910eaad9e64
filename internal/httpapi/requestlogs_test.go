package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
)

type requestLog struct {
	ID             string  `json:"id"`
	RequestID      string  `json:"request_id"`
	OccurredAt     string  `json:"occurred_at"`
	PrincipalType  string  `json:"principal_type"`
	OrganizationID *string `json:"organization_id"`
	KeyPrefix      *string `json:"key_prefix"`
	Method         string  `json:"method"`
	Path           string  `json:"path"`
	Route          *string `json:"route"`
	Status         int     `json:"status"`
	LatencyMs      int64   `json:"latency_ms"`
	ErrorCode      *string `json:"error_code"`
}

// requestLogs walks every page of GET /v1/request-logs with query and limit.
func requestLogs(t testing.TB, env *apitest.Env, token, query string, limit int) []requestLog {
	t.Helper()
	var all []requestLog
	cursor := ""
	for pages := 0; ; pages++ {
		q := url.Values{}
		if query != "" {
			var err error
			if q, err = url.ParseQuery(query); err != nil {
				t.Fatal(err)
			}
		}
		q.Set("limit", fmt.Sprint(limit))
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/request-logs?" + q.Encode(), Token: token})
		if resp.Status != http.StatusOK || pages > 50 {
			t.Fatalf("request logs ?%s: %d %s", q.Encode(), resp.Status, resp.Body)
		}
		var page struct {
			Items      []requestLog `json:"items"`
			NextCursor *string      `json:"next_cursor"`
		}
		if err := json.Unmarshal(resp.Body, &page); err != nil {
			t.Fatal(err)
		}
		if len(page.Items) > limit {
			t.Fatalf("%d items with limit %d", len(page.Items), limit)
		}
		all = append(all, page.Items...)
		if page.NextCursor == nil {
			return all
		}
		cursor = *page.NextCursor
	}
}

func TestRequestLogs(t *testing.T) {
	t.Parallel()
	f := newKeyFixture(t)
	key := f.createKey(t, []string{"usage:read", "support:read", "support:write"}, nil)
	full, prefix := key["full_key"].(string), key["prefix"].(string)
	other := createOrganization(t, f.env, minimalOrganization)["id"].(string)
	otherToken := apitest.OrgToken(uuid.MustParse(other))
	start := time.Now()

	// What the key does: a success, a validation failure, a missing case, a missing scope.
	calls := []struct {
		method, path, body, route string
		status                    int
		code                      string
	}{
		{"GET", "/v1/support-cases?organization_id=" + f.orgID, "", "/v1/support-cases", 200, ""},
		{"POST", "/v1/support-cases", `{"organization_id":"` + f.orgID + `"}`, "/v1/support-cases", 400, "validation_failed"},
		{"GET", "/v1/support-cases/" + uuid.NewString(), "", "/v1/support-cases/{id}", 404, "not_found"},
		{"GET", "/v1/api-keys", "", "/v1/api-keys", 403, "insufficient_scope"},
	}
	var requestIDs []string
	for _, c := range calls {
		resp := f.env.Do(apitest.Request{Method: c.method, Path: c.path, Token: full, Body: c.body})
		if resp.Status != c.status {
			t.Fatalf("%s %s: %d %s", c.method, c.path, resp.Status, resp.Body)
		}
		requestIDs = append(requestIDs, resp.Header.Get("Request-Id"))
	}
	// Not the key's: another organization's call, an unauthenticated call, and the operator's.
	f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/support-cases?organization_id=" + other, Token: otherToken})
	f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/support-cases?organization_id=" + f.orgID, Token: "sk_sandbox_nobody_x"})
	f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/organizations/" + f.orgID, Token: apitest.OperatorToken})
	f.env.FlushRequestLogs()

	logs := requestLogs(t, f.env, full, "", 2)
	if len(logs) != len(calls) {
		t.Fatalf("%d logs, want %d: %+v", len(logs), len(calls), logs)
	}
	for i, l := range logs {
		c := calls[len(calls)-1-i] // newest first
		want := requestIDs[len(calls)-1-i]
		code := ""
		if l.ErrorCode != nil {
			code = *l.ErrorCode
		}
		occurred, _ := time.Parse(time.RFC3339Nano, l.OccurredAt)
		if l.RequestID != want || l.Method != c.method || l.Path != strings.Split(c.path, "?")[0] ||
			l.Route == nil || *l.Route != c.route || l.Status != c.status || code != c.code ||
			l.PrincipalType != "organization" || l.OrganizationID == nil || *l.OrganizationID != f.orgID ||
			l.KeyPrefix == nil || *l.KeyPrefix != prefix || occurred.Before(start.Add(-time.Second)) || l.LatencyMs < 0 {
			t.Errorf("log %d = %+v, want %s %s %d %q (request %s)", i, l, c.method, c.route, c.status, c.code, want)
		}
	}
	// The first listing is itself a logged request now.
	f.env.FlushRequestLogs()
	if got := requestLogs(t, f.env, full, "path=/v1/request-logs", 200); len(got) == 0 || got[0].Status != 200 {
		t.Errorf("the listing is not logged: %+v", got)
	}

	filters := map[string]int{
		"status_class=2xx":                   0, // plus the listings, counted below
		"status_class=4xx":                   3,
		"status_class=5xx":                   0,
		"method=POST":                        1,
		"path=/v1/support-cases":             3,
		"path=/v1/support-cases/":            1,
		"path=/v1/api-keys&status_class=4xx": 1,
		"since=" + url.QueryEscape(time.Now().Add(time.Hour).Format(time.RFC3339)): 0,
		"until=" + url.QueryEscape(start.Add(-time.Hour).Format(time.RFC3339)):     0,
		"since=" + url.QueryEscape(start.Add(-time.Minute).Format(time.RFC3339)) +
			"&status_class=4xx": 3,
	}
	for q, want := range filters {
		got := requestLogs(t, f.env, full, q, 200)
		if q == "status_class=2xx" {
			for _, l := range got {
				if l.Status < 200 || l.Status > 299 {
					t.Errorf("%s: %+v", q, l)
				}
			}
			continue
		}
		if len(got) != want {
			t.Errorf("%s: %d logs, want %d: %+v", q, len(got), want, got)
		}
	}

	// Each sees only its own: the other organization its one call, the operator its own.
	if theirs := requestLogs(t, f.env, otherToken, "", 50); len(theirs) != 1 || *theirs[0].OrganizationID != other {
		t.Errorf("other organization's logs: %+v", theirs)
	}
	ops := requestLogs(t, f.env, apitest.OperatorToken, "path=/v1/organizations", 50)
	if len(ops) == 0 || ops[0].PrincipalType != "operator" || ops[0].OrganizationID != nil || ops[0].KeyPrefix != nil {
		t.Errorf("operator's own logs: %+v", ops)
	}
	if byOperator := requestLogs(t, f.env, apitest.OperatorToken, "status_class=4xx&organization_id="+f.orgID, 50); len(byOperator) != 3 {
		t.Errorf("the operator reading the organization's logs: %d", len(byOperator))
	}
	resp := f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/request-logs?organization_id=" + other, Token: full})
	assertProblem(t, "another organization's logs", resp, http.StatusForbidden, "forbidden")
	for _, q := range []string{"status_class=6xx", "method=HEAD", "path=", "limit=0", "limit=201", "since=soon"} {
		resp := f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/request-logs?" + q, Token: full})
		assertProblem(t, q, resp, http.StatusBadRequest, "validation_failed")
	}
}
