package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
)

// switchable answers 503 while down is set and 200 otherwise.
func switchable(down *atomic.Bool) func(int, received) int {
	return func(int, received) int {
		if down.Load() {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	}
}

// listDeliveries returns the items of one page of an endpoint's deliveries (query: the
// filters, URL-encoded).
func listDeliveries(t testing.TB, env *apitest.Env, token, endpointID, query string) []map[string]any {
	t.Helper()
	resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/webhook-endpoints/" + endpointID + "/deliveries?" + query, Token: token})
	if resp.Status != http.StatusOK {
		t.Fatalf("list deliveries: %d %s", resp.Status, resp.Body)
	}
	return items(t, resp)
}

func items(t testing.TB, resp *apitest.Response) []map[string]any {
	t.Helper()
	var page struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(resp.Body, &page); err != nil {
		t.Fatalf("page: %v: %s", err, resp.Body)
	}
	return page.Items
}

// waitForDelivery polls the endpoint's deliveries, over HTTP only, until the delivery of
// event eventID has status, and returns it as the API answered.
func waitForDelivery(t testing.TB, env *apitest.Env, token, endpointID, eventID, status string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(eventually)
	for {
		for _, d := range listDeliveries(t, env, token, endpointID, "limit=200") {
			if d["event_id"] == eventID && d["status"] == status {
				return d
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s delivery of event %s after %s", status, eventID, eventually)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// createKey creates an API key of org with scopes (publishing api_key.created) and returns it.
func createKey(t testing.TB, env *apitest.Env, token, org string, scopes ...string) map[string]any {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"organization_id": org, "name": "k", "environment": "sandbox", "scopes": scopes})
	resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: token, Body: string(b)})
	if resp.Status != http.StatusCreated {
		t.Fatalf("create key: %d %s", resp.Status, resp.Body)
	}
	return resp.JSON(t)
}

// eventOf returns the id of the api_key.created event of key.
func eventOf(t testing.TB, env *apitest.Env, key map[string]any) string {
	t.Helper()
	var id uuid.UUID
	if err := env.Pool.QueryRow(t.Context(), "SELECT id FROM webhook_events WHERE type = 'api_key.created' AND data->>'id' = $1", key["id"]).Scan(&id); err != nil {
		t.Fatalf("event of key %s: %v", key["id"], err)
	}
	return id.String()
}

func recoverSince(env *apitest.Env, token, endpointID string, since time.Time, idempotencyKey string) *apitest.Response {
	req := apitest.Request{Method: http.MethodPost, Path: "/v1/webhook-endpoints/" + endpointID + "/recover", Token: token,
		Body: fmt.Sprintf(`{"since":%q}`, since.Format(time.RFC3339Nano))}
	if idempotencyKey != "" {
		req.Header = http.Header{"Idempotency-Key": {idempotencyKey}}
	}
	return env.Do(req)
}

func resend(env *apitest.Env, token, endpointID, deliveryID, idempotencyKey string) *apitest.Response {
	req := apitest.Request{Method: http.MethodPost, Path: "/v1/webhook-endpoints/" + endpointID + "/deliveries/" + deliveryID + "/resend", Token: token}
	if idempotencyKey != "" {
		req.Header = http.Header{"Idempotency-Key": {idempotencyKey}}
	}
	return env.Do(req)
}

func assertQueued(t testing.TB, name string, resp *apitest.Response, want int) {
	t.Helper()
	if resp.Status != http.StatusAccepted {
		t.Fatalf("%s: %d %s", name, resp.Status, resp.Body)
	}
	if got := resp.JSON(t)["queued"]; got != float64(want) {
		t.Errorf("%s: queued %v, want %d", name, got, want)
	}
}

// TestEvents: every event an organization's changes produce is listed, whether or not an
// endpoint receives it, filtered and paged, and only to its organization and the operator.
func TestEvents(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org, token := newOrganization(t, env)
	_, otherToken := newOrganization(t, env)
	start := time.Now()
	first := createKey(t, env, token, org, "organizations:read") // no endpoint at all
	second := createKey(t, env, token, org, "organizations:read")
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys/" + second["id"].(string) + "/revoke", Token: token})

	if n := env.Count("SELECT count(*) FROM webhook_deliveries WHERE organization_id = $1", org); n != 0 {
		t.Fatalf("%d deliveries: the organization has no endpoint", n)
	}
	resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/events", Token: token})
	if resp.Status != http.StatusOK {
		t.Fatalf("list: %d %s", resp.Status, resp.Body)
	}
	all := items(t, resp)
	if len(all) != env.Count("SELECT count(*) FROM webhook_events WHERE organization_id = $1", org) || len(all) < 3 {
		t.Fatalf("%d events listed: %s", len(all), resp.Body)
	}
	if all[0]["type"] != "api_key.revoked" || all[0]["data"].(map[string]any)["id"] != second["id"] {
		t.Errorf("newest event: %v", all[0])
	}
	for _, e := range all {
		if e["organization_id"] != org {
			t.Errorf("event of another organization: %v", e)
		}
	}

	t.Run("Get", func(t *testing.T) {
		id := eventOf(t, env, first)
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/events/" + id, Token: token})
		got := resp.JSON(t)
		if resp.Status != http.StatusOK || got["id"] != id || got["type"] != "api_key.created" || got["data"].(map[string]any)["id"] != first["id"] {
			t.Errorf("get: %d %s", resp.Status, resp.Body)
		}
		validateEvent(t, resp.Body)
		assertProblem(t, "another organization's", env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/events/" + id, Token: otherToken}),
			http.StatusNotFound, "not_found")
		assertProblem(t, "unknown", env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/events/" + uuid.NewString(), Token: token}),
			http.StatusNotFound, "not_found")
		if r := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/events/" + id, Token: apitest.OperatorToken}); r.Status != http.StatusOK {
			t.Errorf("operator: %d", r.Status)
		}
	})
	t.Run("Filters", func(t *testing.T) {
		list := func(query string) []map[string]any {
			resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/events?" + query, Token: token})
			if resp.Status != http.StatusOK {
				t.Fatalf("%s: %d %s", query, resp.Status, resp.Body)
			}
			return items(t, resp)
		}
		if got := list("type=api_key.created"); len(got) != 2 || got[0]["data"].(map[string]any)["id"] != second["id"] {
			t.Errorf("type=api_key.created: %v", got)
		}
		if got := list("since=" + url.QueryEscape(start.Format(time.RFC3339Nano))); len(got) != 3 {
			t.Errorf("since the keys: %d events, want 3", len(got))
		}
		if got := list("until=" + url.QueryEscape(start.Format(time.RFC3339Nano))); len(got) != len(all)-3 {
			t.Errorf("until the keys: %d events, want %d", len(got), len(all)-3)
		}
		if got := list("type=support_case.opened"); len(got) != 0 {
			t.Errorf("no support case: %v", got)
		}
		assertProblem(t, "unknown type", env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/events?type=nope.nope", Token: token}),
			http.StatusBadRequest, "validation_failed")
	})
	t.Run("Pages", func(t *testing.T) {
		var seen []string
		cursor := ""
		for range len(all) + 1 {
			resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/events?limit=1" + cursor, Token: token})
			page := resp.JSON(t)
			for _, e := range items(t, resp) {
				seen = append(seen, e["id"].(string))
			}
			next, _ := page["next_cursor"].(string)
			if next == "" {
				break
			}
			cursor = "&cursor=" + next
		}
		var want []string
		for _, e := range all {
			want = append(want, e["id"].(string))
		}
		if fmt.Sprint(seen) != fmt.Sprint(want) {
			t.Errorf("pages %v, want %v", seen, want)
		}
	})
	t.Run("Tenancy", func(t *testing.T) {
		assertProblem(t, "another organization's list", env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/events?organization_id=" + org, Token: otherToken}),
			http.StatusForbidden, "forbidden")
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/events", Token: otherToken})
		for _, e := range items(t, resp) {
			if e["organization_id"] == org {
				t.Errorf("another organization sees %v", e)
			}
		}
		resp = env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/events?organization_id=" + org, Token: apitest.OperatorToken})
		if got := items(t, resp); len(got) != len(all) {
			t.Errorf("operator: %d events, want %d", len(got), len(all))
		}
	})
}

// TestWebhookDeliveryAttempts: each attempt is listed with its status, duration, the first
// bytes of the answer and the error, newest first; the signing secret is never in the log,
// even when the receiver echoes everything it was sent.
func TestWebhookDeliveryAttempts(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org, token := newOrganization(t, env)
	long := strings.Repeat("é", 1000) // 2000 bytes: cut at 1 KiB, on a rune boundary or not
	recv := newAnsweringReceiver(t, func(n int, d received) (int, string) {
		if n == 1 {
			echo, _ := json.Marshal(map[string]any{"headers": d.Header, "body": string(d.Body)})
			return http.StatusInternalServerError, string(echo)
		}
		return http.StatusOK, long
	})
	e := createEndpoint(t, env, token, endpointBody(org, recv.URL, "api_key.created"))
	id, secret := e["id"].(string), e["secret"].(string)
	event := sendTest(t, env, token, id)["event_id"].(string)
	d := waitForDelivery(t, env, token, id, event, "succeeded")

	if d["event_type"] != "webhook_endpoint.test" || d["attempt_count"] != float64(2) || d["next_attempt_at"] != nil ||
		d["completed_at"] == nil || d["webhook_endpoint_id"] != id {
		t.Errorf("delivery: %v", d)
	}
	attempts := d["attempts"].([]any)
	if len(attempts) != 2 {
		t.Fatalf("attempts: %v", attempts)
	}
	last, first := attempts[0].(map[string]any), attempts[1].(map[string]any)
	if last["attempt"] != float64(2) || last["succeeded"] != true || last["response_status"] != float64(200) || last["error"] != nil {
		t.Errorf("second attempt: %v", last)
	}
	if body, _ := last["response_body_prefix"].(string); len(body) > 1024 || len(body) < 1022 || !strings.HasPrefix(long, strings.TrimSuffix(body, "?")) {
		t.Errorf("second attempt's body: %d bytes %q", len(body), body)
	}
	if first["attempt"] != float64(1) || first["succeeded"] != false || first["response_status"] != float64(500) ||
		!strings.HasPrefix(first["error"].(string), "HTTP 500: ") || !strings.Contains(first["response_body_prefix"].(string), "Webhook-Signature") {
		t.Errorf("first attempt: %v", first)
	}
	for _, a := range attempts {
		if ms, ok := a.(map[string]any)["duration_ms"].(float64); !ok || ms < 0 {
			t.Errorf("duration: %v", a)
		}
	}

	// The attempt log holds what the receiver answered, and that never includes the secret.
	key := strings.TrimPrefix(secret, "whsec_")
	resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/webhook-endpoints/" + id + "/deliveries", Token: token})
	if strings.Contains(string(resp.Body), key) {
		t.Errorf("the deliveries list contains the signing secret")
	}
	if n := env.Count(`SELECT count(*) FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
		WHERE d.endpoint_id = $1 AND strpos(coalesce(a.response_body, '') || coalesce(a.error, '') || coalesce(d.last_error, ''), $2) > 0`, id, key); n != 0 {
		t.Errorf("%d attempts log the signing secret", n)
	}
	if n := env.Count("SELECT count(*) FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = $1 AND a.response_body IS NOT NULL", id); n != 2 {
		t.Errorf("%d attempts store a response body, want 2", n)
	}

	t.Run("Filters", func(t *testing.T) {
		if got := listDeliveries(t, env, token, id, "status=succeeded&event_type=webhook_endpoint.test"); len(got) != 1 || got[0]["id"] != d["id"] {
			t.Errorf("succeeded test deliveries: %v", got)
		}
		for _, q := range []string{"status=failed", "status=pending", "event_type=api_key.created"} {
			if got := listDeliveries(t, env, token, id, q); len(got) != 0 {
				t.Errorf("%s: %v", q, got)
			}
		}
		assertProblem(t, "unknown outcome", env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/webhook-endpoints/" + id + "/deliveries?status=abandoned", Token: token}),
			http.StatusBadRequest, "validation_failed")
	})
}

// TestWebhookRecover: a receiver that was down gets, once it is back and the endpoint is
// recovered since a time, exactly the events it missed since then, once each: the delivery
// that failed for good, and the event published while the endpoint was disabled.
func TestWebhookRecover(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org, token := newOrganization(t, env)
	var down atomic.Bool
	recv := newReceiver(t, switchable(&down))
	e := createEndpoint(t, env, token, endpointBody(org, recv.URL, "api_key.created"))
	id := e["id"].(string)
	disabled := "SELECT count(*) FROM webhook_endpoints WHERE id = $1 AND status = 'disabled'"
	enable := func() {
		t.Helper()
		resp := env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v1/webhook-endpoints/" + id, Token: token, Body: `{"status":"enabled"}`})
		if resp.Status != http.StatusOK {
			t.Fatalf("enable the endpoint: %d %s", resp.Status, resp.Body)
		}
	}

	delivered := eventOf(t, env, createKey(t, env, token, org, "organizations:read"))
	waitForDelivery(t, env, token, id, delivered, "succeeded")
	down.Store(true)
	beforeSince := eventOf(t, env, createKey(t, env, token, org, "organizations:read"))
	waitForCount(t, env, 1, disabled, id)
	enable()
	since := time.Now()
	failed := eventOf(t, env, createKey(t, env, token, org, "organizations:read"))
	waitForCount(t, env, 1, disabled, id) // fails for good and disables the endpoint again
	missed := eventOf(t, env, createKey(t, env, token, org, "organizations:read"))
	if n := env.Count("SELECT count(*) FROM webhook_deliveries WHERE event_id = $1", missed); n != 0 {
		t.Fatalf("the event published while the endpoint was disabled has %d deliveries", n)
	}
	failedDelivery := waitForDelivery(t, env, token, id, failed, "failed")
	if failedDelivery["attempt_count"] != float64(apitest.WebhookPolicy.MaxAttempts) {
		t.Errorf("failed delivery: %v", failedDelivery)
	}

	// A disabled endpoint refuses, and nothing changes.
	assertProblem(t, "recover a disabled endpoint", recoverSince(env, token, id, since, ""), http.StatusConflict, "invalid_state_transition")
	assertProblem(t, "resend to a disabled endpoint", resend(env, token, id, failedDelivery["id"].(string), ""), http.StatusConflict, "invalid_state_transition")
	if n := env.Count("SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1 AND (status = 'pending' OR requeues > 0)", id); n != 0 {
		t.Errorf("a refused recover queued %d deliveries", n)
	}

	enable()
	down.Store(false)
	received := len(recv.deliveries())
	assertQueued(t, "recover", recoverSince(env, token, id, since, "recover-1"), 2)
	waitForDelivery(t, env, token, id, failed, "succeeded")
	waitForDelivery(t, env, token, id, missed, "succeeded")
	replay := recoverSince(env, token, id, since, "recover-1")
	assertQueued(t, "replay", replay, 2)
	if replay.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay not marked: %v", replay.Header)
	}
	assertQueued(t, "recover again", recoverSince(env, token, id, since, "recover-2"), 0)
	time.Sleep(300 * time.Millisecond) // several retry delays: anything queued twice would arrive
	counts := map[string]int{}
	for _, d := range recv.deliveries()[received:] {
		counts[d.Header.Get("webhook-id")]++
	}
	if want := map[string]int{failed: 1, missed: 1}; fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("after recovering: %v, want each missed event once: %v", counts, want)
	}
	if got := waitForDelivery(t, env, token, id, beforeSince, "failed"); got["attempt_count"] != float64(apitest.WebhookPolicy.MaxAttempts) {
		t.Errorf("the delivery before since was queued again: %v", got)
	}
	if n := env.Count("SELECT count(*) FROM webhook_endpoints WHERE id = $1 AND status = 'enabled'", id); n != 1 {
		t.Error("the endpoint is not enabled")
	}
	if n := auditCount(env, id, "webhook_endpoint.deliveries_recovered"); n != 2 {
		t.Errorf("%d recover audit events, want 2 (the replay is not one)", n)
	}
}

// TestWebhookResend: a delivery is sent again at once with the same webhook-id, once per
// Idempotency-Key; only the endpoint's organization (and the operator) may.
func TestWebhookResend(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org, token := newOrganization(t, env)
	_, otherToken := newOrganization(t, env)
	recv := newReceiver(t, nil)
	e := createEndpoint(t, env, token, endpointBody(org, recv.URL, "api_key.created"))
	id := e["id"].(string)
	event := sendTest(t, env, token, id)["event_id"].(string)
	d := waitForDelivery(t, env, token, id, event, "succeeded")
	deliveryID := d["id"].(string)

	assertQueued(t, "resend", resend(env, token, id, deliveryID, "resend-1"), 1)
	got := recv.waitFor(t, 2)
	if got[1].Header.Get("webhook-id") != event {
		t.Errorf("resent webhook-id %s, want %s", got[1].Header.Get("webhook-id"), event)
	}
	got[1].event(t, e["secret"].(string))
	waitForCount(t, env, 1, "SELECT count(*) FROM webhook_deliveries WHERE id = $1 AND status = 'succeeded' AND attempts = 2 AND requeues = 1", deliveryID)
	replay := resend(env, token, id, deliveryID, "resend-1")
	assertQueued(t, "replay", replay, 1)
	if replay.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay not marked: %v", replay.Header)
	}

	// Refusals change nothing.
	assertProblem(t, "another organization's", resend(env, otherToken, id, deliveryID, ""), http.StatusNotFound, "not_found")
	assertProblem(t, "another organization's recover", recoverSince(env, otherToken, id, time.Now().Add(-time.Hour), ""), http.StatusNotFound, "not_found")
	assertProblem(t, "another organization's deliveries", env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/webhook-endpoints/" + id + "/deliveries", Token: otherToken}),
		http.StatusNotFound, "not_found")
	assertProblem(t, "unknown delivery", resend(env, token, id, uuid.NewString(), ""), http.StatusNotFound, "not_found")
	other := createEndpoint(t, env, token, endpointBody(org, recv.URL, "api_key.created"))
	assertProblem(t, "another endpoint's delivery", resend(env, token, other["id"].(string), deliveryID, ""), http.StatusNotFound, "not_found")
	time.Sleep(200 * time.Millisecond)
	if n := len(recv.deliveries()); n != 2 {
		t.Errorf("%d deliveries received, want the first and one resend", n)
	}
	if n := env.Count("SELECT count(*) FROM webhook_deliveries WHERE id = $1 AND requeues = 1 AND attempts = 2", deliveryID); n != 1 {
		t.Error("a refused resend changed the delivery")
	}
	if n := auditCount(env, id, "webhook_endpoint.delivery_resent"); n != 1 {
		t.Errorf("%d resend audit events, want 1", n)
	}

	// The operator may resend any organization's delivery.
	assertQueued(t, "operator resend", resend(env, apitest.OperatorToken, id, deliveryID, ""), 1)
	recv.waitFor(t, 3)
}

// TestWebhookDeliveries_Scopes: webhooks:manage grants the reads and the sends, and nothing
// beyond webhooks; webhooks:read does not send; a revoked key is refused at once.
func TestWebhookDeliveries_Scopes(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org, token := newOrganization(t, env)
	recv := newReceiver(t, nil)
	e := createEndpoint(t, env, token, endpointBody(org, recv.URL, "api_key.created"))
	id := e["id"].(string)
	event := sendTest(t, env, token, id)["event_id"].(string)
	deliveryID := waitForDelivery(t, env, token, id, event, "succeeded")["id"].(string)
	manageKey := createKey(t, env, token, org, "webhooks:manage")
	manage := manageKey["full_key"].(string)
	read := createKey(t, env, token, org, "webhooks:read")["full_key"].(string)

	for _, path := range []string{"/v1/events", "/v1/events/" + event, "/v1/webhook-endpoints/" + id + "/deliveries"} {
		if r := env.Do(apitest.Request{Method: http.MethodGet, Path: path, Token: manage}); r.Status != http.StatusOK {
			t.Errorf("webhooks:manage GET %s: %d %s", path, r.Status, r.Body)
		}
		if r := env.Do(apitest.Request{Method: http.MethodGet, Path: path, Token: read}); r.Status != http.StatusOK {
			t.Errorf("webhooks:read GET %s: %d %s", path, r.Status, r.Body)
		}
	}
	assertQueued(t, "webhooks:manage resend", resend(env, manage, id, deliveryID, ""), 1)
	assertQueued(t, "webhooks:manage recover", recoverSince(env, manage, id, time.Now(), ""), 0)
	assertProblem(t, "webhooks:read resend", resend(env, read, id, deliveryID, ""), http.StatusForbidden, "insufficient_scope")
	assertProblem(t, "webhooks:read recover", recoverSince(env, read, id, time.Now(), ""), http.StatusForbidden, "insufficient_scope")
	// No escalation: webhooks:manage is no key to other resources.
	assertProblem(t, "webhooks:manage creates a key", env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: manage,
		Body: fmt.Sprintf(`{"organization_id":%q,"name":"k","environment":"sandbox","scopes":["webhooks:manage"]}`, org)}),
		http.StatusForbidden, "insufficient_scope")
	if n := env.Count("SELECT count(*) FROM webhook_deliveries WHERE id = $1 AND requeues = 1", deliveryID); n != 1 {
		t.Error("the refused resend changed the delivery")
	}

	// Withdrawal: the very next request with the revoked key is refused.
	if r := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys/" + manageKey["id"].(string) + "/revoke", Token: token}); r.Status != http.StatusOK {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	assertProblem(t, "revoked key", env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/events", Token: manage}), http.StatusUnauthorized, "unauthenticated")
	assertProblem(t, "revoked key resends", resend(env, manage, id, deliveryID, ""), http.StatusUnauthorized, "unauthenticated")
}

// The outcomes of a delivery, each reached through the API alone.
var (
	_ = reachable("WebhookDeliveryStatus", "succeeded", func(t *testing.T, env *apitest.Env) map[string]any {
		return reachDelivery(t, env, newReceiver(t, nil), "succeeded")
	})
	_ = reachable("WebhookDeliveryStatus", "failed", func(t *testing.T, env *apitest.Env) map[string]any {
		return reachDelivery(t, env, newReceiver(t, func(int, received) int { return http.StatusInternalServerError }), "failed")
	})
	_ = reachable("WebhookDeliveryStatus", "pending", func(t *testing.T, env *apitest.Env) map[string]any {
		// The receiver answers only once the test has seen the delivery pending (its cleanup
		// runs before the receiver's, which waits for the answer).
		release := make(chan struct{})
		recv := newReceiver(t, func(int, received) int { <-release; return http.StatusOK })
		t.Cleanup(func() { close(release) })
		return reachDelivery(t, env, recv, "pending")
	})
)

// reachDelivery sends a test event to a new endpoint at recv and returns its delivery once it
// has outcome want.
func reachDelivery(t *testing.T, env *apitest.Env, recv *receiver, want string) map[string]any {
	org, token := newOrganization(t, env)
	id := createEndpoint(t, env, token, endpointBody(org, recv.URL, "api_key.created"))["id"].(string)
	return waitForDelivery(t, env, token, id, sendTest(t, env, token, id)["event_id"].(string), want)
}

// seedWebhookFuzzFixtures gives the spec-driven fuzzing real webhook resources: an endpoint
// of fx.org at a loopback receiver with one succeeded delivery (its id for delivery_id, its
// event for /v1/events/{id}), and an endpoint of its own for the deletion, so that the
// other operations find theirs whatever the order. waitForJobs waits for the deliveries the
// valid requests cause.
func seedWebhookFuzzFixtures(t *testing.T, env *apitest.Env, fx *fuzzFixtures) {
	t.Helper()
	recv := newReceiver(t, nil)
	body := endpointBody(fx.org, recv.URL, "api_key.created")
	endpoint := createEndpoint(t, env, apitest.OperatorToken, body)["id"].(string)
	event := sendTest(t, env, apitest.OperatorToken, endpoint)["event_id"].(string)
	fx.ids["webhook-endpoints"] = endpoint
	fx.ids["events"] = event
	fx.ids["delivery_id"] = waitForDelivery(t, env, apitest.OperatorToken, endpoint, event, "succeeded")["id"].(string)
	fx.byOperation["deleteWebhookEndpoint"] = createEndpoint(t, env, apitest.OperatorToken, body)["id"].(string)
}

// TestWebhookRecover_DeprecatedAlias: recover delivers what the endpoint missed as publishing
// would have: an endpoint naming both invoice.issued and its deprecated alias
// billing_invoice.issued receives invoice.issued only, never the alias beside it.
func TestWebhookRecover_DeprecatedAlias(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org, token := newOrganization(t, env)
	recv := newReceiver(t, nil)
	e := createEndpoint(t, env, token, endpointBody(org, recv.URL, "invoice.issued", "billing_invoice.issued"))
	id := e["id"].(string)
	since := time.Now().Add(-time.Minute)
	sub := createSubscription(t, env, token, org, productEinvoice, planEinvoiceSandbox)
	waitForService(t, env, token, sub.ID, "active")
	mustPatchEndpoint(t, env, token, id, `{"status":"disabled"}`)
	if resp := subscriptionAction(env, token, sub.ID, "select-plan", fmt.Sprintf(`{"plan_id":%q}`, planEinvoiceGrowthMonthly)); resp.Status != http.StatusOK {
		t.Fatalf("select a paid plan: %d %s", resp.Status, resp.Body)
	}
	var issued string
	if err := env.Pool.QueryRow(t.Context(), "SELECT id::text FROM webhook_events WHERE organization_id = $1 AND type = 'invoice.issued'", org).Scan(&issued); err != nil {
		t.Fatalf("the invoice.issued event: %v", err)
	}
	mustPatchEndpoint(t, env, token, id, `{"status":"enabled"}`)

	assertQueued(t, "recover", recoverSince(env, token, id, since, ""), 1)
	waitForDelivery(t, env, token, id, issued, "succeeded")
	if n := env.Count("SELECT count(*) FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE d.endpoint_id = $1 AND e.type = 'billing_invoice.issued'", id); n != 0 {
		t.Errorf("recover queued %d deliveries of billing_invoice.issued to an endpoint naming invoice.issued", n)
	}
}

// TestWebhookRecover_Concurrent: two recovers of one endpoint at once both succeed and
// between them deliver each missed event once. The test lines them up: a transaction of its
// own holds the key of a delivery of the first missed event, so both recovers, having listed
// the same missed events, wait to insert it; then it rolls back and lets them race.
func TestWebhookRecover_Concurrent(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org, token := newOrganization(t, env)
	recv := newReceiver(t, nil)
	id := createEndpoint(t, env, token, endpointBody(org, recv.URL, "api_key.created"))["id"].(string)
	since := time.Now().Add(-time.Minute)
	mustPatchEndpoint(t, env, token, id, `{"status":"disabled"}`)
	var missed []string
	for range 3 {
		missed = append(missed, eventOf(t, env, createKey(t, env, token, org, "organizations:read")))
	}
	mustPatchEndpoint(t, env, token, id, `{"status":"enabled"}`)

	hold := holdLocks(t, env, "INSERT INTO webhook_deliveries (id, organization_id, event_id, endpoint_id, status) VALUES ($1, $2, $3, $4, 'pending')",
		uuid.Must(uuid.NewV7()), org, missed[0], id)
	answers := make(chan *apitest.Response, 2)
	for range 2 {
		go func() { answers <- recoverSince(env, token, id, since, "") }()
	}
	hold.waitForWaiters(t, 2)
	hold.release(t)
	queued := 0
	for range 2 {
		resp := <-answers
		if resp.Status != http.StatusAccepted {
			t.Errorf("a concurrent recover: %d %s", resp.Status, resp.Body)
			continue
		}
		queued += int(resp.JSON(t)["queued"].(float64))
	}
	if queued != len(missed) {
		t.Errorf("the recovers queued %d deliveries between them, want %d", queued, len(missed))
	}
	for _, event := range missed {
		waitForDelivery(t, env, token, id, event, "succeeded")
		if n := env.Count("SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1 AND event_id = $2", id, event); n != 1 {
			t.Errorf("event %s: %d deliveries, want 1", event, n)
		}
	}
}

// TestWebhookRecover_FreshSchedule: a recovered delivery gets the whole retry schedule again,
// from its first delay: after its first recovered attempt fails, the next one is due after
// the policy's base delay, not the capped delay of an attempt deep into the first schedule.
func TestWebhookRecover_FreshSchedule(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org, token := newOrganization(t, env)
	p := apitest.WebhookPolicy
	release := make(chan struct{})
	recv := newReceiver(t, func(n int, _ received) int {
		if n <= p.MaxAttempts+1 {
			return http.StatusInternalServerError
		}
		<-release // holds the next attempt while the test reads the delay before it
		return http.StatusOK
	})
	t.Cleanup(func() { close(release) })
	id := createEndpoint(t, env, token, endpointBody(org, recv.URL, "api_key.created"))["id"].(string)
	since := time.Now().Add(-time.Minute)
	event := eventOf(t, env, createKey(t, env, token, org, "organizations:read"))
	waitForCount(t, env, 1, "SELECT count(*) FROM webhook_endpoints WHERE id = $1 AND status = 'disabled'", id)
	mustPatchEndpoint(t, env, token, id, `{"status":"enabled"}`)
	assertQueued(t, "recover", recoverSince(env, token, id, since, ""), 1)
	recv.waitFor(t, p.MaxAttempts+2) // the first recovered attempt failed; the second is held

	var delay time.Duration
	if err := env.Pool.QueryRow(t.Context(), `SELECT d.next_attempt_at - a.attempted_at - make_interval(secs => a.latency_ms / 1000.0)
		FROM webhook_deliveries d JOIN webhook_delivery_attempts a ON a.delivery_id = d.id
		WHERE d.endpoint_id = $1 AND d.event_id = $2 AND a.attempt = $3`, id, event, p.MaxAttempts+1).Scan(&delay); err != nil {
		t.Fatal(err)
	}
	// The base delay with its jitter is at most 1.25 × RetryBase (50 ms), the cap at least
	// 0.75 × RetryCap (150 ms); the bound between them leaves room for a slow machine.
	if limit := p.RetryCap*3/4 - 10*time.Millisecond; delay > limit {
		t.Errorf("after the first recovered attempt failed, the next was due %v later, want the schedule's first delay (%v ± 25 %%)", delay, p.RetryBase)
	}
}
