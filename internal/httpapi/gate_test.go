package httpapi_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
)

// TestContractGate covers what the gate does for every operation alike.
func TestContractGate(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)

	t.Run("ErrUnknownPathIsNotFound", func(t *testing.T) {
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/nothing-here", Token: apitest.OperatorToken})
		assertProblem(t, "unknown path", resp, http.StatusNotFound, "not_found")
	})
	t.Run("ErrMethodNotAllowedListsAllow", func(t *testing.T) {
		resp := env.Do(apitest.Request{Method: http.MethodDelete, Path: "/v1/organizations/" + uuid.NewString(), Token: apitest.OperatorToken})
		assertProblem(t, "DELETE organization", resp, http.StatusMethodNotAllowed, "method_not_allowed")
		if got := resp.Header.Get("Allow"); got != "GET, PATCH" {
			t.Errorf("Allow = %q, want GET, PATCH", got)
		}
	})
	t.Run("ErrBodyTooLarge", func(t *testing.T) {
		big := `{"legal_name_ar":"` + strings.Repeat("a", 1<<20) + `"}`
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/organizations", Token: apitest.OperatorToken, Body: big})
		assertProblem(t, "1 MiB body", resp, http.StatusRequestEntityTooLarge, "payload_too_large")
	})
	t.Run("ErrInvalidUTF8", func(t *testing.T) {
		body := strings.Replace(minimalOrganization, "Example Co", "Example \xff Co", 1)
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/organizations", Token: apitest.OperatorToken, Body: body})
		assertProblem(t, "invalid UTF-8", resp, http.StatusBadRequest, "malformed_json")
	})
	t.Run("ErrBodyOnOperationWithoutBody", func(t *testing.T) {
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/subscriptions/" + uuid.NewString() + "/cancel",
			Token: apitest.OperatorToken, Body: `{"reason":"x"}`})
		assertProblem(t, "body on cancel", resp, http.StatusBadRequest, "validation_failed")
	})
	t.Run("ErrUnauthenticatedBeforeValidation", func(t *testing.T) {
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/organizations", Body: `{"nope":1}`})
		assertProblem(t, "no credential, bad body", resp, http.StatusUnauthorized, "unauthenticated")
	})
	t.Run("TokenEndpointNeedsNoCredential", func(t *testing.T) {
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/oauth/token",
			Body: `{"grant_type":"client_credentials","client_id":"x","client_secret":"y"}`})
		// Reaches the token handler: an unknown client, not a missing bearer.
		assertProblem(t, "token without bearer", resp, http.StatusUnauthorized, "invalid_client")
	})
	t.Run("RequestIdIsAlwaysGenerated", func(t *testing.T) {
		// A client's id is never adopted (issue 21, item 13): TestClientRequestIdIsOnlyCorrelated.
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/healthz",
			Header: http.Header{"Request-Id": {"client-trace-0001"}}})
		if got := resp.Header.Get("Request-Id"); !strings.HasPrefix(got, "req_") {
			t.Errorf("Request-Id = %q, want a generated one", got)
		}
		resp = env.Do(apitest.Request{Method: http.MethodGet, Path: "/healthz",
			Header: http.Header{"Request-Id": {"bad id\twith spaces"}}})
		if got := resp.Header.Get("Request-Id"); !strings.HasPrefix(got, "req_") {
			t.Errorf("Request-Id = %q, want a generated one", got)
		}
	})
	// A date-time whose offset carries it past year 9999 or before year 0 in UTC is valid RFC
	// 3339 text but an instant no response can write (encoding/json refuses it): accepted, it
	// was a 500 once the answer was rendered.
	t.Run("ErrDateTimeOutsideWhatUTCCanWrite", func(t *testing.T) {
		orgID := createOrganization(t, env, minimalOrganization)["id"].(string)
		for _, s := range []string{"9999-12-31T23:59:59-01:00", "0000-01-01T00:00:00+01:00"} {
			resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/growth/summary?since=" + url.QueryEscape(s),
				Token: apitest.OperatorToken})
			assertProblem(t, "growth summary since "+s, resp, http.StatusBadRequest, "validation_failed")
			resp = env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: apitest.OperatorToken,
				Body: `{"organization_id":"` + orgID + `","name":"far","environment":"sandbox","scopes":["address:read"],"expires_at":"` + s + `"}`})
			assertProblem(t, "api key expires_at "+s, resp, http.StatusBadRequest, "validation_failed")
		}
		// The edges themselves are fine.
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/growth/summary?since=" + url.QueryEscape("9999-12-31T23:59:59Z"),
			Token: apitest.OperatorToken})
		if resp.Status != http.StatusOK {
			t.Errorf("since 9999-12-31T23:59:59Z: %d %s", resp.Status, resp.Body)
		}
	})
	t.Run("HealthAndReadiness", func(t *testing.T) {
		for _, path := range []string{"/healthz", "/readyz"} {
			resp := env.Do(apitest.Request{Method: http.MethodGet, Path: path})
			if resp.Status != http.StatusOK {
				t.Errorf("%s: status %d: %s", path, resp.Status, resp.Body)
			}
		}
	})
}
