package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
	"github.com/provider/coreapi/internal/core"
)

type requestLogBody struct {
	ContentType *string `json:"content_type"`
	Size        int64   `json:"size"`
	Body        *string `json:"body"`
	Truncated   bool    `json:"truncated"`
	Omitted     *string `json:"omitted"`
}

type requestLogDetail struct {
	Log            requestLog      `json:"log"`
	Operation      *string         `json:"operation"`
	APIKeyID       *string         `json:"api_key_id"`
	IdempotencyKey *string         `json:"idempotency_key"`
	Request        *requestLogBody `json:"request"`
	Response       *requestLogBody `json:"response"`
}

// getRequestLog reads GET /v1/request-logs/{id} as token and decodes it on 200.
func getRequestLog(t *testing.T, env *apitest.Env, token, id string) (int, requestLogDetail, []byte) {
	t.Helper()
	resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/request-logs/" + id, Token: token})
	var d requestLogDetail
	if resp.Status == http.StatusOK {
		if err := json.Unmarshal(resp.Body, &d); err != nil {
			t.Fatal(err)
		}
	}
	return resp.Status, d, resp.Body
}

// logOfRequest finds, among the logs token sees, the one of the request that answered resp.
func logOfRequest(t *testing.T, env *apitest.Env, token string, resp *apitest.Response) requestLog {
	t.Helper()
	for _, l := range requestLogs(t, env, token, "", 100) {
		if l.RequestID == resp.Header.Get("Request-Id") {
			return l
		}
	}
	t.Fatalf("no log of request %s", resp.Header.Get("Request-Id"))
	return requestLog{}
}

func TestRequestLogDetail(t *testing.T) {
	t.Parallel()
	f := newKeyFixture(t)
	key := f.createKey(t, []string{"usage:read", "api-keys:write", "support:write"}, nil)
	full, keyID := key["full_key"].(string), key["id"].(string)
	other := createOrganization(t, f.env, minimalOrganization)["id"].(string)
	otherToken := apitest.OrgToken(uuid.MustParse(other))
	start := time.Now()

	// A request whose response carries a secret, sent with an Idempotency-Key, then replayed.
	createBody := `{"organization_id":"` + f.orgID + `","name":"ci","environment":"sandbox","scopes":["usage:read"]}`
	idem := http.Header{"Idempotency-Key": {"reqlog-create-1"}}
	created := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: full, Body: createBody, Header: idem})
	replayed := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: full, Body: createBody, Header: idem})
	if created.Status != http.StatusCreated || replayed.Status != http.StatusCreated {
		t.Fatalf("create key: %d %s; replay %d", created.Status, created.Body, replayed.Status)
	}
	secrets := created.JSON(t)
	newKey, newSecret, newKeyID := secrets["full_key"].(string), secrets["secret"].(string), secrets["id"].(string)
	// Bodies past what is stored (16 KiB) and past what can be redacted (64 KiB): refused, logged.
	long := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/support-cases", Token: full,
		Body: `{"organization_id":"` + f.orgID + `","subject":"` + strings.Repeat("s", 20_000) + `","description":"d"}`})
	huge := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/support-cases", Token: full,
		Body: `{"organization_id":"` + f.orgID + `","subject":"` + strings.Repeat("s", 70_000) + `","description":"d"}`})
	if long.Status != http.StatusBadRequest || huge.Status != http.StatusBadRequest {
		t.Fatalf("long subjects: %d, %d", long.Status, huge.Status)
	}
	operators := f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/organizations/" + other, Token: apitest.OperatorToken})
	f.env.FlushRequestLogs()
	createLog := logOfRequest(t, f.env, full, created)

	t.Run("a secret-carrying response is stored redacted", func(t *testing.T) {
		status, d, raw := getRequestLog(t, f.env, full, createLog.ID)
		if status != http.StatusOK {
			t.Fatalf("detail: %d %s", status, raw)
		}
		if d.Log.ID != createLog.ID || d.Log.Status != http.StatusCreated || d.Operation == nil || *d.Operation != "createApiKey" ||
			d.APIKeyID == nil || *d.APIKeyID != keyID || d.IdempotencyKey == nil || *d.IdempotencyKey != "reqlog-create-1" {
			t.Errorf("detail %s", raw)
		}
		if d.Request == nil || d.Request.Body == nil || !strings.Contains(*d.Request.Body, `"name":"ci"`) ||
			d.Request.Size != int64(len(createBody)) || *d.Request.ContentType != "application/json" {
			t.Errorf("request body %s", raw)
		}
		if d.Response == nil || d.Response.Body == nil || d.Response.Truncated || d.Response.Omitted != nil {
			t.Fatalf("response body %s", raw)
		}
		var shown map[string]any
		if err := json.Unmarshal([]byte(*d.Response.Body), &shown); err != nil {
			t.Fatal(err)
		}
		if shown["full_key"] != core.Redacted || shown["secret"] != core.Redacted || shown["name"] != "ci" {
			t.Errorf("response body shown as %v", shown)
		}
		// Nowhere: not in the detail, not in any stored body, and never the caller's credential.
		for _, secret := range []string{newKey, newSecret, full} {
			if strings.Contains(string(raw), secret) {
				t.Errorf("the detail shows a secret: %s", raw)
			}
			if n := f.env.Count("SELECT count(*) FROM request_log_bodies WHERE strpos(coalesce(request_body, '') || coalesce(response_body, ''), $1) > 0", secret); n != 0 {
				t.Errorf("%d stored bodies hold a secret", n)
			}
		}
	})

	t.Run("bodies are bounded", func(t *testing.T) {
		_, d, raw := getRequestLog(t, f.env, full, logOfRequest(t, f.env, full, long).ID)
		if d.Request == nil || d.Request.Body == nil || !d.Request.Truncated || len(*d.Request.Body) > core.RequestLogBodyLimit ||
			len(*d.Request.Body) < core.RequestLogBodyLimit-4 || d.Request.Size < 20_000 {
			t.Errorf("long request: %.300s", raw)
		}
		if d.Response == nil || d.Response.Body == nil || d.Response.Truncated || !strings.Contains(*d.Response.Body, "validation_failed") {
			t.Errorf("its problem response: %.300s", raw)
		}
		_, d, raw = getRequestLog(t, f.env, full, logOfRequest(t, f.env, full, huge).ID)
		if d.Request == nil || d.Request.Body != nil || d.Request.Omitted == nil || *d.Request.Omitted != "too_large" || d.Request.Size < 70_000 {
			t.Errorf("huge request: %.300s", raw)
		}
	})

	t.Run("tenant reads its own logs, the operator any", func(t *testing.T) {
		if status, _, raw := getRequestLog(t, f.env, otherToken, createLog.ID); status != http.StatusNotFound {
			t.Errorf("another organization reads the log: %d %s", status, raw)
		}
		if status, _, raw := getRequestLog(t, f.env, full, uuid.NewString()); status != http.StatusNotFound {
			t.Errorf("unknown id: %d %s", status, raw)
		}
		if status, d, raw := getRequestLog(t, f.env, apitest.OperatorToken, createLog.ID); status != http.StatusOK || d.Log.ID != createLog.ID {
			t.Errorf("operator: %d %s", status, raw)
		}
		operatorLog := logOfRequest(t, f.env, apitest.OperatorToken, operators)
		if status, _, raw := getRequestLog(t, f.env, full, operatorLog.ID); status != http.StatusNotFound {
			t.Errorf("a tenant reads the operator's own log: %d %s", status, raw)
		}
		if status, d, raw := getRequestLog(t, f.env, apitest.OperatorToken, operatorLog.ID); status != http.StatusOK || d.Log.OrganizationID != nil {
			t.Errorf("the operator's own log: %d %s", status, raw)
		}
	})

	t.Run("filters", func(t *testing.T) {
		f.env.FlushRequestLogs()
		count := func(query string) int { return len(requestLogs(t, f.env, full, query, 50)) }
		filters := map[string]int{
			"api_key_id=" + keyID + "&path=/v1/api-keys":       2,
			"api_key_id=" + keyID + "&path=/v1/support-cases":  2,
			"api_key_id=" + newKeyID + "&path=/v1/api-keys":    0, // the key it created made none
			"api_key_id=" + uuid.NewString():                   0,
			"operation=createApiKey":                           2,
			"operation=createSupportCase":                      2,
			"operation=createSupportCase&status_class=2xx":     0,
			"operation=noSuchOperation":                        0,
			"idempotency_key=reqlog-create-1":                  2, // the request and its replay
			"idempotency_key=reqlog-create-1&path=/v1/support": 0,
			"idempotency_key=other":                            0,
			"path=/v1/api-keys&since=" + url.QueryEscape(start.Add(-time.Minute).Format(time.RFC3339)): 2,
			"path=/v1/api-keys&until=" + url.QueryEscape(start.Add(-time.Minute).Format(time.RFC3339)): 0,
		}
		for query, want := range filters {
			if got := count(query); got != want {
				t.Errorf("?%s: %d logs, want %d", query, got, want)
			}
		}
	})
}
