package httpapi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/provider/coreapi/internal/apitest"
)

// TestWithdrawnAccessRefusedAtOnce withdraws a credential and uses it again at once, in a
// loop, on a server that caches credentials as production does (with a TTL of an hour, so
// only the invalidation can explain a refusal): the very next request of the process that
// made the change is refused, whatever withdrew the access (issue 21, item 4). Before the
// fix, the cache was emptied by a notification that arrived after the change had answered,
// and the next request was let in.
func TestWithdrawnAccessRefusedAtOnce(t *testing.T) {
	t.Parallel()
	const rounds = 10
	f := newKeyFixture(t, apitest.WithCredentialCache(time.Hour))
	env := f.env
	orgPath := "/v1/organizations/" + f.orgID
	// used shows the credential accepted twice, so that the second came from the cache.
	used := func(t *testing.T, token string) {
		t.Helper()
		for range 2 {
			if r := f.get(token, orgPath); r.Status != http.StatusOK {
				t.Fatalf("before the change: %d %s", r.Status, r.Body)
			}
		}
	}
	refused := func(t *testing.T, round int, token string) {
		t.Helper()
		assertProblem(t, fmt.Sprintf("round %d: the next request", round), f.get(token, orgPath), http.StatusUnauthorized, "unauthenticated")
	}
	post := func(t *testing.T, path, body string, header http.Header, want int) {
		t.Helper()
		r := env.Do(apitest.Request{Method: http.MethodPost, Path: path, Token: apitest.OperatorToken, Body: body, Header: header})
		if r.Status != want {
			t.Fatalf("POST %s: %d %s", path, r.Status, r.Body)
		}
	}

	t.Run("Revoke", func(t *testing.T) {
		for i := range rounds {
			key := f.createKey(t, []string{"organizations:read"}, nil)
			used(t, key["full_key"].(string))
			post(t, "/v1/api-keys/"+key["id"].(string)+"/revoke", "", nil, http.StatusOK)
			refused(t, i, key["full_key"].(string))
		}
	})
	t.Run("RevokeIdempotent", func(t *testing.T) {
		// The change commits with the idempotent request's own transaction, after the handler.
		for i := range rounds {
			key := f.createKey(t, []string{"organizations:read"}, nil)
			used(t, key["full_key"].(string))
			post(t, "/v1/api-keys/"+key["id"].(string)+"/revoke", "", http.Header{"Idempotency-Key": {fmt.Sprintf("revoke-%d", i)}}, http.StatusOK)
			refused(t, i, key["full_key"].(string))
		}
	})
	t.Run("RotateWithoutGrace", func(t *testing.T) {
		for i := range rounds {
			key := f.createKey(t, []string{"organizations:read"}, nil)
			used(t, key["full_key"].(string))
			post(t, "/v1/api-keys/"+key["id"].(string)+"/rotate", `{"grace_period_seconds":0}`, nil, http.StatusCreated)
			refused(t, i, key["full_key"].(string))
		}
	})
	t.Run("RotateGraceEnds", func(t *testing.T) {
		key := f.createKey(t, []string{"organizations:read"}, nil)
		used(t, key["full_key"].(string))
		post(t, "/v1/api-keys/"+key["id"].(string)+"/rotate", `{"grace_period_seconds":1}`, nil, http.StatusCreated)
		used(t, key["full_key"].(string)) // within its grace
		time.Sleep(1100 * time.Millisecond)
		refused(t, 0, key["full_key"].(string))
	})
	t.Run("TokenDiesWithItsKey", func(t *testing.T) {
		for i := range rounds {
			key := f.createKey(t, []string{"organizations:read"}, nil)
			r := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/oauth/token", ContentType: "application/x-www-form-urlencoded",
				Body: url.Values{"grant_type": {"client_credentials"}, "client_id": {key["prefix"].(string)}, "client_secret": {key["secret"].(string)}}.Encode()})
			if r.Status != http.StatusOK {
				t.Fatalf("token: %d %s", r.Status, r.Body)
			}
			token := r.JSON(t)["access_token"].(string)
			used(t, token)
			post(t, "/v1/api-keys/"+key["id"].(string)+"/revoke", "", nil, http.StatusOK)
			refused(t, i, token)
		}
	})
	t.Run("ConnectedBusinessSuspendedOrClosed", func(t *testing.T) {
		p := newPlatform(t, env)
		for i := range rounds {
			cb := p.create(t, businessBody(fmt.Sprintf("withdraw-%d", i), map[string]any{"products": []string{"address"}}))
			id := cb["id"].(string)
			r := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/connected-businesses/" + id + "/credentials", Token: p.token, Body: `{"product":"address"}`})
			if r.Status != http.StatusCreated {
				t.Fatalf("credential: %d %s", r.Status, r.Body)
			}
			key := r.JSON(t)["full_key"].(string)
			resolve := func() *apitest.Response {
				return env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/address/resolve-short", Token: key,
					Body: `{"short_address":"RRMA1234","language":"en"}`})
			}
			for range 2 {
				if r := resolve(); r.Status != http.StatusOK {
					t.Fatalf("before the change: %d %s", r.Status, r.Body)
				}
			}
			status := []string{"suspended", "closed"}[i%2]
			r = env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v1/connected-businesses/" + id, Token: p.token,
				Body: `{"lifecycle_status":"` + status + `"}`})
			if r.Status != http.StatusOK {
				t.Fatalf("%s: %d %s", status, r.Status, r.Body)
			}
			assertProblem(t, fmt.Sprintf("round %d: the next request after %s", i, status), resolve(), http.StatusUnauthorized, "unauthenticated")
		}
	})
}
