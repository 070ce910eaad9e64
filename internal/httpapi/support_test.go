package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
)

// absent removes a field in withFields.
type absent struct{}

// withFields returns base as JSON with fields set (raw JSON strings stay raw when they are
// json.RawMessage) or removed (absent{}).
func withFields(t testing.TB, base map[string]any, fields map[string]any) string {
	t.Helper()
	m := make(map[string]any, len(base)+len(fields))
	for k, v := range base {
		m[k] = v
	}
	for k, v := range fields {
		if _, ok := v.(absent); ok {
			delete(m, k)
			continue
		}
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// supportFixture is a server with one organization whose token opens cases.
type supportFixture struct {
	env   *apitest.Env
	orgID string
	token string
}

func newSupportFixture(t *testing.T) *supportFixture {
	t.Helper()
	return supportFixtureOn(t, apitest.New(t))
}

// supportFixtureOn is a fixture with a new organization on an existing server.
func supportFixtureOn(t testing.TB, env *apitest.Env) *supportFixture {
	t.Helper()
	org := createOrganization(t, env, minimalOrganization)["id"].(string)
	return &supportFixture{env: env, orgID: org, token: apitest.OrgToken(uuid.MustParse(org))}
}

func (f *supportFixture) minimalCase() map[string]any {
	return map[string]any{
		"organization_id": f.orgID, "subject": "Invoices fail", "description": "Every invoice fails with BR-KSA-40.",
		"severity": "high", "category": "technical",
	}
}

func (f *supportFixture) create(t testing.TB, token, body string) *apitest.Response {
	t.Helper()
	return f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/support-cases", Token: token, Body: body})
}

// open creates a case with fields over the minimal body and returns it.
func (f *supportFixture) open(t testing.TB, fields map[string]any) map[string]any {
	t.Helper()
	resp := f.create(t, f.token, withFields(t, f.minimalCase(), fields))
	if resp.Status != http.StatusCreated {
		t.Fatalf("open case: %d %s", resp.Status, resp.Body)
	}
	return resp.JSON(t)
}

func TestSupportCaseCreate(t *testing.T) {
	t.Parallel()

	t.Run("OpensWithEveryField", func(t *testing.T) {
		t.Parallel()
		f := newSupportFixture(t)
		c := f.open(t, map[string]any{
			"product_id": "einvoice", "request_id": "req_123", "environment": "sandbox",
			"diagnostics": map[string]any{"sdk": "go", "retries": 3, "ratio": 0.5, "tls": true, "proxy": nil},
		})
		if c["status"] != "open" || c["assigned_team"] != "support" || c["resolved_at"] != nil || c["opened_at"] == nil ||
			c["organization_id"] != f.orgID || c["product_id"] != "einvoice" || c["resource_id"] != nil ||
			c["subject"] != "Invoices fail" || c["request_id"] != "req_123" || c["environment"] != "sandbox" {
			t.Errorf("case: %v", c)
		}
		d := c["diagnostics"].(map[string]any)
		if d["sdk"] != "go" || d["retries"] != 3.0 || d["ratio"] != 0.5 || d["tls"] != true || d["proxy"] != nil || len(d) != 5 {
			t.Errorf("diagnostics: %v", d)
		}
		if n := f.env.Count("SELECT count(*) FROM audit_events WHERE action = 'support_case.opened' AND resource_id = $1", c["id"]); n != 1 {
			t.Errorf("%d audit records of the opening", n)
		}
		read := f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/support-cases/" + c["id"].(string), Token: f.token})
		if read.Status != http.StatusOK || read.JSON(t)["diagnostics"].(map[string]any)["sdk"] != "go" {
			t.Errorf("read: %d %s", read.Status, read.Body)
		}
	})

	// Diagnostics are what an SDK gathers about a failing call, and a key or an Authorization
	// header lands there easily. The request log hides such fields by name; the case, its audit
	// record and its event (sent to the organization's webhook receivers) must not keep them
	// either.
	t.Run("DiagnosticsHoldNoSecrets", func(t *testing.T) {
		t.Parallel()
		f := newSupportFixture(t)
		const secret = "sk_sandbox_0123456789abcdef_SECRETVALUE"
		c := f.open(t, map[string]any{"diagnostics": map[string]any{
			"sdk": "go", "api_key": secret, "Authorization": "Bearer " + secret, "client_secret": secret, "pin": 1234, "password": nil,
		}})
		d := c["diagnostics"].(map[string]any)
		if d["sdk"] != "go" || d["api_key"] != "[REDACTED]" || d["Authorization"] != "[REDACTED]" || d["client_secret"] != "[REDACTED]" ||
			d["pin"] != "[REDACTED]" || d["password"] != nil || len(d) != 6 {
			t.Errorf("diagnostics: %v", d)
		}
		for _, q := range []string{
			"SELECT count(*) FROM support_cases WHERE diagnostics::text LIKE '%SECRETVALUE%'",
			"SELECT count(*) FROM audit_events WHERE after::text LIKE '%SECRETVALUE%'",
			"SELECT count(*) FROM webhook_events WHERE data::text LIKE '%SECRETVALUE%'",
		} {
			if n := f.env.Count(q); n != 0 {
				t.Errorf("%s: %d", q, n)
			}
		}
	})

	t.Run("LoneSurrogateInDiagnostics", func(t *testing.T) {
		t.Parallel()
		f := newSupportFixture(t)
		body := strings.Replace(withFields(t, f.minimalCase(), map[string]any{"diagnostics": map[string]any{"sdk": "SDK"}}),
			`"SDK"`, `"go\ud800"`, 1)
		resp := f.create(t, f.token, body)
		if resp.Status != http.StatusCreated {
			t.Fatalf("%d %s", resp.Status, resp.Body)
		}
		if d := resp.JSON(t)["diagnostics"].(map[string]any); d["sdk"] != "go\ufffd" {
			t.Errorf("diagnostics: %q", d)
		}
	})

	t.Run("RoutesByCategoryAndSeverity", func(t *testing.T) {
		t.Parallel()
		f := newSupportFixture(t)
		teams := map[string]string{
			"billing": "billing", "technical": "support", "account": "support", "other": "support", "provisioning": "provider_ops",
		}
		for category, team := range teams {
			for _, severity := range []string{"low", "medium", "high", "critical"} {
				want := team
				if severity == "critical" {
					want = "provider_ops"
				}
				c := f.open(t, map[string]any{"category": category, "severity": severity})
				if c["assigned_team"] != want || c["severity"] != severity || c["category"] != category {
					t.Errorf("%s/%s: assigned_team %v, want %s", category, severity, c["assigned_team"], want)
				}
			}
		}
	})

	t.Run("Bounds", func(t *testing.T) {
		t.Parallel()
		f := newSupportFixture(t)
		n := strings.Repeat
		cases := []struct {
			field string
			value any
			ok    bool
		}{
			{"subject", n("s", 3), true}, {"subject", n("s", 160), true},
			{"subject", n("s", 2), false}, {"subject", n("s", 161), false},
			{"description", n("d", 10), true}, {"description", n("d", 8000), true},
			{"description", n("d", 9), false}, {"description", n("d", 8001), false},
			{"request_id", n("r", 1), true}, {"request_id", n("r", 200), true}, {"request_id", nil, true},
			{"request_id", "", false}, {"request_id", n("r", 201), false},
			{"environment", n("e", 1), true}, {"environment", n("e", 80), true}, {"environment", nil, true},
			{"environment", "", false}, {"environment", n("e", 81), false},
			{"product_id", nil, true}, {"product_id", "", false},
			{"resource_id", nil, true}, {"resource_id", "", false},
			{"organization_id", "", false},
			{"severity", "urgent", false}, {"category", "sales", false},
			{"diagnostics", map[string]any{}, true},
			{"diagnostics", map[string]any{"nested": map[string]any{"a": 1}}, false},
			{"diagnostics", map[string]any{"list": []int{1}}, false},
			{"diagnostics", []any{}, false},
			{"diagnostics", "flat", false},
			{"unknown", "x", false},
		}
		for _, field := range []string{"organization_id", "subject", "description", "severity", "category"} {
			cases = append(cases, struct {
				field string
				value any
				ok    bool
			}{field, absent{}, false})
		}
		for _, c := range cases {
			name := fmt.Sprintf("%s=%.20v", c.field, c.value)
			resp := f.create(t, f.token, withFields(t, f.minimalCase(), map[string]any{c.field: c.value}))
			switch {
			case c.ok && resp.Status != http.StatusCreated:
				t.Errorf("%s: %d %s, want 201", name, resp.Status, resp.Body)
			case !c.ok:
				assertProblem(t, name, resp, http.StatusBadRequest, "validation_failed")
			}
		}
		for _, severity := range []string{"low", "medium", "high", "critical"} {
			f.open(t, map[string]any{"severity": severity})
		}
		for _, category := range []string{"billing", "technical", "account", "provisioning", "other"} {
			f.open(t, map[string]any{"category": category})
		}
	})

	t.Run("ProductAndResourceMustBelongToTheCaller", func(t *testing.T) {
		t.Parallel()
		f := newSupportFixture(t)
		other := createOrganization(t, f.env, minimalOrganization)["id"].(string)
		keyOf := func(org string) string {
			body := fmt.Sprintf(`{"organization_id":%q,"name":"k","environment":"sandbox","scopes":["support:read"]}`, org)
			resp := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: apitest.OperatorToken, Body: body})
			if resp.Status != http.StatusCreated {
				t.Fatalf("create key: %d %s", resp.Status, resp.Body)
			}
			return resp.JSON(t)["id"].(string)
		}
		own, theirs := keyOf(f.orgID), keyOf(other)
		for _, product := range []string{"einvoice", "address", "platform"} {
			f.open(t, map[string]any{"product_id": product})
		}
		if c := f.open(t, map[string]any{"resource_id": own}); c["resource_id"] != own {
			t.Errorf("resource_id = %v", c["resource_id"])
		}
		for name, fields := range map[string]map[string]any{
			"unknown product":          {"product_id": "payroll"},
			"resource not an id":       {"resource_id": "my-server"},
			"resource that is nothing": {"resource_id": uuid.NewString()},
			"another tenant's key":     {"resource_id": theirs},
		} {
			resp := f.create(t, f.token, withFields(t, f.minimalCase(), fields))
			assertProblem(t, name, resp, http.StatusUnprocessableEntity, "unprocessable")
		}
		resp := f.create(t, apitest.OperatorToken, withFields(t, f.minimalCase(), map[string]any{"organization_id": uuid.NewString()}))
		assertProblem(t, "operator, unknown organization", resp, http.StatusUnprocessableEntity, "unprocessable")
		if n := f.env.Count("SELECT count(*) FROM support_cases WHERE resource_id = $1 OR product_id = 'payroll'", theirs); n != 0 {
			t.Errorf("%d refused cases stored", n)
		}
	})
}

func TestSupportCaseClose(t *testing.T) {
	t.Parallel()
	f := newSupportFixture(t)
	c := f.open(t, nil)
	path := "/v1/support-cases/" + c["id"].(string) + "/close"
	resp := f.env.Do(apitest.Request{Method: http.MethodPost, Path: path, Token: f.token})
	if resp.Status != http.StatusOK {
		t.Fatalf("close: %d %s", resp.Status, resp.Body)
	}
	closed := resp.JSON(t)
	if closed["status"] != "closed" || closed["resolved_at"] == nil || closed["updated_at"] == c["updated_at"] ||
		closed["opened_at"] != c["opened_at"] || closed["assigned_team"] != c["assigned_team"] {
		t.Errorf("closed: %v", closed)
	}
	assertProblem(t, "close twice", f.env.Do(apitest.Request{Method: http.MethodPost, Path: path, Token: f.token}),
		http.StatusConflict, "invalid_state_transition")
	if n := f.env.Count("SELECT count(*) FROM audit_events WHERE action = 'support_case.closed' AND resource_id = $1", c["id"]); n != 1 {
		t.Errorf("%d audit records of the closing, want 1", n)
	}

	// A case resolved before it is closed keeps its resolution time.
	resolved := f.reach(t, "resolved")
	resp = f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/support-cases/" + resolved["id"].(string) + "/close", Token: f.token})
	if resp.Status != http.StatusOK || resp.JSON(t)["resolved_at"] != resolved["resolved_at"] {
		t.Errorf("close a case resolved at %v: %d %s", resolved["resolved_at"], resp.Status, resp.Body)
	}
	assertProblem(t, "close a body", f.env.Do(apitest.Request{Method: http.MethodPost, Path: path, Token: f.token, Body: `{}`}),
		http.StatusBadRequest, "validation_failed")
}

func TestSupportCaseList(t *testing.T) {
	t.Parallel()
	f := newSupportFixture(t)
	var ids []string
	closed := map[string]bool{}
	for i := range 7 {
		id := f.open(t, nil)["id"].(string)
		ids = append(ids, id)
		if i%3 == 0 {
			f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/support-cases/" + id + "/close", Token: f.token})
			closed[id] = true
		}
	}
	list := func(query string) *apitest.Response {
		return f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/support-cases?organization_id=" + f.orgID + query, Token: f.token})
	}
	walk := func(query string, limit int) []string {
		var got []string
		for _, it := range walkPages(t, f.env, f.token, "/v1/support-cases?organization_id="+f.orgID+query, limit) {
			got = append(got, it["id"].(string))
		}
		return got
	}
	for _, limit := range []int{1, 2, 3, 7, 200} {
		if got := walk("", limit); strings.Join(got, ",") != strings.Join(ids, ",") {
			t.Errorf("limit %d: walked %v, want every case once in creation order %v", limit, got, ids)
		}
	}
	var wantClosed, wantOpen []string
	for _, id := range ids {
		if closed[id] {
			wantClosed = append(wantClosed, id)
		} else {
			wantOpen = append(wantOpen, id)
		}
	}
	if got := walk("&status=closed", 2); strings.Join(got, ",") != strings.Join(wantClosed, ",") {
		t.Errorf("closed: %v, want %v", got, wantClosed)
	}
	if got := walk("&status=open", 2); strings.Join(got, ",") != strings.Join(wantOpen, ",") {
		t.Errorf("open: %v, want %v", got, wantOpen)
	}
	if got := walk("&status=in_progress", 2); len(got) != 0 {
		t.Errorf("in_progress: %v", got)
	}
	if resp := list(""); resp.Status != http.StatusOK || len(resp.JSON(t)["items"].([]any)) != 7 {
		t.Errorf("default limit: %d %s", resp.Status, resp.Body)
	}
	for _, q := range []string{"&limit=0", "&limit=201", "&status=pending", "&cursor="} {
		assertProblem(t, q, list(q), http.StatusBadRequest, "validation_failed")
	}
	assertProblem(t, "foreign cursor", list("&cursor=abc"), http.StatusBadRequest, "validation_failed")
	assertProblem(t, "no organization", f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/support-cases", Token: f.token}),
		http.StatusBadRequest, "validation_failed")
}

func TestSupportCaseTenancy(t *testing.T) {
	t.Parallel()
	f := newSupportFixture(t)
	c := f.open(t, nil)
	id := c["id"].(string)
	intruder := apitest.OrgToken(uuid.MustParse(createOrganization(t, f.env, minimalOrganization)["id"].(string)))

	nobody := uuid.NewString()
	missing := f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/support-cases/" + nobody, Token: intruder})
	theirs := f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/support-cases/" + id, Token: intruder})
	assertProblem(t, "read theirs", theirs, http.StatusNotFound, "not_found")
	if problemShape(theirs, id) != problemShape(missing, nobody) {
		t.Errorf("another tenant's case answers unlike a missing one:\n%s\n%s", theirs.Body, missing.Body)
	}
	assertProblem(t, "close theirs", f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/support-cases/" + id + "/close", Token: intruder}),
		http.StatusNotFound, "not_found")
	assertProblem(t, "list theirs", f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/support-cases?organization_id=" + f.orgID, Token: intruder}),
		http.StatusForbidden, "forbidden")
	assertProblem(t, "open for them", f.create(t, intruder, withFields(t, f.minimalCase(), nil)), http.StatusForbidden, "forbidden")
	if n := f.env.Count("SELECT count(*) FROM support_cases WHERE status <> 'open' OR organization_id <> $1", f.orgID); n != 0 {
		t.Errorf("a cross-tenant attempt changed %d cases", n)
	}

	// The operator sees every organization's cases.
	op := f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/support-cases/" + id, Token: apitest.OperatorToken})
	if op.Status != http.StatusOK {
		t.Errorf("operator read: %d %s", op.Status, op.Body)
	}
	opList := f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/support-cases?organization_id=" + f.orgID, Token: apitest.OperatorToken})
	if opList.Status != http.StatusOK || len(opList.JSON(t)["items"].([]any)) != 1 {
		t.Errorf("operator list: %d %s", opList.Status, opList.Body)
	}
}

// TestSupportCaseAboutResources: a case may name any catalogue product and any resource of
// the caller's own organization; another organization's resource is as unknown as a made-up id.
func TestSupportCaseAboutResources(t *testing.T) {
	t.Parallel()
	f := newSupportFixture(t)
	invoice := generateInvoice(t, f.env, f.token, invoiceBody(t, f.orgID, nil)).Invoice.ID
	other := createOrganization(t, f.env, minimalOrganization)["id"].(string)
	theirs := generateInvoice(t, f.env, "dev:org:"+other, invoiceBody(t, other, nil)).Invoice.ID
	for name, fields := range map[string]map[string]any{
		"ProductByID":     {"product_id": productEinvoice},
		"ProductByCode":   {"product_id": "address"},
		"OwnTaxInvoice":   {"resource_id": invoice},
		"ProductAndOwned": {"product_id": "einvoice", "resource_id": invoice},
	} {
		if resp := f.create(t, f.token, withFields(t, f.minimalCase(), fields)); resp.Status != http.StatusCreated {
			t.Errorf("%s: %d %s", name, resp.Status, resp.Body)
		}
	}
	for name, fields := range map[string]map[string]any{
		"UnknownProduct":        {"product_id": "0193a000-0000-7000-8000-0000000000ff"},
		"TheirTaxInvoice":       {"resource_id": theirs},
		"MadeUpResource":        {"resource_id": "0193a000-0000-7000-8000-0000000000ff"},
		"ResourceNotAnID":       {"resource_id": "my-server"},
		"ProductNotInCatalogue": {"product_id": "sms"},
	} {
		assertProblem(t, name, f.create(t, f.token, withFields(t, f.minimalCase(), fields)), http.StatusUnprocessableEntity, "unprocessable")
	}
}

// walkPages reads every page of the list at path (with or without a query) with limit items a
// page, following next_cursor, and returns the items in order.
func walkPages(t *testing.T, env *apitest.Env, token, path string, limit int) []map[string]any {
	t.Helper()
	var got []map[string]any
	cursor := ""
	for pages := 0; ; pages++ {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		q := fmt.Sprintf("%s%slimit=%d", path, sep, limit)
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: q, Token: token})
		if resp.Status != http.StatusOK || pages > 20 {
			t.Fatalf("list %s: %d %s", q, resp.Status, resp.Body)
		}
		var page struct {
			Items      []map[string]any `json:"items"`
			NextCursor *string          `json:"next_cursor"`
		}
		_ = json.Unmarshal(resp.Body, &page)
		if len(page.Items) > limit {
			t.Fatalf("page of %d items with limit %d", len(page.Items), limit)
		}
		got = append(got, page.Items...)
		if page.NextCursor == nil {
			return got
		}
		cursor = *page.NextCursor
	}
}
