package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
	"github.com/provider/coreapi/internal/httpapi"
	"github.com/provider/coreapi/internal/webhook/signature"
)

// receiver is a webhook endpoint on a loopback port that records what it receives and answers
// status(n, d) to the n-th delivery d (1-based); status may block to order events in a test.
type receiver struct {
	URL string
	mu  sync.Mutex
	got []received
}

type received struct {
	Header http.Header
	Body   []byte
}

func newReceiver(t testing.TB, status func(n int, d received) int) *receiver {
	t.Helper()
	return newAnsweringReceiver(t, func(n int, d received) (int, string) {
		if status == nil {
			return http.StatusNoContent, ""
		}
		return status(n, d), ""
	})
}

// newAnsweringReceiver is a receiver (see newReceiver) whose answer to the n-th delivery d
// has a body too: answer returns its status and body (none written when it is empty).
func newAnsweringReceiver(t testing.TB, answer func(n int, d received) (int, string)) *receiver {
	t.Helper()
	r := &receiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		d := received{Header: req.Header.Clone(), Body: body}
		r.mu.Lock()
		r.got = append(r.got, d)
		n := len(r.got)
		r.mu.Unlock()
		status, text := answer(n, d)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, text)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL + "/hooks"
	return r
}

// failingFirst answers 500 to the first n deliveries and 200 afterwards.
func failingFirst(n int) func(int, received) int {
	return func(i int, _ received) int {
		if i <= n {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	}
}

func (r *receiver) deliveries() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// eventually is how long a test waits for a condition before it fails: long, since a shared,
// loaded machine can take seconds over what takes milliseconds on a quiet one. A test that
// passes never waits for it.
const eventually = time.Minute

// waitFor waits until the receiver has at least n deliveries and returns them.
func (r *receiver) waitFor(t testing.TB, n int) []received {
	t.Helper()
	return r.waitWithin(t, n, eventually)
}

// waitWithin waits up to limit until the receiver has at least n deliveries and returns them.
func (r *receiver) waitWithin(t testing.TB, n int, limit time.Duration) []received {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		got := r.deliveries()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("receiver: %d deliveries after %s, want %d", len(got), limit, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// event decodes a delivery's body after checking its signature with secret.
func (d received) event(t testing.TB, secret string) map[string]any {
	t.Helper()
	if err := signature.Verify(secret, d.Header, d.Body, signature.DefaultTolerance); err != nil {
		t.Errorf("delivery %s: signature: %v", d.Header.Get("webhook-id"), err)
	}
	var ev map[string]any
	if err := json.Unmarshal(d.Body, &ev); err != nil {
		t.Fatalf("delivery body: %v: %s", err, d.Body)
	}
	if ev["id"] != d.Header.Get("webhook-id") {
		t.Errorf("webhook-id %s, body id %v", d.Header.Get("webhook-id"), ev["id"])
	}
	return ev
}

func endpointBody(org, url string, events ...string) string {
	b, _ := json.Marshal(map[string]any{"organization_id": org, "url": url, "enabled_events": events, "description": "test receiver"})
	return string(b)
}

func createEndpoint(t testing.TB, env *apitest.Env, token, body string) map[string]any {
	t.Helper()
	resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/webhook-endpoints", Token: token, Body: body})
	if resp.Status != http.StatusCreated {
		t.Fatalf("create webhook endpoint: %d %s", resp.Status, resp.Body)
	}
	return resp.JSON(t)
}

func sendTest(t testing.TB, env *apitest.Env, token, endpointID string) map[string]any {
	t.Helper()
	resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/webhook-endpoints/" + endpointID + "/test", Token: token})
	if resp.Status != http.StatusAccepted {
		t.Fatalf("send test: %d %s", resp.Status, resp.Body)
	}
	return resp.JSON(t)
}

// waitForCount polls a count query until it returns want.
func waitForCount(t testing.TB, env *apitest.Env, want int, query string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(eventually)
	for {
		n := env.Count(query, args...)
		if n == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d after %s, want %d", query, n, eventually, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestWebhookEndpoints(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org, token := newOrganization(t, env)

	t.Run("CreateShowsTheSecretOnce", func(t *testing.T) {
		e := createEndpoint(t, env, token, endpointBody(org, "https://hooks.example.com/a", "api_key.created", "subscription.created"))
		secret, _ := e["secret"].(string)
		if !strings.HasPrefix(secret, "whsec_") || e["status"] != "enabled" || e["disabled_reason"] != nil ||
			e["organization_id"] != org || e["description"] != "test receiver" {
			t.Errorf("created: %v", e)
		}
		id := e["id"].(string)
		got := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/webhook-endpoints/" + id, Token: token})
		if got.Status != http.StatusOK || strings.Contains(string(got.Body), "secret") {
			t.Errorf("get: %d %s", got.Status, got.Body)
		}
		if n := env.Count("SELECT count(*) FROM webhook_endpoints WHERE position(convert_to($1, 'UTF8') in secret) > 0 OR position(decode($2, 'base64') in secret) > 0",
			secret, strings.TrimPrefix(secret, "whsec_")); n != 0 {
			t.Error("the signing secret is stored in clear")
		}
		if n := auditCount(env, id, "webhook_endpoint.created"); n != 1 {
			t.Errorf("%d webhook_endpoint.created audit events", n)
		}
	})
	t.Run("NullDescription", func(t *testing.T) {
		e := createEndpoint(t, env, token, fmt.Sprintf(`{"organization_id":%q,"url":"https://hooks.example.com/n","enabled_events":["api_key.revoked"],"description":null}`, org))
		if e["description"] != nil {
			t.Errorf("description: %v", e["description"])
		}
	})
	t.Run("IdempotentCreate", func(t *testing.T) {
		body := endpointBody(org, "https://hooks.example.com/idem", "api_key.created")
		first := postWithKey(env, token, "/v1/webhook-endpoints", "create-endpoint-1", body)
		again := postWithKey(env, token, "/v1/webhook-endpoints", "create-endpoint-1", body)
		if first.Status != http.StatusCreated || again.Status != http.StatusCreated || again.Header.Get("Idempotent-Replayed") != "true" ||
			first.JSON(t)["id"] != again.JSON(t)["id"] {
			t.Errorf("idempotent create: %d %s / %d %s", first.Status, first.Body, again.Status, again.Body)
		}
		if n := env.Count("SELECT count(*) FROM webhook_endpoints WHERE url = 'https://hooks.example.com/idem'"); n != 1 {
			t.Errorf("%d endpoints for one idempotency key", n)
		}
	})
	t.Run("ListPages", func(t *testing.T) {
		other, otherToken := newOrganization(t, env)
		var want []string
		for i := range 3 {
			want = append(want, createEndpoint(t, env, otherToken, endpointBody(other, fmt.Sprintf("https://hooks.example.com/%d", i), "api_key.created"))["id"].(string))
		}
		var seen []string
		path := "/v1/webhook-endpoints?limit=2"
		for path != "" {
			resp := env.Do(apitest.Request{Method: http.MethodGet, Path: path, Token: otherToken})
			if resp.Status != http.StatusOK {
				t.Fatalf("list: %d %s", resp.Status, resp.Body)
			}
			page := decode[struct {
				Items      []map[string]any `json:"items"`
				NextCursor *string          `json:"next_cursor"`
			}](t, resp)
			for _, it := range page.Items {
				seen = append(seen, it["id"].(string))
			}
			path = ""
			if page.NextCursor != nil {
				path = "/v1/webhook-endpoints?limit=2&cursor=" + *page.NextCursor
			}
		}
		if fmt.Sprint(seen) != fmt.Sprint(want) {
			t.Errorf("paged ids %v, want %v", seen, want)
		}
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/webhook-endpoints?organization_id=" + other, Token: apitest.OperatorToken})
		if n := len(resp.JSON(t)["items"].([]any)); resp.Status != http.StatusOK || n != 3 {
			t.Errorf("operator list of the organization: %d, %d items", resp.Status, n)
		}
	})
	t.Run("Delete", func(t *testing.T) {
		id := createEndpoint(t, env, token, endpointBody(org, "https://hooks.example.com/d", "api_key.created"))["id"].(string)
		path := "/v1/webhook-endpoints/" + id
		if resp := env.Do(apitest.Request{Method: http.MethodDelete, Path: path, Token: token}); resp.Status != http.StatusNoContent {
			t.Fatalf("delete: %d %s", resp.Status, resp.Body)
		}
		assertProblem(t, "get deleted", env.Do(apitest.Request{Method: http.MethodGet, Path: path, Token: token}), http.StatusNotFound, "not_found")
		assertProblem(t, "delete again", env.Do(apitest.Request{Method: http.MethodDelete, Path: path, Token: token}), http.StatusNotFound, "not_found")
		if n := auditCount(env, id, "webhook_endpoint.deleted"); n != 1 {
			t.Errorf("%d webhook_endpoint.deleted audit events", n)
		}
	})
	t.Run("UnknownOrganization", func(t *testing.T) {
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/webhook-endpoints", Token: apitest.OperatorToken,
			Body: endpointBody(uuid.NewString(), "https://hooks.example.com/x", "api_key.created")})
		assertProblem(t, "unknown organization", resp, http.StatusNotFound, "not_found")
	})
}

func TestCreateWebhookEndpoint_Bounds(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org, token := newOrganization(t, env)
	body := func(changes map[string]any) string {
		m := map[string]any{"organization_id": org, "url": "https://hooks.example.com/b", "enabled_events": []string{"api_key.created"}, "description": "d"}
		for k, v := range changes {
			if v == "omit" {
				delete(m, k)
			} else {
				m[k] = v
			}
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	longURL := func(n int) string {
		return "https://hooks.example.com/" + strings.Repeat("a", n-len("https://hooks.example.com/"))
	}
	tests := []struct {
		name    string
		changes map[string]any
		status  int
		pointer string
	}{
		{"MissingOrganization", map[string]any{"organization_id": "omit"}, http.StatusBadRequest, "/organization_id"},
		{"EmptyOrganization", map[string]any{"organization_id": ""}, http.StatusBadRequest, "/organization_id"},
		{"MissingURL", map[string]any{"url": "omit"}, http.StatusBadRequest, "/url"},
		{"EmptyURL", map[string]any{"url": ""}, http.StatusBadRequest, "/url"},
		{"URLAtMaxLength", map[string]any{"url": longURL(2048)}, http.StatusCreated, ""},
		{"URLTooLong", map[string]any{"url": longURL(2049)}, http.StatusBadRequest, "/url"},
		{"URLNotAbsolute", map[string]any{"url": "/hooks"}, http.StatusBadRequest, "/url"},
		{"URLNotHTTP", map[string]any{"url": "ftp://hooks.example.com/x"}, http.StatusBadRequest, "/url"},
		{"URLWithCredentials", map[string]any{"url": "https://user:pass@hooks.example.com/x"}, http.StatusBadRequest, "/url"},
		{"URLNotAString", map[string]any{"url": 42}, http.StatusBadRequest, "/url"},
		{"MissingEvents", map[string]any{"enabled_events": "omit"}, http.StatusBadRequest, "/enabled_events"},
		{"NoEvents", map[string]any{"enabled_events": []string{}}, http.StatusBadRequest, "/enabled_events"},
		{"DuplicateEvents", map[string]any{"enabled_events": []string{"api_key.created", "api_key.created"}}, http.StatusBadRequest, "/enabled_events"},
		{"UnknownEvent", map[string]any{"enabled_events": []string{"api_key.exploded"}}, http.StatusBadRequest, "/enabled_events/0"},
		{"EveryEvent", map[string]any{"enabled_events": allEventTypes(t)}, http.StatusCreated, ""},
		{"DescriptionAtMaxLength", map[string]any{"description": strings.Repeat("é", 500)}, http.StatusCreated, ""},
		{"DescriptionTooLong", map[string]any{"description": strings.Repeat("é", 501)}, http.StatusBadRequest, "/description"},
		{"DescriptionOmitted", map[string]any{"description": "omit"}, http.StatusCreated, ""},
		{"UnknownProperty", map[string]any{"secret": "whsec_AAAA"}, http.StatusBadRequest, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/webhook-endpoints", Token: token, Body: body(tc.changes)})
			if tc.status == http.StatusCreated {
				if resp.Status != http.StatusCreated {
					t.Errorf("status %d: %s", resp.Status, resp.Body)
				}
				return
			}
			assertProblem(t, tc.name, resp, tc.status, "validation_failed")
			if tc.pointer != "" && !hasFieldError(resp, tc.pointer) {
				t.Errorf("no field error at %s: %s", tc.pointer, resp.Body)
			}
		})
	}
}

// allEventTypes lists the WebhookEventType enum of the document.
func allEventTypes(t testing.TB) []string {
	t.Helper()
	doc, err := httpapi.LoadDocument()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, v := range doc.Components.Schemas["WebhookEventType"].Value.Enum {
		out = append(out, v.(string))
	}
	return out
}

func TestWebhookEndpoints_Tenancy(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	orgA, tokenA := newOrganization(t, env)
	orgB, tokenB := newOrganization(t, env)
	recvB := newReceiver(t, nil)
	a := createEndpoint(t, env, tokenA, endpointBody(orgA, "https://hooks.example.com/a", "api_key.created"))
	createEndpoint(t, env, tokenB, endpointBody(orgB, recvB.URL, "api_key.created"))
	path := "/v1/webhook-endpoints/" + a["id"].(string)

	assertProblem(t, "get another's", env.Do(apitest.Request{Method: http.MethodGet, Path: path, Token: tokenB}), http.StatusNotFound, "not_found")
	assertProblem(t, "delete another's", env.Do(apitest.Request{Method: http.MethodDelete, Path: path, Token: tokenB}), http.StatusNotFound, "not_found")
	assertProblem(t, "test another's", env.Do(apitest.Request{Method: http.MethodPost, Path: path + "/test", Token: tokenB}), http.StatusNotFound, "not_found")
	assertProblem(t, "list another's", env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/webhook-endpoints?organization_id=" + orgA, Token: tokenB}),
		http.StatusForbidden, "forbidden")
	assertProblem(t, "create for another", env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/webhook-endpoints", Token: tokenB,
		Body: endpointBody(orgA, recvB.URL, "api_key.created")}), http.StatusForbidden, "forbidden")
	resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/webhook-endpoints", Token: tokenB})
	if items := resp.JSON(t)["items"].([]any); len(items) != 1 || items[0].(map[string]any)["organization_id"] != orgB {
		t.Errorf("B's list: %s", resp.Body)
	}
	if r := env.Do(apitest.Request{Method: http.MethodGet, Path: path, Token: apitest.OperatorToken}); r.Status != http.StatusOK {
		t.Errorf("operator get: %d", r.Status)
	}

	// An event of A reaches no endpoint of B.
	resp = env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: tokenA,
		Body: fmt.Sprintf(`{"organization_id":%q,"name":"a","environment":"sandbox","scopes":["organizations:read"]}`, orgA)})
	if resp.Status != http.StatusCreated {
		t.Fatalf("create key: %d %s", resp.Status, resp.Body)
	}
	waitForCount(t, env, 0, "SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'")
	if got := recvB.deliveries(); len(got) != 0 {
		t.Errorf("B received A's event: %s", got[0].Body)
	}
	if n := env.Count("SELECT count(*) FROM webhook_deliveries WHERE organization_id = $1", orgB); n != 0 {
		t.Errorf("%d deliveries for B", n)
	}
}

func TestWebhookDelivery(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org, token := newOrganization(t, env)

	t.Run("TestEventIsSignedAndRecorded", func(t *testing.T) {
		recv := newReceiver(t, nil)
		e := createEndpoint(t, env, token, endpointBody(org, recv.URL, "billing_invoice.issued"))
		result := sendTest(t, env, token, e["id"].(string))
		if result["type"] != "webhook_endpoint.test" || result["status"] != "queued" || result["webhook_endpoint_id"] != e["id"] {
			t.Errorf("test result: %v", result)
		}
		got := recv.waitFor(t, 1)
		ev := got[0].event(t, e["secret"].(string))
		if ev["id"] != result["event_id"] || ev["type"] != "webhook_endpoint.test" || ev["organization_id"] != org {
			t.Errorf("event: %s", got[0].Body)
		}
		if data := ev["data"].(map[string]any); data["webhook_endpoint_id"] != e["id"] {
			t.Errorf("data: %v", data)
		}
		if ct := got[0].Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q", ct)
		}
		validateEvent(t, got[0].Body)
		waitForCount(t, env, 1, `SELECT count(*) FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
			WHERE d.event_id = $1 AND a.succeeded AND a.status_code = 204 AND a.attempt = 1 AND a.latency_ms >= 0 AND a.error IS NULL`, result["event_id"])
		waitForCount(t, env, 1, "SELECT count(*) FROM webhook_deliveries WHERE event_id = $1 AND status = 'succeeded'", result["event_id"])
	})
	t.Run("RetriedWithTheSameID", func(t *testing.T) {
		recv := newReceiver(t, failingFirst(2))
		e := createEndpoint(t, env, token, endpointBody(org, recv.URL, "api_key.created"))
		result := sendTest(t, env, token, e["id"].(string))
		got := recv.waitFor(t, 3)
		for i, d := range got {
			ev := d.event(t, e["secret"].(string))
			if d.Header.Get("webhook-id") != result["event_id"] || ev["id"] != result["event_id"] {
				t.Errorf("delivery %d: webhook-id %s, want %s", i+1, d.Header.Get("webhook-id"), result["event_id"])
			}
		}
		waitForCount(t, env, 1, "SELECT count(*) FROM webhook_deliveries WHERE event_id = $1 AND status = 'succeeded' AND attempts = 3", result["event_id"])
		rows, err := env.Pool.Query(context.Background(), `SELECT a.attempt, a.succeeded, a.status_code, coalesce(a.error, '')
			FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.event_id = $1 ORDER BY a.attempt`, result["event_id"])
		if err != nil {
			t.Fatal(err)
		}
		var attempts []string
		for rows.Next() {
			var n, code int
			var ok bool
			var msg string
			if err := rows.Scan(&n, &ok, &code, &msg); err != nil {
				t.Fatal(err)
			}
			attempts = append(attempts, fmt.Sprintf("%d:%v:%d:%v", n, ok, code, strings.HasPrefix(msg, "HTTP 500")))
		}
		if want := "[1:false:500:true 2:false:500:true 3:true:200:false]"; fmt.Sprint(attempts) != want {
			t.Errorf("attempts %v, want %s", attempts, want)
		}
		time.Sleep(300 * time.Millisecond)
		if n := len(recv.deliveries()); n != 3 {
			t.Errorf("%d deliveries after success, want 3", n)
		}
	})
	t.Run("DisabledAfterSustainedFailure", func(t *testing.T) {
		recv := newReceiver(t, func(int, received) int { return http.StatusBadGateway })
		e := createEndpoint(t, env, token, endpointBody(org, recv.URL, "api_key.created"))
		id := e["id"].(string)
		sendTest(t, env, token, id)
		recv.waitFor(t, apitest.WebhookPolicy.MaxAttempts)
		waitForCount(t, env, 1, "SELECT count(*) FROM webhook_endpoints WHERE id = $1 AND status = 'disabled'", id)
		got := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/webhook-endpoints/" + id, Token: token}).JSON(t)
		if reason, _ := got["disabled_reason"].(string); got["status"] != "disabled" || !strings.Contains(reason, "HTTP 502") {
			t.Errorf("endpoint: %v", got)
		}
		if n := env.Count("SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'failed' AND attempts = $2",
			id, apitest.WebhookPolicy.MaxAttempts); n != 1 {
			t.Errorf("%d failed deliveries", n)
		}
		if n := auditCount(env, id, "webhook_endpoint.disabled"); n != 1 {
			t.Errorf("%d webhook_endpoint.disabled audit events", n)
		}
		assertProblem(t, "test a disabled endpoint", env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/webhook-endpoints/" + id + "/test", Token: token}),
			http.StatusConflict, "invalid_state_transition")
		time.Sleep(200 * time.Millisecond)
		if n := len(recv.deliveries()); n != apitest.WebhookPolicy.MaxAttempts {
			t.Errorf("%d attempts, want %d", n, apitest.WebhookPolicy.MaxAttempts)
		}
	})
	t.Run("OneSuccessKeepsTheEndpoint", func(t *testing.T) {
		// The first event always fails; the second is sent, and succeeds, while the first's
		// first attempt waits for an answer. The first fails for good, but the endpoint has
		// answered since its first attempt, so it stays enabled.
		secondDone := make(chan struct{})
		var first, second string
		var once sync.Once
		recv := newReceiver(t, func(n int, d received) int {
			if n == 1 {
				select {
				case <-secondDone:
				case <-time.After(10 * time.Second):
				}
				return http.StatusServiceUnavailable
			}
			if d.Header.Get("webhook-id") == first {
				return http.StatusServiceUnavailable
			}
			once.Do(func() { close(secondDone) })
			return http.StatusOK
		})
		e := createEndpoint(t, env, token, endpointBody(org, recv.URL, "api_key.created"))
		id := e["id"].(string)
		first = sendTest(t, env, token, id)["event_id"].(string)
		recv.waitFor(t, 1)
		second = sendTest(t, env, token, id)["event_id"].(string)
		waitForCount(t, env, 1, "SELECT count(*) FROM webhook_deliveries WHERE event_id = $1 AND status = 'succeeded'", second)
		waitForCount(t, env, 1, "SELECT count(*) FROM webhook_deliveries WHERE event_id = $1 AND status = 'failed'", first)
		if n := env.Count("SELECT count(*) FROM webhook_endpoints WHERE id = $1 AND status = 'enabled'", id); n != 1 {
			t.Error("an endpoint that answered was disabled")
		}
	})
	t.Run("DeletingTheEndpointStopsItsDeliveries", func(t *testing.T) {
		// The first attempt is answered (500) only after the endpoint is deleted: nothing
		// follows it.
		deleted := make(chan struct{})
		recv := newReceiver(t, func(int, received) int {
			select {
			case <-deleted:
			case <-time.After(10 * time.Second):
			}
			return http.StatusInternalServerError
		})
		e := createEndpoint(t, env, token, endpointBody(org, recv.URL, "api_key.created"))
		id := e["id"].(string)
		sendTest(t, env, token, id)
		recv.waitFor(t, 1)
		if resp := env.Do(apitest.Request{Method: http.MethodDelete, Path: "/v1/webhook-endpoints/" + id, Token: token}); resp.Status != http.StatusNoContent {
			t.Fatalf("delete: %d", resp.Status)
		}
		close(deleted)
		if n := env.Count("SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1", id); n != 0 {
			t.Errorf("%d deliveries left", n)
		}
		time.Sleep(500 * time.Millisecond) // several retry delays
		if n := len(recv.deliveries()); n != 1 {
			t.Errorf("%d attempts, want the one in flight at the deletion only", n)
		}
		if n := env.Count("SELECT count(*) FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = $1", id); n != 0 {
			t.Errorf("%d attempts recorded for a deleted endpoint", n)
		}
	})
	t.Run("OnlySubscribedEvents", func(t *testing.T) {
		other, otherToken := newOrganization(t, env)
		recv := newReceiver(t, nil)
		e := createEndpoint(t, env, otherToken, endpointBody(other, recv.URL, "api_key.revoked"))
		key := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: otherToken,
			Body: fmt.Sprintf(`{"organization_id":%q,"name":"k","environment":"sandbox","scopes":["organizations:read"]}`, other)}).JSON(t)
		env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys/" + key["id"].(string) + "/revoke", Token: otherToken})
		// Deliveries are queued in the transaction of the change, so the endpoint's queue is
		// complete once the revocation has answered: one delivery, of the revocation.
		queued := env.Count("SELECT count(*) FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id WHERE d.endpoint_id = $1", e["id"])
		revocations := env.Count("SELECT count(*) FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id WHERE d.endpoint_id = $1 AND ev.type = 'api_key.revoked'", e["id"])
		if queued != 1 || revocations != 1 {
			t.Fatalf("%d deliveries queued, %d of api_key.revoked; want only that one", queued, revocations)
		}
		got := recv.waitFor(t, 1)
		ev := got[0].event(t, e["secret"].(string))
		if data := ev["data"].(map[string]any); ev["type"] != "api_key.revoked" || data["id"] != key["id"] || data["status"] != "revoked" {
			t.Errorf("event: %s", got[0].Body)
		}
	})
}

// TestWebhookDelivery_SurvivesRestart queues events while no worker runs (the process was
// stopped before delivering them); a new process on the same database delivers them.
func TestWebhookDelivery_SurvivesRestart(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org, token := newOrganization(t, env)
	recv := newReceiver(t, nil)
	e := createEndpoint(t, env, token, endpointBody(org, recv.URL, "api_key.created"))
	env.StopWorkers()
	first := sendTest(t, env, token, e["id"].(string))
	resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: token,
		Body: fmt.Sprintf(`{"organization_id":%q,"name":"k","environment":"sandbox","scopes":["organizations:read"]}`, org)})
	if resp.Status != http.StatusCreated {
		t.Fatalf("create key: %d %s", resp.Status, resp.Body)
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(recv.deliveries()); n != 0 {
		t.Fatalf("%d deliveries with the workers stopped", n)
	}
	if n := env.Count("SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'"); n != 2 {
		t.Fatalf("%d pending deliveries, want 2", n)
	}

	env.Sibling()
	got := recv.waitFor(t, 2)
	types := map[string]bool{}
	for _, d := range got {
		ev := d.event(t, e["secret"].(string))
		types[ev["type"].(string)] = true
		if ev["type"] == "webhook_endpoint.test" && ev["id"] != first["event_id"] {
			t.Errorf("test event id %v, want %v", ev["id"], first["event_id"])
		}
	}
	if !types["webhook_endpoint.test"] || !types["api_key.created"] {
		t.Errorf("delivered %v", types)
	}
	waitForCount(t, env, 2, "SELECT count(*) FROM webhook_deliveries WHERE status = 'succeeded'")
}

// TestWebhookDelivery_SeveralWorkers runs three processes' workers on one queue: every event
// is attempted exactly once (the receiver acknowledges at once).
func TestWebhookDelivery_SeveralWorkers(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	env.Sibling()
	env.Sibling()
	org, token := newOrganization(t, env)
	recv := newReceiver(t, nil)
	e := createEndpoint(t, env, token, endpointBody(org, recv.URL, "api_key.created"))
	const n = 30
	for range n {
		sendTest(t, env, token, e["id"].(string))
	}
	recv.waitFor(t, n)
	waitForCount(t, env, n, "SELECT count(*) FROM webhook_deliveries WHERE status = 'succeeded'")
	time.Sleep(200 * time.Millisecond)
	ids := map[string]int{}
	for _, d := range recv.deliveries() {
		ids[d.Header.Get("webhook-id")]++
	}
	if len(ids) != n || len(recv.deliveries()) != n {
		t.Errorf("%d deliveries of %d events, want each once", len(recv.deliveries()), len(ids))
	}
}

func TestWebhookEndpoints_RefusesPrivateTargetsInProduction(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org, _ := newOrganization(t, env)
	key := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: apitest.OperatorToken,
		Body: fmt.Sprintf(`{"organization_id":%q,"name":"hooks","environment":"sandbox","scopes":["webhooks:read","webhooks:write"]}`, org)}).JSON(t)
	token := key["full_key"].(string)
	prod := env.Sibling(func(c *httpapi.Config) { c.Development = false })

	refused := []string{
		"http://hooks.example.com/x", // not https
		"https://127.0.0.1/x",
		"https://127.1.2.3:8443/x",
		"https://10.0.0.7/x",
		"https://172.16.5.4/x",
		"https://192.168.1.1/x",
		"https://169.254.169.254/latest/meta-data/",
		"https://100.64.0.1/x",
		"https://0.0.0.0/x",
		"https://[::1]/x",
		"https://[::ffff:127.0.0.1]/x",
		"https://[fe80::1]/x",
		"https://[fd00::1]/x",
		"https://localhost/x",
		"https://LOCALHOST./x",
		"https://api.localhost:8443/x",
		// Odd address forms a C-library resolver turns into loopback (issue 21, item 11).
		"https://2130706433/x",
		"https://0x7f000001/x",
		"https://0177.0.0.1/x",
		"https://127.1/x",
		"https://0/x",
		"https://[::127.0.0.1]/x",
		"https://[2002:7f00:1::]/x",
		"https://[2001:0:7f00:1::1]/x",
		"https://93.184.216.34:99999/x",
		"https://１２７.０.０.１/x",
	}
	for _, u := range refused {
		t.Run(u, func(t *testing.T) {
			t.Parallel()
			resp := prod.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/webhook-endpoints", Token: token, Body: endpointBody(org, u, "api_key.created")})
			assertProblem(t, u, resp, http.StatusBadRequest, "validation_failed")
			if !hasFieldError(resp, "/url") || !strings.Contains(string(resp.Body), "url_not_allowed") {
				t.Errorf("no url_not_allowed error at /url: %s", resp.Body)
			}
			if n := env.Count("SELECT count(*) FROM webhook_endpoints WHERE url = $1", u); n != 0 {
				t.Errorf("refused URL stored %d times", n)
			}
		})
	}
	t.Run("NumericFormsRefusedInDevelopment", func(t *testing.T) {
		t.Parallel()
		for _, u := range []string{"http://2130706433:9/x", "http://127.1:9/x", "http://127.0.0.1:99999/x"} {
			resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/webhook-endpoints", Token: token, Body: endpointBody(org, u, "api_key.created")})
			assertProblem(t, u, resp, http.StatusBadRequest, "validation_failed")
			if !hasFieldError(resp, "/url") {
				t.Errorf("%s: no error at /url: %s", u, resp.Body)
			}
		}
	})
	t.Run("PublicHTTPS", func(t *testing.T) {
		t.Parallel()
		resp := prod.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/webhook-endpoints", Token: token,
			Body: endpointBody(org, "https://93.184.216.34/hooks", "api_key.created")})
		if resp.Status != http.StatusCreated {
			t.Errorf("public https URL: %d %s", resp.Status, resp.Body)
		}
	})
	t.Run("DevelopmentAllowsLoopback", func(t *testing.T) {
		t.Parallel()
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/webhook-endpoints", Token: token,
			Body: endpointBody(org, "http://127.0.0.1:9/x", "api_key.created")})
		if resp.Status != http.StatusCreated {
			t.Errorf("development loopback URL: %d %s", resp.Status, resp.Body)
		}
	})
}
