package httpapi_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
)

func postWithKey(env *apitest.Env, token, path, key, body string) *apitest.Response {
	return env.Do(apitest.Request{Method: http.MethodPost, Path: path, Token: token, Body: body,
		Header: http.Header{"Idempotency-Key": {key}}})
}

func TestIdempotency(t *testing.T) {
	t.Parallel()

	t.Run("ReplaysTheFirstResponse", func(t *testing.T) {
		t.Parallel()
		env := apitest.New(t)
		first := postWithKey(env, apitest.OperatorToken, "/v1/organizations", "create-org-1", minimalOrganization)
		if first.Status != http.StatusCreated || first.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("first: %d %v %s", first.Status, first.Header, first.Body)
		}
		// The same request, keys in another order: the same logical request.
		var m map[string]any
		_ = json.Unmarshal([]byte(minimalOrganization), &m)
		reordered, _ := json.MarshalIndent(m, "", "  ")
		again := postWithKey(env, apitest.OperatorToken, "/v1/organizations", "create-org-1", string(reordered))
		if again.Status != http.StatusCreated || string(again.Body) != string(first.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %d %v %s", again.Status, again.Header, again.Body)
		}
		if n := env.Count("SELECT count(*) FROM organizations"); n != 1 {
			t.Errorf("organizations = %d, want 1", n)
		}
		if n := env.Count("SELECT count(*) FROM audit_events"); n != 1 {
			t.Errorf("audit events = %d, want 1", n)
		}
	})

	t.Run("ErrKeyReusedForAnotherRequest", func(t *testing.T) {
		t.Parallel()
		env := apitest.New(t)
		postWithKey(env, apitest.OperatorToken, "/v1/organizations", "k", minimalOrganization)
		other := strings.Replace(minimalOrganization, `"Example"`, `"Other"`, 1)
		assertProblem(t, "other body", postWithKey(env, apitest.OperatorToken, "/v1/organizations", "k", other),
			http.StatusUnprocessableEntity, "idempotency_key_reused")
		keyBody := `{"organization_id":"` + uuid.NewString() + `","name":"x","environment":"sandbox","scopes":["usage:read"]}`
		assertProblem(t, "other path", postWithKey(env, apitest.OperatorToken, "/v1/api-keys", "k", keyBody),
			http.StatusUnprocessableEntity, "idempotency_key_reused")
		if n := env.Count("SELECT count(*) FROM organizations"); n != 1 {
			t.Errorf("organizations = %d, want 1", n)
		}
	})

	t.Run("KeysBelongToTheirPrincipal", func(t *testing.T) {
		t.Parallel()
		f := newKeyFixture(t)
		a := f.createKey(t, []string{"api-keys:write", "usage:read"}, nil)["full_key"].(string)
		b := f.createKey(t, []string{"api-keys:write", "usage:read"}, nil)["full_key"].(string)
		body := `{"organization_id":"` + f.orgID + `","name":"child","environment":"sandbox","scopes":["usage:read"]}`
		ra := postWithKey(f.env, a, "/v1/api-keys", "same-key", body)
		rb := postWithKey(f.env, b, "/v1/api-keys", "same-key", body)
		if ra.Status != http.StatusCreated || rb.Status != http.StatusCreated || rb.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("two principals, one key: %d %d", ra.Status, rb.Status)
		}
		if ra.JSON(t)["id"] == rb.JSON(t)["id"] {
			t.Error("another principal got the first principal's response")
		}
	})

	// A key's tokens share its idempotency records, but a replay goes only to a credential
	// holding every scope of the first request's: a narrowed token gets no secret it could not
	// have had itself (issue 21, item 9).
	t.Run("ErrReplayToANarrowerCredential", func(t *testing.T) {
		t.Parallel()
		f := newKeyFixture(t)
		key := f.createKey(t, []string{"api-keys:write", "organizations:read", "usage:read"}, nil)
		narrowed := f.accessToken(t, key, "api-keys:write")
		body := `{"organization_id":"` + f.orgID + `","name":"child","environment":"sandbox","scopes":["usage:read"]}`
		first := postWithKey(f.env, key["full_key"].(string), "/v1/api-keys", "child", body)
		if first.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", first.Status, first.Body)
		}
		child := first.JSON(t)
		rotated := postWithKey(f.env, key["full_key"].(string), "/v1/api-keys/"+child["id"].(string)+"/rotate", "rotate", "")
		if rotated.Status != http.StatusCreated {
			t.Fatalf("rotate: %d %s", rotated.Status, rotated.Body)
		}
		keysBefore := f.env.Count("SELECT count(*) FROM api_keys")

		for name, r := range map[string]struct{ path, key, body, secret string }{
			"Create": {"/v1/api-keys", "child", body, child["secret"].(string)},
			"Rotate": {"/v1/api-keys/" + child["id"].(string) + "/rotate", "rotate", "", rotated.JSON(t)["secret"].(string)},
		} {
			replay := postWithKey(f.env, narrowed, r.path, r.key, r.body)
			assertProblem(t, name, replay, http.StatusForbidden, "insufficient_scope")
			if strings.Contains(string(replay.Body), r.secret) || replay.Header.Get("Idempotent-Replayed") != "" {
				t.Errorf("%s: a narrowed token received the stored response: %v %s", name, replay.Header, replay.Body)
			}
			// A credential with every scope of the first one gets the replay.
			full := postWithKey(f.env, f.accessToken(t, key, ""), r.path, r.key, r.body)
			if full.Status != http.StatusCreated || full.Header.Get("Idempotent-Replayed") != "true" || full.JSON(t)["secret"] != r.secret {
				t.Errorf("%s: replay to a token with the key's scopes: %d %v %s", name, full.Status, full.Header, full.Body)
			}
		}
		if n := f.env.Count("SELECT count(*) FROM api_keys"); n != keysBefore {
			t.Errorf("refused replays made %d keys", n-keysBefore)
		}
	})

	t.Run("SecretsReplayedButNotStoredInClear", func(t *testing.T) {
		t.Parallel()
		f := newKeyFixture(t)
		body := `{"organization_id":"` + f.orgID + `","name":"ci","environment":"sandbox","scopes":["usage:read"]}`
		first := postWithKey(f.env, apitest.OperatorToken, "/v1/api-keys", "key-create", body)
		again := postWithKey(f.env, apitest.OperatorToken, "/v1/api-keys", "key-create", body)
		secret := first.JSON(t)["secret"].(string)
		if again.JSON(t)["secret"] != secret || again.JSON(t)["full_key"] != first.JSON(t)["full_key"] {
			t.Fatalf("a retry must return the key created first: %s", again.Body)
		}
		if n := f.env.Count("SELECT count(*) FROM idempotency_keys WHERE position(convert_to($1, 'UTF8') in response_body) > 0", secret); n != 0 {
			t.Error("a stored response holds the secret in clear")
		}
		if n := f.env.Count("SELECT count(*) FROM api_keys"); n != 1 {
			t.Errorf("api keys = %d, want 1", n)
		}
	})

	t.Run("RefusalsAreReplayedAndChangeNothing", func(t *testing.T) {
		t.Parallel()
		env := apitest.New(t)
		body := `{"organization_id":"` + uuid.NewString() + `","name":"x","environment":"sandbox","scopes":["usage:read"]}`
		first := postWithKey(env, apitest.OperatorToken, "/v1/api-keys", "refused", body)
		assertProblem(t, "unknown organization", first, http.StatusUnprocessableEntity, "unprocessable")
		again := postWithKey(env, apitest.OperatorToken, "/v1/api-keys", "refused", body)
		if again.Status != first.Status || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("refusal replay: %d %v", again.Status, again.Header)
		}
		if n := env.Count("SELECT count(*) FROM api_keys"); n != 0 {
			t.Errorf("a refused request left %d keys", n)
		}
	})

	t.Run("ExpiredRecordsAreForgotten", func(t *testing.T) {
		t.Parallel()
		env := apitest.New(t)
		postWithKey(env, apitest.OperatorToken, "/v1/organizations", "old", minimalOrganization)
		env.Exec("UPDATE idempotency_keys SET expires_at = now() - interval '1 second'")
		again := postWithKey(env, apitest.OperatorToken, "/v1/organizations", "old", minimalOrganization)
		if again.Status != http.StatusCreated || again.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("after expiry: %d %v", again.Status, again.Header)
		}
		if n := env.Count("SELECT count(*) FROM organizations"); n != 2 {
			t.Errorf("organizations = %d, want 2", n)
		}
	})

	t.Run("ConcurrentRequestsAcrossProcessesCreateOnce", func(t *testing.T) {
		t.Parallel()
		env := apitest.New(t)
		sibling := env.Sibling()
		const n = 50
		statuses := make([]int, n)
		bodies := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				target := env
				if i%2 == 1 {
					target = sibling
				}
				resp := postWithKey(target, apitest.OperatorToken, "/v1/organizations", "race", minimalOrganization)
				statuses[i], bodies[i] = resp.Status, string(resp.Body)
			}()
		}
		wg.Wait()
		created := ""
		for i, s := range statuses {
			switch s {
			case http.StatusCreated:
				if created == "" {
					created = bodies[i]
				} else if bodies[i] != created {
					t.Errorf("two different 201 bodies for one key:\n%s\n%s", created, bodies[i])
				}
			case http.StatusConflict:
				if !strings.Contains(bodies[i], "idempotency_request_in_progress") || !strings.Contains(bodies[i], `"retryable":true`) {
					t.Errorf("409 body: %s", bodies[i])
				}
			default:
				t.Errorf("status %d: %s", s, bodies[i])
			}
		}
		if c := env.Count("SELECT count(*) FROM organizations"); c != 1 {
			t.Errorf("%d concurrent requests with one key created %d organizations", n, c)
		}
	})

	t.Run("TokenEndpointScopedByClient", func(t *testing.T) {
		t.Parallel()
		f := newKeyFixture(t)
		key := f.createKey(t, []string{"usage:read"}, nil)
		body, _ := json.Marshal(map[string]any{"grant_type": "client_credentials", "client_id": key["prefix"], "client_secret": key["secret"]})
		first := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/oauth/token", Body: string(body), Header: http.Header{"Idempotency-Key": {"tok"}}})
		again := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/oauth/token", Body: string(body), Header: http.Header{"Idempotency-Key": {"tok"}}})
		if first.Status != http.StatusOK || string(again.Body) != string(first.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("token replay: %d %s / %s", first.Status, first.Body, again.Body)
		}
		if n := f.env.Count("SELECT count(*) FROM oauth_tokens"); n != 1 {
			t.Errorf("tokens = %d, want 1", n)
		}
	})

	// A replay answers as the first response did, headers included: a token is never cached
	// (RFC 6749 §5.1), a client that authenticated with Basic is challenged (§5.2), a problem
	// is not stored by caches.
	t.Run("ReplaysTheFirstResponsesHeaders", func(t *testing.T) {
		t.Parallel()
		f := newKeyFixture(t)
		key := f.createKey(t, []string{"usage:read"}, nil)
		body, _ := json.Marshal(map[string]any{"grant_type": "client_credentials", "client_id": key["prefix"], "client_secret": key["secret"]})
		wrong := "Basic " + base64.StdEncoding.EncodeToString([]byte(key["prefix"].(string)+":wrong"))
		for name, req := range map[string]apitest.Request{
			"Token": {Method: http.MethodPost, Path: "/v1/oauth/token", Body: string(body)},
			"BasicRefused": {Method: http.MethodPost, Path: "/v1/oauth/token", Body: "grant_type=client_credentials",
				ContentType: "application/x-www-form-urlencoded", Header: http.Header{"Authorization": {wrong}}},
			"Problem": {Method: http.MethodPost, Path: "/v1/api-keys", Token: apitest.OperatorToken,
				Body: `{"organization_id":"` + uuid.NewString() + `","name":"x","environment":"sandbox","scopes":["usage:read"]}`},
		} {
			if req.Header == nil {
				req.Header = http.Header{}
			}
			req.Header.Set("Idempotency-Key", "headers-"+name)
			first, again := f.env.Do(req), f.env.Do(req)
			if again.Header.Get("Idempotent-Replayed") != "true" || again.Status != first.Status {
				t.Fatalf("%s: replay %d %v after %d", name, again.Status, again.Header, first.Status)
			}
			for _, h := range []string{"Cache-Control", "Pragma", "WWW-Authenticate"} {
				if got, want := again.Header.Values(h), first.Header.Values(h); !slices.Equal(got, want) {
					t.Errorf("%s: replayed %s %q, the first response's %q", name, h, got, want)
				}
			}
		}
	})
}

// TestIdempotentInvoiceRetry: the key names the logical operation, so a retry after a
// timeout returns the same document, never a second one (and never a second counter value),
// for both generation operations.
func TestIdempotentInvoiceRetry(t *testing.T) {
	t.Parallel()
	for name, op := range map[string]struct {
		path string
		body func(t testing.TB, org string) string
	}{
		"Simplified": {invoicePath, func(t testing.TB, org string) string { return invoiceBody(t, org, nil) }},
		"Standard": {standardInvoicePath, func(t testing.TB, org string) string {
			return standardBody(t, org, "standard_tax_invoice", nil)
		}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := apitest.New(t)
			org := createOrganization(t, env, minimalOrganization)["id"].(string)
			token := "dev:org:" + org
			body := op.body(t, org)
			first := postWithKey(env, token, op.path, "invoice-2025-03-01-0001", body)
			again := postWithKey(env, token, op.path, "invoice-2025-03-01-0001", body)
			if first.Status != http.StatusCreated || again.Status != http.StatusCreated || again.Header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("statuses %d %d, replayed %q", first.Status, again.Status, again.Header.Get("Idempotent-Replayed"))
			}
			if a, b := decodeInvoice(t, first), decodeInvoice(t, again); a.Invoice.ID != b.Invoice.ID || a.XML.Content != b.XML.Content {
				t.Errorf("a retry produced another invoice: %s vs %s", a.Invoice.ID, b.Invoice.ID)
			}
			if n := env.Count("SELECT count(*) FROM tax_invoices"); n != 1 {
				t.Errorf("tax invoices = %d, want 1", n)
			}
			if n := env.Count("SELECT count(*) FROM usage_events"); n != 1 {
				t.Errorf("usage units = %d, want 1 (a replay is not an operation)", n)
			}
			next := generateAt(t, env, op.path, token, body)
			if next.Invoice.Identity.ICV != 2 {
				t.Errorf("the next invoice has ICV %d, want 2 (no gap, no reuse)", next.Invoice.Identity.ICV)
			}
		})
	}
}
