package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/provider/coreapi/internal/apitest"
	"github.com/provider/coreapi/internal/httpapi"
	"github.com/provider/coreapi/internal/webhook/signature"
)

func patchEndpoint(env *apitest.Env, token, id, body string) *apitest.Response {
	return env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v1/webhook-endpoints/" + id, Token: token, Body: body})
}

// mustPatchEndpoint changes an endpoint with PATCH body and fails the test unless it is 200.
func mustPatchEndpoint(t testing.TB, env *apitest.Env, token, id, body string) {
	t.Helper()
	if resp := patchEndpoint(env, token, id, body); resp.Status != http.StatusOK {
		t.Fatalf("PATCH endpoint %s %s: %d %s", id, body, resp.Status, resp.Body)
	}
}

func rotateSecret(env *apitest.Env, token, id, body string, header http.Header) *apitest.Response {
	return env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/webhook-endpoints/" + id + "/rotate-secret", Token: token, Body: body, Header: header})
}

// endpointRow is what the database holds of an endpoint, to prove a refusal changed nothing.
func endpointRow(t *testing.T, env *apitest.Env, id string) string {
	t.Helper()
	var row string
	err := env.Pool.QueryRow(context.Background(), `SELECT concat_ws('|', url, description, array_to_string(enabled_events, ','), status,
		disabled_reason, updated_at, encode(secret, 'hex'), encode(previous_secret, 'hex'), enabled_at) FROM webhook_endpoints WHERE id = $1`, id).Scan(&row)
	if err != nil {
		t.Fatal(err)
	}
	return row
}

// eventsAbout counts the stored webhook events of type typ whose data is endpoint id.
func eventsAbout(env *apitest.Env, typ, id string) int {
	return env.Count("SELECT count(*) FROM webhook_events WHERE type = $1 AND data->>'id' = $2", typ, id)
}

// scopedToken is an API key of org holding scopes only.
func scopedToken(t *testing.T, env *apitest.Env, org string, scopes ...string) string {
	t.Helper()
	body := fmt.Sprintf(`{"organization_id":%q,"name":"scoped","environment":"sandbox","scopes":["%s"]}`, org, strings.Join(scopes, `","`))
	resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: apitest.OperatorToken, Body: body})
	if resp.Status != http.StatusCreated {
		t.Fatalf("create key: %d %s", resp.Status, resp.Body)
	}
	return resp.JSON(t)["full_key"].(string)
}

var _ = reachable("WebhookEndpointStatus", "disabled", func(t *testing.T, env *apitest.Env) map[string]any {
	org, token := newOrganization(t, env)
	e := createEndpoint(t, env, token, endpointBody(org, "http://127.0.0.1:9/hooks", "api_key.created"))
	return patchEndpoint(env, token, e["id"].(string), `{"status":"disabled"}`).JSON(t)
})

// quietEvent is an event type that nothing in these tests emits: an endpoint that must stay as
// it is (its row compared before and after) subscribes to it, so that no failing delivery to its
// unreachable URL disables it midway. The api keys the subtests create emit api_key.created.
const quietEvent = "support_case.closed"

func TestUpdateWebhookEndpoint(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org, token := newOrganization(t, env)

	t.Run("ChangesWhatTheBodyCarries", func(t *testing.T) {
		t.Parallel()
		e := createEndpoint(t, env, token, endpointBody(org, "http://127.0.0.1:9/a", quietEvent))
		id := e["id"].(string)
		resp := patchEndpoint(env, token, id, `{"url":"http://127.0.0.1:9/b","enabled_events":["support_case.closed","support_case.updated"],"description":null}`)
		if resp.Status != http.StatusOK {
			t.Fatalf("patch: %d %s", resp.Status, resp.Body)
		}
		got := resp.JSON(t)
		if got["url"] != "http://127.0.0.1:9/b" || fmt.Sprint(got["enabled_events"]) != "[support_case.closed support_case.updated]" ||
			got["description"] != nil || got["status"] != "enabled" || got["updated_at"] == e["updated_at"] {
			t.Errorf("patched endpoint: %s", resp.Body)
		}
		if _, ok := got["secret"]; ok {
			t.Error("the answer carries the secret")
		}
		if n := env.Count("SELECT count(*) FROM webhook_endpoints WHERE id = $1 AND url = $2 AND description IS NULL AND enabled_events = '{support_case.closed,support_case.updated}'",
			id, "http://127.0.0.1:9/b"); n != 1 {
			t.Error("the change is not stored")
		}
		if n := auditCount(env, id, "webhook_endpoint.updated"); n != 1 {
			t.Errorf("%d webhook_endpoint.updated audit events", n)
		}
		if n := eventsAbout(env, "webhook_endpoint.updated", id); n != 1 {
			t.Errorf("%d webhook_endpoint.updated events", n)
		}
		// The same body again, or none, changes nothing and records nothing.
		before := endpointRow(t, env, id)
		for _, body := range []string{`{"url":"http://127.0.0.1:9/b","description":null}`, `{}`} {
			if again := patchEndpoint(env, token, id, body); again.Status != http.StatusOK {
				t.Fatalf("no-op patch %s: %d %s", body, again.Status, again.Body)
			}
		}
		if endpointRow(t, env, id) != before || auditCount(env, id, "webhook_endpoint.updated") != 1 || eventsAbout(env, "webhook_endpoint.updated", id) != 1 {
			t.Error("a patch that changes nothing was recorded")
		}
	})

	t.Run("RefusalsChangeNothing", func(t *testing.T) {
		t.Parallel()
		e := createEndpoint(t, env, token, endpointBody(org, "http://127.0.0.1:9/a", quietEvent))
		id := e["id"].(string)
		before := endpointRow(t, env, id)
		for name, body := range map[string]string{
			"unknown field":   `{"secret":"whsec_AAAA"}`,
			"no events":       `{"enabled_events":[]}`,
			"unknown event":   `{"enabled_events":["nope.nope"]}`,
			"unknown status":  `{"status":"paused"}`,
			"numeric host":    `{"url":"http://2130706433:9/x"}`,
			"long desc":       fmt.Sprintf(`{"description":%q}`, strings.Repeat("d", 501)),
			"url with a user": `{"url":"http://user:pw@127.0.0.1:9/x"}`,
		} {
			assertProblem(t, name, patchEndpoint(env, token, id, body), http.StatusBadRequest, "validation_failed")
		}
		if endpointRow(t, env, id) != before || auditCount(env, id, "webhook_endpoint.updated") != 0 {
			t.Error("a refused patch changed the endpoint")
		}
	})

	t.Run("DisableAndReenable", func(t *testing.T) {
		t.Parallel()
		recv := newReceiver(t, nil)
		e := createEndpoint(t, env, token, endpointBody(org, recv.URL, quietEvent))
		id := e["id"].(string)
		disabled := patchEndpoint(env, token, id, `{"status":"disabled"}`)
		if got := disabled.JSON(t); disabled.Status != http.StatusOK || got["status"] != "disabled" || got["disabled_reason"] == nil {
			t.Fatalf("disable: %d %s", disabled.Status, disabled.Body)
		}
		if n := eventsAbout(env, "webhook_endpoint.disabled", id); n != 1 || eventsAbout(env, "webhook_endpoint.updated", id) != 0 {
			t.Errorf("%d webhook_endpoint.disabled events (and no updated one wanted)", n)
		}
		assertProblem(t, "test a disabled endpoint", env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/webhook-endpoints/" + id + "/test", Token: token}),
			http.StatusConflict, "invalid_state_transition")
		enabled := patchEndpoint(env, token, id, `{"status":"enabled"}`)
		if got := enabled.JSON(t); enabled.Status != http.StatusOK || got["status"] != "enabled" || got["disabled_reason"] != nil {
			t.Fatalf("re-enable: %d %s", enabled.Status, enabled.Body)
		}
		if n := eventsAbout(env, "webhook_endpoint.updated", id); n != 1 {
			t.Errorf("%d webhook_endpoint.updated events for the re-enabling", n)
		}
		sendTest(t, env, token, id)
		recv.waitFor(t, 1)
	})

	t.Run("ReenablingClearsTheFailureState", func(t *testing.T) {
		t.Parallel()
		// Every delivery fails until the endpoint is disabled; then the receiver recovers and
		// the endpoint is enabled again: the next event is delivered, and the failures before
		// the re-enabling count no more (enabled_at starts the run of failures again).
		var recovered atomic.Bool
		recv := newReceiver(t, func(int, received) int {
			if !recovered.Load() {
				return http.StatusBadGateway
			}
			return http.StatusOK
		})
		e := createEndpoint(t, env, token, endpointBody(org, recv.URL, quietEvent))
		id := e["id"].(string)
		sendTest(t, env, token, id)
		waitForCount(t, env, 1, "SELECT count(*) FROM webhook_endpoints WHERE id = $1 AND status = 'disabled'", id)
		if n := eventsAbout(env, "webhook_endpoint.disabled", id); n != 1 {
			t.Errorf("%d webhook_endpoint.disabled events after sustained failure", n)
		}
		recovered.Store(true)
		resp := patchEndpoint(env, token, id, `{"status":"enabled"}`)
		if got := resp.JSON(t); resp.Status != http.StatusOK || got["status"] != "enabled" || got["disabled_reason"] != nil {
			t.Fatalf("re-enable: %d %s", resp.Status, resp.Body)
		}
		if n := env.Count(`SELECT count(*) FROM webhook_endpoints WHERE id = $1 AND disabled_reason IS NULL
			AND enabled_at > (SELECT max(a.attempted_at) FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = $1)`, id); n != 1 {
			t.Error("re-enabling did not restart the run of failures")
		}
		event := sendTest(t, env, token, id)["event_id"]
		waitForCount(t, env, 1, "SELECT count(*) FROM webhook_deliveries WHERE event_id = $1 AND status = 'succeeded'", event)
	})

	t.Run("Tenancy", func(t *testing.T) {
		t.Parallel()
		e := createEndpoint(t, env, token, endpointBody(org, "http://127.0.0.1:9/a", quietEvent))
		id := e["id"].(string)
		before := endpointRow(t, env, id)
		_, otherToken := newOrganization(t, env)
		assertProblem(t, "patch another's", patchEndpoint(env, otherToken, id, `{"status":"disabled"}`), http.StatusNotFound, "not_found")
		assertProblem(t, "rotate another's", rotateSecret(env, otherToken, id, "", nil), http.StatusNotFound, "not_found")
		assertProblem(t, "patch unknown", patchEndpoint(env, otherToken, "0193b5ed-b5c6-70f3-9e0c-8192a3b4c5d6", `{"status":"disabled"}`), http.StatusNotFound, "not_found")
		if endpointRow(t, env, id) != before {
			t.Error("another organization changed the endpoint")
		}
		// The operator may change any.
		if resp := patchEndpoint(env, apitest.OperatorToken, id, `{"description":"by the operator"}`); resp.Status != http.StatusOK {
			t.Errorf("operator patch: %d %s", resp.Status, resp.Body)
		}
	})

	t.Run("Scopes", func(t *testing.T) {
		t.Parallel()
		e := createEndpoint(t, env, token, endpointBody(org, "http://127.0.0.1:9/a", quietEvent))
		id := e["id"].(string)
		before := endpointRow(t, env, id)
		reader := scopedToken(t, env, org, "webhooks:read")
		if resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/webhook-endpoints/" + id, Token: reader}); resp.Status != http.StatusOK {
			t.Errorf("webhooks:read reads: %d", resp.Status)
		}
		assertProblem(t, "read-only patch", patchEndpoint(env, reader, id, `{"status":"disabled"}`), http.StatusForbidden, "insufficient_scope")
		assertProblem(t, "read-only rotate", rotateSecret(env, reader, id, "", nil), http.StatusForbidden, "insufficient_scope")
		writer := scopedToken(t, env, org, "webhooks:write")
		assertProblem(t, "write-only read", env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/webhook-endpoints/" + id, Token: writer}),
			http.StatusForbidden, "insufficient_scope")
		if endpointRow(t, env, id) != before {
			t.Error("a refused credential changed the endpoint")
		}
		// webhooks:manage grants both.
		manager := scopedToken(t, env, org, "webhooks:manage")
		for _, r := range []apitest.Request{
			{Method: http.MethodGet, Path: "/v1/webhook-endpoints?organization_id=" + org},
			{Method: http.MethodGet, Path: "/v1/webhook-endpoints/" + id},
			{Method: http.MethodPatch, Path: "/v1/webhook-endpoints/" + id, Body: `{"description":"managed"}`},
			{Method: http.MethodPost, Path: "/v1/webhook-endpoints/" + id + "/rotate-secret"},
			{Method: http.MethodPost, Path: "/v1/webhook-endpoints/" + id + "/test"},
			{Method: http.MethodPost, Path: "/v1/webhook-endpoints", Body: endpointBody(org, "http://127.0.0.1:9/m", "api_key.created")},
			{Method: http.MethodDelete, Path: "/v1/webhook-endpoints/" + id},
		} {
			r.Token = manager
			if resp := env.Do(r); resp.Status >= 300 {
				t.Errorf("webhooks:manage %s %s: %d %s", r.Method, r.Path, resp.Status, resp.Body)
			}
		}
	})
}

// TestUpdateWebhookEndpoint_RefusesPrivateTargetsInProduction: a new URL is held to the rules
// of registration, and a refusal changes nothing.
func TestUpdateWebhookEndpoint_RefusesPrivateTargetsInProduction(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org, _ := newOrganization(t, env)
	token := scopedToken(t, env, org, "webhooks:read", "webhooks:write") // production mode takes no development token
	prod := env.Sibling(func(c *httpapi.Config) { c.Development = false })
	resp := prod.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/webhook-endpoints", Token: token,
		Body: endpointBody(org, "https://93.184.216.34/hooks", "api_key.created")})
	if resp.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", resp.Status, resp.Body)
	}
	id := resp.JSON(t)["id"].(string)
	before := endpointRow(t, env, id)
	for _, u := range []string{"https://10.0.0.7/x", "https://169.254.169.254/latest/meta-data/", "https://localhost/x", "http://93.184.216.34/x", "https://[::ffff:127.0.0.1]/x"} {
		resp := patchEndpoint(prod, token, id, fmt.Sprintf(`{"url":%q,"description":"moved"}`, u))
		assertProblem(t, u, resp, http.StatusBadRequest, "validation_failed")
		if !hasFieldError(resp, "/url") || !strings.Contains(string(resp.Body), "url_not_allowed") {
			t.Errorf("%s: no url_not_allowed error at /url: %s", u, resp.Body)
		}
	}
	if endpointRow(t, env, id) != before || auditCount(env, id, "webhook_endpoint.updated") != 0 || eventsAbout(env, "webhook_endpoint.updated", id) != 0 {
		t.Error("a refused URL changed the endpoint")
	}
	if resp := patchEndpoint(prod, token, id, `{"url":"https://93.184.216.35/hooks"}`); resp.Status != http.StatusOK {
		t.Errorf("public https URL: %d %s", resp.Status, resp.Body)
	}
}

// signatures splits a delivery's webhook-signature.
func signatures(d received) []string { return strings.Fields(d.Header.Get(signature.HeaderSignature)) }

func TestRotateWebhookEndpointSecret(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org, token := newOrganization(t, env)

	t.Run("GracePeriodSignsWithBoth", func(t *testing.T) {
		t.Parallel()
		recv := newReceiver(t, nil)
		// Subscribed to an event nothing here causes, so that only the test deliveries come:
		// the other subtests create API keys in the same organization, and an api_key.created
		// delivered before the grace period ended was once read as the one after it.
		e := createEndpoint(t, env, token, endpointBody(org, recv.URL, "invoice.paid"))
		id, old := e["id"].(string), e["secret"].(string)
		resp := rotateSecret(env, token, id, `{"grace_period_seconds":3600}`, nil)
		if resp.Status != http.StatusOK {
			t.Fatalf("rotate: %d %s", resp.Status, resp.Body)
		}
		got := resp.JSON(t)
		secret, _ := got["secret"].(string)
		expires, err := time.Parse(time.RFC3339Nano, fmt.Sprint(got["previous_secret_expires_at"]))
		if got["webhook_endpoint_id"] != id || !strings.HasPrefix(secret, "whsec_") || secret == old || err != nil ||
			expires.Before(time.Now().Add(59*time.Minute)) || expires.After(time.Now().Add(61*time.Minute)) {
			t.Fatalf("rotation: %s", resp.Body)
		}
		if n := auditCount(env, id, "webhook_endpoint.secret_rotated"); n != 1 || eventsAbout(env, "webhook_endpoint.secret_rotated", id) != 1 {
			t.Errorf("%d audit events, %d webhook events of the rotation", n, eventsAbout(env, "webhook_endpoint.secret_rotated", id))
		}
		sendTest(t, env, token, id)
		d := recv.waitFor(t, 1)[0]
		sigs := signatures(d)
		if len(sigs) != 2 {
			t.Fatalf("webhook-signature %q: want the new and the old signature", d.Header.Get(signature.HeaderSignature))
		}
		for name, s := range map[string]string{"new": secret, "old": old} {
			if err := signature.Verify(s, d.Header, d.Body, signature.DefaultTolerance); err != nil {
				t.Errorf("the %s secret does not verify: %v", name, err)
			}
		}
		// The new secret's signature comes first.
		first := d.Header.Clone()
		first.Set(signature.HeaderSignature, sigs[0])
		if err := signature.Verify(secret, first, d.Body, signature.DefaultTolerance); err != nil {
			t.Errorf("the first signature is not the new secret's: %v", err)
		}
		for _, s := range []string{secret, old, strings.TrimPrefix(secret, "whsec_"), strings.TrimPrefix(old, "whsec_")} {
			if n := env.Count(`SELECT count(*) FROM webhook_endpoints WHERE position(convert_to($1, 'UTF8') in secret) > 0
				OR position(convert_to($1, 'UTF8') in coalesce(previous_secret, '')) > 0`, s); n != 0 {
				t.Error("a secret is stored in clear")
			}
		}

		// When the grace period is over, the very next delivery is signed with the new secret
		// alone (the clock is moved by moving the expiry into the past).
		env.Exec("UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1", id)
		sendTest(t, env, token, id)
		d = recv.waitFor(t, 2)[1]
		if len(signatures(d)) != 1 || signature.Verify(secret, d.Header, d.Body, signature.DefaultTolerance) != nil ||
			signature.Verify(old, d.Header, d.Body, signature.DefaultTolerance) == nil {
			t.Errorf("after the grace period: webhook-signature %q", d.Header.Get(signature.HeaderSignature))
		}
	})

	t.Run("NoGracePeriodDropsTheOldSecretAtOnce", func(t *testing.T) {
		t.Parallel()
		recv := newReceiver(t, nil)
		e := createEndpoint(t, env, token, endpointBody(org, recv.URL, "invoice.paid")) // as above
		id, old := e["id"].(string), e["secret"].(string)
		resp := rotateSecret(env, token, id, `{"grace_period_seconds":0}`, nil)
		got := resp.JSON(t)
		if resp.Status != http.StatusOK || got["previous_secret_expires_at"] != nil {
			t.Fatalf("rotate: %d %s", resp.Status, resp.Body)
		}
		if n := env.Count("SELECT count(*) FROM webhook_endpoints WHERE id = $1 AND previous_secret IS NULL AND previous_secret_expires_at IS NULL", id); n != 1 {
			t.Error("the old secret is kept")
		}
		sendTest(t, env, token, id)
		d := recv.waitFor(t, 1)[0]
		if len(signatures(d)) != 1 || signature.Verify(got["secret"].(string), d.Header, d.Body, signature.DefaultTolerance) != nil ||
			signature.Verify(old, d.Header, d.Body, signature.DefaultTolerance) == nil {
			t.Errorf("webhook-signature %q: want the new secret's alone", d.Header.Get(signature.HeaderSignature))
		}
	})

	t.Run("DefaultGracePeriodIsADay", func(t *testing.T) {
		t.Parallel()
		e := createEndpoint(t, env, token, endpointBody(org, "http://127.0.0.1:9/a", quietEvent))
		resp := rotateSecret(env, token, e["id"].(string), "", nil)
		expires, err := time.Parse(time.RFC3339Nano, fmt.Sprint(resp.JSON(t)["previous_secret_expires_at"]))
		if resp.Status != http.StatusOK || err != nil || expires.Before(time.Now().Add(23*time.Hour)) || expires.After(time.Now().Add(25*time.Hour)) {
			t.Errorf("rotate without a body: %d %s", resp.Status, resp.Body)
		}
		for _, body := range []string{`{"grace_period_seconds":-1}`, `{"grace_period_seconds":604801}`, `{"grace":1}`} {
			assertProblem(t, body, rotateSecret(env, token, e["id"].(string), body, nil), http.StatusBadRequest, "validation_failed")
		}
		if n := auditCount(env, e["id"].(string), "webhook_endpoint.secret_rotated"); n != 1 {
			t.Errorf("%d rotations audited, want 1", n)
		}
	})

	t.Run("IdempotentReplay", func(t *testing.T) {
		t.Parallel()
		e := createEndpoint(t, env, token, endpointBody(org, "http://127.0.0.1:9/a", quietEvent))
		id := e["id"].(string)
		key := http.Header{"Idempotency-Key": {"rotate-" + id}}
		first := rotateSecret(env, token, id, `{"grace_period_seconds":60}`, key)
		before := endpointRow(t, env, id)
		again := rotateSecret(env, token, id, `{"grace_period_seconds":60}`, key)
		if first.Status != http.StatusOK || again.Status != http.StatusOK || again.Header.Get("Idempotent-Replayed") != "true" ||
			again.JSON(t)["secret"] != first.JSON(t)["secret"] {
			t.Fatalf("replay: %d %s / %d %s", first.Status, first.Body, again.Status, again.Body)
		}
		if endpointRow(t, env, id) != before || auditCount(env, id, "webhook_endpoint.secret_rotated") != 1 {
			t.Error("the replay rotated again")
		}
		secret := first.JSON(t)["secret"].(string)
		if n := env.Count("SELECT count(*) FROM idempotency_keys WHERE position(convert_to($1, 'UTF8') in response_body) > 0", secret); n != 0 {
			t.Error("a stored response holds the secret in clear")
		}
		assertProblem(t, "same key, other body", rotateSecret(env, token, id, `{"grace_period_seconds":0}`, key), http.StatusUnprocessableEntity, "idempotency_key_reused")
		// A narrower credential of the organization never receives the stored secret.
		reader := scopedToken(t, env, org, "webhooks:read")
		if resp := rotateSecret(env, reader, id, `{"grace_period_seconds":60}`, key); resp.Status != http.StatusForbidden || strings.Contains(string(resp.Body), secret) {
			t.Errorf("narrower replay: %d %s", resp.Status, resp.Body)
		}
	})
}

// TestWebhookDelivery_ReceiversAnswers: 410 Gone disables the endpoint at once; 429 and 503
// with Retry-After put the next attempt off (read in the database, not waited for).
func TestWebhookDelivery_ReceiversAnswers(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org, token := newOrganization(t, env)

	t.Run("GoneDisablesAtOnce", func(t *testing.T) {
		t.Parallel()
		// An organization of its own: its watcher must hear of this endpoint's disabling only,
		// not of the endpoints the sibling subtests' retries disable.
		org, token := newOrganization(t, env)
		watcher := newReceiver(t, nil)
		watching := createEndpoint(t, env, token, endpointBody(org, watcher.URL, "webhook_endpoint.disabled"))
		recv := newReceiver(t, func(int, received) int { return http.StatusGone })
		e := createEndpoint(t, env, token, endpointBody(org, recv.URL, "api_key.created"))
		id := e["id"].(string)
		event := sendTest(t, env, token, id)["event_id"]
		waitForCount(t, env, 1, "SELECT count(*) FROM webhook_endpoints WHERE id = $1 AND status = 'disabled' AND disabled_reason LIKE '%410 Gone%'", id)
		if n := env.Count("SELECT count(*) FROM webhook_deliveries WHERE event_id = $1 AND status = 'failed' AND attempts = 1", event); n != 1 {
			t.Error("the delivery answered 410 is not failed after one attempt")
		}
		if n := auditCount(env, id, "webhook_endpoint.disabled"); n != 1 {
			t.Errorf("%d webhook_endpoint.disabled audit events", n)
		}
		// The organization's other endpoint is told.
		ev := watcher.waitFor(t, 1)[0].event(t, watching["secret"].(string))
		if data, _ := ev["data"].(map[string]any); ev["type"] != "webhook_endpoint.disabled" || data["id"] != id || data["status"] != "disabled" {
			t.Errorf("webhook_endpoint.disabled event: %v", ev)
		}
		if n := len(recv.deliveries()); n != 1 {
			t.Errorf("%d attempts to a gone endpoint, want 1", n)
		}
	})

	// retryAfter has the receiver answer status with Retry-After value and returns how long
	// after the first attempt began the next one is scheduled (or, once the schedule has run
	// out, the last one was made), and the time it is scheduled for.
	retryAfter := func(t *testing.T, status int, value string) (time.Duration, time.Time) {
		srv := newRetryAfterReceiver(t, status, value)
		e := createEndpoint(t, env, token, endpointBody(org, srv, "api_key.created"))
		event := sendTest(t, env, token, e["id"].(string))["event_id"]
		waitForCount(t, env, 1, `SELECT count(*) FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
			WHERE d.event_id = $1 AND a.status_code = $2`, event, status)
		var delay time.Duration
		var next time.Time
		err := env.Pool.QueryRow(context.Background(), `SELECT d.next_attempt_at - a.attempted_at, d.next_attempt_at
			FROM webhook_deliveries d JOIN webhook_delivery_attempts a ON a.delivery_id = d.id WHERE d.event_id = $1 AND a.attempt = 1`, event).Scan(&delay, &next)
		if err != nil {
			t.Fatal(err)
		}
		return delay, next
	}
	t.Run("RetryAfterSeconds", func(t *testing.T) {
		t.Parallel()
		if d, _ := retryAfter(t, http.StatusTooManyRequests, "120"); d < 120*time.Second || d > 130*time.Second {
			t.Errorf("429 Retry-After: 120 put the next attempt off by %s", d)
		}
	})
	t.Run("RetryAfterDate", func(t *testing.T) {
		t.Parallel()
		at := time.Now().Add(10 * time.Minute).UTC()
		// The attempt is scheduled for the date itself, however long the answer took to
		// arrive; an HTTP date has whole seconds.
		if _, next := retryAfter(t, http.StatusServiceUnavailable, at.Format(http.TimeFormat)); next.Before(at.Truncate(time.Second)) || next.After(at.Add(10*time.Second)) {
			t.Errorf("503 Retry-After: %s scheduled the next attempt at %s", at.Format(http.TimeFormat), next.UTC().Format(time.RFC3339Nano))
		}
	})
	t.Run("RetryAfterIsBounded", func(t *testing.T) {
		t.Parallel()
		bound := apitest.WebhookPolicy.MaxRetryAfter
		if d, _ := retryAfter(t, http.StatusTooManyRequests, "99999999"); d < bound || d > bound+10*time.Second {
			t.Errorf("Retry-After: 99999999 put the next attempt off by %s, want the bound %s", d, bound)
		}
	})
	t.Run("OtherAnswersFollowTheSchedule", func(t *testing.T) {
		t.Parallel()
		// Retry-After counts on 429 and 503 only, and a 503 without it follows the schedule.
		for _, c := range []struct {
			status int
			value  string
		}{{http.StatusInternalServerError, "120"}, {http.StatusServiceUnavailable, ""}, {http.StatusServiceUnavailable, "soon"}} {
			if d, _ := retryAfter(t, c.status, c.value); d > 10*time.Second {
				t.Errorf("%d with Retry-After %q put the next attempt off by %s", c.status, c.value, d)
			}
		}
	})
}

// newRetryAfterReceiver answers every delivery status with Retry-After value ("" sends none)
// and returns its URL.
func newRetryAfterReceiver(t *testing.T, status int, value string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if value != "" {
			w.Header().Set("Retry-After", value)
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/hooks"
}

// seedWebhookFixtures gives the fuzzing test's webhook endpoint operations real endpoints:
// one for the reads, the changes and the rotation, and one for the deletion (walked first).
// Neither receives deliveries during the walk (attempts would change row counts meanwhile):
// they enable an event no other request emits, and the test event goes to a disabled one.
func seedWebhookFixtures(t *testing.T, env *apitest.Env, fx *fuzzFixtures, post func(path, token, body string) string) {
	t.Helper()
	endpoint := func() string {
		return post("/v1/webhook-endpoints", apitest.OperatorToken, endpointBody(fx.org, "http://127.0.0.1:9/fuzz", "plan.retired"))
	}
	fx.ids["webhook-endpoints"] = endpoint()
	disabled := endpoint()
	if r := patchEndpoint(env, apitest.OperatorToken, disabled, `{"status":"disabled"}`); r.Status != http.StatusOK {
		t.Fatalf("seed a disabled endpoint: %d %s", r.Status, r.Body)
	}
	fx.byOperation["deleteWebhookEndpoint"] = endpoint()
	fx.byOperation["sendWebhookEndpointTest"] = disabled
}
