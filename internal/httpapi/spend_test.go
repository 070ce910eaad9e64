package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/provider/coreapi/internal/apitest"
)

type spendFixture struct {
	env   *apitest.Env
	orgID string
	token string
}

func newSpendFixture(t *testing.T) *spendFixture {
	t.Helper()
	env := apitest.New(t)
	id := createOrganization(t, env, minimalOrganization)["id"].(string)
	return &spendFixture{env: env, orgID: id, token: "dev:org:" + id}
}

func (f *spendFixture) put(product string, fields map[string]any) *apitest.Response {
	body := map[string]any{"organization_id": f.orgID, "warning_threshold_percent": 50, "monthly_budget_minor_units": nil,
		"hard_operation_limit": 4, "notification_recipients": []string{"finance@example.com"}, "enabled": true}
	for k, v := range fields {
		if v == "omit" {
			delete(body, k)
		} else {
			body[k] = v
		}
	}
	b, _ := json.Marshal(body)
	return f.env.Do(apitest.Request{Method: http.MethodPut, Path: "/v1/spend-controls/" + product, Token: f.token, Body: string(b)})
}

func (f *spendFixture) resolve() *apitest.Response {
	return f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/address/resolve-short", Token: f.token,
		Body: `{"short_address":"RRMA1234","language":"en"}`})
}

func (f *spendFixture) status(t testing.TB, product string) map[string]any {
	t.Helper()
	resp := f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/spend-controls?organization_id=" + f.orgID, Token: f.token})
	if resp.Status != http.StatusOK {
		t.Fatalf("list: %d %s", resp.Status, resp.Body)
	}
	var list []map[string]any
	_ = json.Unmarshal(resp.Body, &list)
	for _, c := range list {
		if c["product"] == product {
			return c
		}
	}
	t.Fatalf("no control for %s in %s", product, resp.Body)
	return nil
}

// crossings counts the warning and hard-limit crossings recorded: their audit records and
// webhook events.
func (f *spendFixture) crossings() string {
	return fmt.Sprintf("audit %d/%d, events %d/%d",
		f.env.Count("SELECT count(*) FROM audit_events WHERE action = 'spend_control.warning_reached'"),
		f.env.Count("SELECT count(*) FROM audit_events WHERE action = 'spend_control.hard_limit_reached'"),
		f.env.Count("SELECT count(*) FROM webhook_events WHERE type = 'spend_control.warning_reached'"),
		f.env.Count("SELECT count(*) FROM webhook_events WHERE type = 'spend_control.hard_limit_reached'"))
}

func TestSpendControlEnforcedAtTheBoundary(t *testing.T) {
	t.Parallel()
	f := newSpendFixture(t)
	if r := f.put("address", nil); r.Status != http.StatusOK || r.JSON(t)["hard_operation_limit"] != 4.0 {
		t.Fatalf("put: %d %s", r.Status, r.Body)
	}
	for i := 1; i <= 4; i++ {
		if r := f.resolve(); r.Status != http.StatusOK {
			t.Fatalf("operation %d of 4: %d %s", i, r.Status, r.Body)
		}
		st := f.status(t, "address")
		if st["current_operations"] != float64(i) || st["warning_reached"] != (i >= 2) || st["hard_limit_reached"] != (i >= 4) {
			t.Errorf("after %d operations: %v", i, st)
		}
	}
	refused := f.resolve()
	assertProblem(t, "fifth operation", refused, http.StatusTooManyRequests, "spend_limit_reached")
	if ra := refused.Header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Errorf("Retry-After = %q, want the seconds until the month ends", ra)
	}
	if n := f.env.Count("SELECT count(*) FROM usage_events WHERE organization_id = $1", f.orgID); n != 4 {
		t.Errorf("usage units = %d, want 4 (a refused operation counts nothing)", n)
	}
	for action, want := range map[string]int{"spend_control.warning_reached": 1, "spend_control.hard_limit_reached": 1} {
		if n := f.env.Count("SELECT count(*) FROM audit_events WHERE action = $1", action); n != want {
			t.Errorf("%s recorded %d times, want %d", action, n, want)
		}
	}
	// Other products are not limited by this control.
	body := invoiceBody(t, f.orgID, nil)
	if r := f.env.Do(apitest.Request{Method: http.MethodPost, Path: invoicePath, Token: f.token, Body: body}); r.Status != http.StatusCreated {
		t.Errorf("einvoice under an address control: %d", r.Status)
	}
	// Raising the limit lets operations through again; the warning is not recorded twice.
	f.put("address", map[string]any{"hard_operation_limit": 6})
	if r := f.resolve(); r.Status != http.StatusOK {
		t.Errorf("after raising the limit: %d %s", r.Status, r.Body)
	}
	if n := f.env.Count("SELECT count(*) FROM audit_events WHERE action = 'spend_control.warning_reached'"); n != 1 {
		t.Errorf("the warning was recorded %d times this month", n)
	}
	// Disabled: nothing enforced, nothing reported as reached.
	f.put("address", map[string]any{"hard_operation_limit": 1, "enabled": false})
	if r := f.resolve(); r.Status != http.StatusOK {
		t.Errorf("disabled control enforced: %d", r.Status)
	}
	if st := f.status(t, "address"); st["hard_limit_reached"] != false || st["warning_reached"] != false || st["current_operations"] != 6.0 {
		t.Errorf("disabled control status: %v", st)
	}
}

func TestSpendControlExactUnderConcurrency(t *testing.T) {
	t.Parallel()
	f := newSpendFixture(t)
	const limit, attempts = 10, 40
	f.put("address", map[string]any{"hard_operation_limit": limit, "warning_threshold_percent": 100})
	sibling := f.env.Sibling()
	var wg sync.WaitGroup
	statuses := make(chan int, attempts)
	for i := range attempts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			env := f.env
			if i%2 == 0 {
				env = sibling
			}
			statuses <- env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/address/resolve-short", Token: f.token,
				Body: `{"short_address":"RRMA1234","language":"en"}`}).Status
		}()
	}
	wg.Wait()
	close(statuses)
	counts := map[int]int{}
	for s := range statuses {
		counts[s]++
	}
	if counts[http.StatusOK] != limit || counts[http.StatusTooManyRequests] != attempts-limit {
		t.Errorf("%d parallel operations against a limit of %d: %v", attempts, limit, counts)
	}
	if n := f.env.Count("SELECT count(*) FROM usage_events"); n != limit {
		t.Errorf("usage units = %d, want %d", n, limit)
	}
	if n := f.env.Count("SELECT operations FROM usage_counters"); n != limit {
		t.Errorf("counter = %d, want %d", n, limit)
	}
	if n := f.env.Count("SELECT count(*) FROM audit_events WHERE action LIKE 'spend_control.%reached'"); n != 2 {
		t.Errorf("crossings recorded = %d, want 2 (warning at 100%% and the limit, once each)", n)
	}
}

// TestSpendControlHugeLimit: the schema bounds hard_operation_limit by int64 alone, so a limit
// whose threshold percent overflows int64 must still put the warning at that percent, not at
// no operation at all.
func TestSpendControlHugeLimit(t *testing.T) {
	t.Parallel()
	f := newSpendFixture(t)
	const limit = int64(200_000_000_000_000_000) // 50 % of it: 1e19 on the way, past int64
	if r := f.put("address", map[string]any{"hard_operation_limit": limit, "warning_threshold_percent": 50}); r.Status != http.StatusOK {
		t.Fatalf("put: %d %s", r.Status, r.Body)
	}
	if r := f.resolve(); r.Status != http.StatusOK {
		t.Fatalf("resolve: %d %s", r.Status, r.Body)
	}
	if st := f.status(t, "address"); st["warning_reached"] != false || st["hard_limit_reached"] != false || st["current_operations"] != 1.0 {
		t.Errorf("one operation of %d: %v", limit, st)
	}
	if got := f.crossings(); got != "audit 0/0, events 0/0" {
		t.Errorf("crossings recorded after one operation of %d: %s", limit, got)
	}
}

// TestSpendControlLoweredBelowUsage: a control changed so that this month's operations already
// stand at its warning and its limit reaches them there and then, each announced once, as an
// operation crossing them would have: the operations it refuses from now on announce nothing.
func TestSpendControlLoweredBelowUsage(t *testing.T) {
	t.Parallel()
	f := newSpendFixture(t)
	f.put("address", map[string]any{"hard_operation_limit": 10})
	for range 3 {
		if r := f.resolve(); r.Status != http.StatusOK {
			t.Fatalf("resolve: %d %s", r.Status, r.Body)
		}
	}
	if got := f.crossings(); got != "audit 0/0, events 0/0" {
		t.Fatalf("3 of 10 (warning at 5): %s", got)
	}
	for range 2 { // the second time, nothing is reached anew
		if r := f.put("address", map[string]any{"hard_operation_limit": 2}); r.Status != http.StatusOK {
			t.Fatalf("put: %d %s", r.Status, r.Body)
		}
		if st := f.status(t, "address"); st["warning_reached"] != true || st["hard_limit_reached"] != true {
			t.Errorf("3 operations, limit 2: %v", st)
		}
		if got := f.crossings(); got != "audit 1/1, events 1/1" {
			t.Errorf("the limit lowered to 2 below 3 operations: %s, want each crossing once", got)
		}
	}
	assertProblem(t, "past the lowered limit", f.resolve(), http.StatusTooManyRequests, "spend_limit_reached")
	if got := f.crossings(); got != "audit 1/1, events 1/1" {
		t.Errorf("after a refusal: %s", got)
	}
}

func TestSpendLimitRefusalIsNotReplayed(t *testing.T) {
	t.Parallel()
	f := newSpendFixture(t)
	f.put("address", map[string]any{"hard_operation_limit": 0})
	body := `{"short_address":"RRMA1234","language":"en"}`
	assertProblem(t, "at limit 0", postWithKey(f.env, f.token, "/v1/address/resolve-short", "resolve-1", body),
		http.StatusTooManyRequests, "spend_limit_reached")
	f.put("address", map[string]any{"hard_operation_limit": 1})
	if r := postWithKey(f.env, f.token, "/v1/address/resolve-short", "resolve-1", body); r.Status != http.StatusOK || r.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("a retry after the limit changed must run: %d %v", r.Status, r.Header)
	}
}

func TestSpendControlValidation(t *testing.T) {
	t.Parallel()
	f := newSpendFixture(t)
	tooMany := make([]string, 11)
	for i := range tooMany {
		tooMany[i] = fmt.Sprintf("r%d@example.com", i)
	}
	cases := map[string]map[string]any{
		"ThresholdZero":      {"warning_threshold_percent": 0},
		"ThresholdOver100":   {"warning_threshold_percent": 101},
		"NegativeLimit":      {"hard_operation_limit": -1},
		"NegativeBudget":     {"monthly_budget_minor_units": -1},
		"ElevenRecipients":   {"notification_recipients": tooMany},
		"BadEmail":           {"notification_recipients": []string{"finance"}},
		"DisplayNameEmail":   {"notification_recipients": []string{"Finance <finance@example.com>"}},
		"MissingEnabled":     {"enabled": "omit"},
		"MissingLimit":       {"hard_operation_limit": "omit"},
		"FractionalLimit":    {"hard_operation_limit": 2.5},
		"UnknownProperty":    {"currency": "SAR"},
		"EnabledAsString":    {"enabled": "true"},
		"RecipientsNotArray": {"notification_recipients": "finance@example.com"},
	}
	for name, fields := range cases {
		assertProblem(t, name, f.put("address", fields), http.StatusBadRequest, "validation_failed")
	}
	assertProblem(t, "unknown product", f.env.Do(apitest.Request{Method: http.MethodPut, Path: "/v1/spend-controls/sms", Token: f.token,
		Body: `{"organization_id":"x"}`}), http.StatusBadRequest, "validation_failed")
	ok := f.put("einvoice", map[string]any{"hard_operation_limit": nil, "monthly_budget_minor_units": 0, "warning_threshold_percent": 100,
		"notification_recipients": make([]string, 0)})
	if ok.Status != http.StatusOK || ok.JSON(t)["hard_operation_limit"] != nil {
		t.Errorf("bounds accepted: %d %s", ok.Status, ok.Body)
	}
	if n := f.env.Count("SELECT count(*) FROM spend_controls"); n != 1 {
		t.Errorf("spend controls = %d, want 1", n)
	}

	other := createOrganization(t, f.env, minimalOrganization)["id"].(string)
	f2 := &spendFixture{env: f.env, orgID: other, token: f.token}
	assertProblem(t, "another organization's control", f2.put("address", nil), http.StatusForbidden, "forbidden")
	assertProblem(t, "another organization's list", f.env.Do(apitest.Request{Method: http.MethodGet,
		Path: "/v1/spend-controls?organization_id=" + other, Token: f.token}), http.StatusForbidden, "forbidden")
	assertProblem(t, "list without organization", f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/spend-controls", Token: f.token}),
		http.StatusBadRequest, "validation_failed")
}

func TestUsageReport(t *testing.T) {
	t.Parallel()
	f := newSpendFixture(t)
	for range 3 {
		f.resolve()
	}
	generateInvoice(t, f.env, f.token, invoiceBody(t, f.orgID, nil))
	today := time.Now().UTC().Format(time.DateOnly)
	get := func(query string) *apitest.Response {
		return f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/usage" + query, Token: f.token})
	}
	resp := get("")
	if resp.Status != http.StatusOK {
		t.Fatalf("usage: %d %s", resp.Status, resp.Body)
	}
	report := resp.JSON(t)
	items := report["items"].([]any)
	if report["granularity"] != "day" || report["to"] != today || len(items) != 2 {
		t.Fatalf("usage: %s", resp.Body)
	}
	for _, it := range items {
		m := it.(map[string]any)
		want := map[string]float64{"address": 3, "einvoice": 1}[m["product"].(string)]
		if m["operations"] != want || m["period_start"] != today {
			t.Errorf("bucket %v", m)
		}
	}
	monthly := get("?granularity=month&product=address").JSON(t)
	if b := monthly["items"].([]any); len(b) != 1 || !strings.HasSuffix(b[0].(map[string]any)["period_start"].(string), "-01") {
		t.Errorf("monthly: %v", monthly)
	}
	if tot := monthly["totals"].([]any); len(tot) != 1 || tot[0].(map[string]any)["operations"] != 3.0 {
		t.Errorf("totals: %v", monthly["totals"])
	}
	if st := f.put("address", nil); st.Status == http.StatusOK {
		if c := f.status(t, "address"); c["current_operations"] != 3.0 {
			t.Errorf("spend control and usage disagree: %v", c)
		}
	}
	assertProblem(t, "to before from", get("?from=2026-02-01&to=2026-01-01"), http.StatusBadRequest, "validation_failed")
	assertProblem(t, "over a year", get("?from=2024-01-01&to=2025-12-31"), http.StatusBadRequest, "validation_failed")
	assertProblem(t, "bad date", get("?from=2026-02-30"), http.StatusBadRequest, "validation_failed")
	assertProblem(t, "operator without organization", f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/usage", Token: apitest.OperatorToken}),
		http.StatusBadRequest, "validation_failed")
	if r := f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/usage?organization_id=" + f.orgID, Token: apitest.OperatorToken}); r.Status != http.StatusOK {
		t.Errorf("operator naming the organization: %d", r.Status)
	}
}
