package httpapi_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/provider/coreapi/internal/apitest"
	"github.com/provider/coreapi/internal/httpapi"
	"github.com/provider/coreapi/internal/postgres"
)

// secretFields are the response fields that carry a credential shown once.
var secretFields = map[string]bool{"full_key": true, "secret": true, "access_token": true, "token": true, "signing_secret": true}

// collectSecrets adds every secret field of a JSON body to secrets.
func collectSecrets(body []byte, secrets map[string]bool) {
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && secretFields[k] && len(s) >= 16 {
					secrets[s] = true
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	var v any
	if json.Unmarshal(body, &v) == nil {
		walk(v)
	}
}

// TestLogsHoldNoSecrets runs a flow that creates every kind of credential with the server's
// JSON logger at debug level, including requests that fail with a secret in hand, and then
// looks for each secret (and each secret part of a key) in the logs.
func TestLogsHoldNoSecrets(t *testing.T) {
	t.Parallel()
	logs := &apitest.SyncBuffer{}
	env := apitest.New(t, func(c *httpapi.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	secrets := map[string]bool{}
	do := func(req apitest.Request) *apitest.Response {
		t.Helper()
		resp := env.Do(req)
		collectSecrets(resp.Body, secrets)
		return resp
	}
	mustCreate := func(what string, resp *apitest.Response) map[string]any {
		t.Helper()
		if resp.Status != http.StatusCreated && resp.Status != http.StatusOK {
			t.Fatalf("%s: %d: %s", what, resp.Status, resp.Body)
		}
		return resp.JSON(t)
	}

	// An operator token, minted as `coreapi operator-token` does, then used.
	_, opToken, err := postgres.NewOperatorTokenService(mustOpen(t, env)).Mint(context.Background(), "log check")
	if err != nil {
		t.Fatal(err)
	}
	secrets[opToken] = true
	org := mustCreate("organization", do(apitest.Request{Method: http.MethodPost, Path: "/v1/organizations", Token: opToken,
		Body: orgBody(t, "organization_type", `"reseller"`)}))
	orgID := org["id"].(string)

	// An API key (its full key and its secret), a rotation, and an OAuth token from each.
	key := mustCreate("api key", do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: opToken,
		Body: `{"organization_id":"` + orgID + `","name":"logs","environment":"sandbox","scopes":["organizations:read","api-keys:read","api-keys:write","connected-businesses:write","webhooks:write","invoice:generate","address:read"]}`}))
	full := key["full_key"].(string)
	rotated := mustCreate("rotation", do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys/" + key["id"].(string) + "/rotate", Token: full,
		Body: `{"grace_period_seconds":60}`}))
	for _, k := range []map[string]any{key, rotated} {
		form := url.Values{"grant_type": {"client_credentials"}, "client_id": {k["prefix"].(string)}, "client_secret": {k["secret"].(string)}}
		tok := mustCreate("oauth token", do(apitest.Request{Method: http.MethodPost, Path: "/v1/oauth/token",
			Body: form.Encode(), ContentType: "application/x-www-form-urlencoded", Header: http.Header{"Idempotency-Key": {"token-" + k["id"].(string)}}}))
		if r := do(apitest.Request{Method: http.MethodGet, Path: "/v1/organizations/" + orgID, Token: tok["access_token"].(string)}); r.Status != http.StatusOK {
			t.Fatalf("access token: %d", r.Status)
		}
	}
	// A replayed token response goes through the idempotency store.
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {key["prefix"].(string)}, "client_secret": {key["secret"].(string)}}
	do(apitest.Request{Method: http.MethodPost, Path: "/v1/oauth/token", Body: form.Encode(),
		ContentType: "application/x-www-form-urlencoded", Header: http.Header{"Idempotency-Key": {"token-" + key["id"].(string)}}})

	// A connected business and its product credential.
	cb := mustCreate("connected business", do(apitest.Request{Method: http.MethodPost, Path: "/v1/connected-businesses", Token: full,
		Body: businessBody("logs-1", nil)}))
	cred := mustCreate("credential", do(apitest.Request{Method: http.MethodPost, Path: "/v1/connected-businesses/" + cb["id"].(string) + "/credentials",
		Token: full, Body: `{"product":"address"}`}))
	do(apitest.Request{Method: http.MethodPost, Path: "/v1/address/resolve-short", Token: cred["full_key"].(string),
		Body: `{"short_address":"RRRD2929","language":"en"}`})

	// A webhook endpoint's signing secret, once webhooks are served.
	do(apitest.Request{Method: http.MethodPost, Path: "/v1/webhook-endpoints", Token: full,
		Body: `{"organization_id":"` + orgID + `","url":"https://hooks.example.com/provider","enabled_events":["subscription.created"]}`})

	// Failures with a secret in hand: a wrong secret for a real prefix, a secret in a
	// malformed body, a secret in the query string, a bad token grant.
	do(apitest.Request{Method: http.MethodGet, Path: "/v1/organizations/" + orgID, Token: key["prefix"].(string) + "_" + rotated["secret"].(string) + "x"})
	do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: full, Body: `{"name":"` + full + `",`})
	do(apitest.Request{Method: http.MethodGet, Path: "/v1/organizations/" + orgID + "?api_key=" + full, Token: full})
	do(apitest.Request{Method: http.MethodPost, Path: "/v1/oauth/token", ContentType: "application/x-www-form-urlencoded",
		Body: url.Values{"grant_type": {"client_credentials"}, "client_id": {key["prefix"].(string)}, "client_secret": {rotated["secret"].(string)}, "scope": {"nope:nope"}}.Encode()})
	do(apitest.Request{Method: http.MethodGet, Path: "/v1/organizations/" + orgID, Token: opToken + "x"})

	if len(secrets) < 8 {
		t.Fatalf("the flow created only %d secrets: %v", len(secrets), secrets)
	}
	out := logs.String()
	t.Logf("checked %d secrets against %d bytes of logs", len(secrets), len(out))
	if !strings.Contains(out, `"msg":"request"`) || !strings.Contains(out, `"level":"DEBUG"`) && !strings.Contains(out, `"level":"INFO"`) {
		t.Fatalf("the server logged nothing: %q", out)
	}
	for s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("the logs contain a secret (%.12s…)", s)
		}
		// The secret part of a full key is as sensitive as the whole.
		if i := strings.LastIndexByte(s, '_'); strings.HasPrefix(s, "sk_") && strings.Contains(out, s[i+1:]) {
			t.Errorf("the logs contain the secret part of key %.20s…", s)
		}
	}
}

// mustOpen returns the test database as the operator-token command sees it.
func mustOpen(t *testing.T, env *apitest.Env) *postgres.DB {
	t.Helper()
	return &postgres.DB{Pool: env.Pool, Events: httpapi.EventEncoder{}}
}

// TestAccessLogLine: every request gets one line with its method, path, route template,
// status, size, duration and request id, at the top level of the JSON record.
func TestAccessLogLine(t *testing.T) {
	t.Parallel()
	logs := &apitest.SyncBuffer{}
	env := apitest.New(t, func(c *httpapi.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	})
	id := "00000000-0000-4000-8000-000000000000"
	resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/organizations/" + id, Token: "dev:operator",
		Header: http.Header{"Request-Id": {"trace-access-log-1"}}})
	if resp.Status != http.StatusNotFound {
		t.Fatalf("status %d: %s", resp.Status, resp.Body)
	}
	var line map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		// The server's id, with the client's beside it (issue 21, item 13).
		if m["msg"] == "request" && m["request_id"] == resp.Header.Get("Request-Id") && m["client_request_id"] == "trace-access-log-1" {
			if line != nil {
				t.Fatalf("two access lines for one request: %v and %v", line, m)
			}
			line = m
		}
	}
	if line == nil {
		t.Fatalf("no access line with the request id: %s", logs.String())
	}
	want := map[string]any{"level": "INFO", "method": "GET", "path": "/v1/organizations/" + id,
		"route": "/v1/organizations/{id}", "status": float64(404), "bytes": float64(len(resp.Body))}
	for k, v := range want {
		if line[k] != v {
			t.Errorf("%s: got %v, want %v (line %v)", k, line[k], v, line)
		}
	}
	if d, ok := line["duration"].(float64); !ok || d <= 0 {
		t.Errorf("duration %v", line["duration"])
	}
}
