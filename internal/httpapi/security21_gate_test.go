package httpapi_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
	"github.com/provider/coreapi/internal/httpapi"
)

// maxProblemBytes is what any refused body may cost in answer (issue 21, item 3).
const maxProblemBytes = 64 << 10

// manyScopes is a body of createApiKey just under 1 MiB holding n scopes of no value: each
// used to cost an error repeating the whole list of scopes (96 MB for 100,000).
func manyScopes(n int) string {
	var b strings.Builder
	b.WriteString(`{"organization_id":"x","name":"n","environment":"sandbox","scopes":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"x%d"`, i)
	}
	b.WriteString(`]}`)
	return b.String()
}

// manyUnknownProperties is a token request with n properties the schema does not know.
func manyUnknownProperties(n int) string {
	var b strings.Builder
	b.WriteString(`{"grant_type":"client_credentials","client_id":"x","client_secret":"y"`)
	for i := range n {
		fmt.Fprintf(&b, `,"p%d":0`, i)
	}
	b.WriteString(`}`)
	return b.String()
}

type cappedProblem struct {
	Code   string `json:"code"`
	Detail string `json:"detail"`
	Errors []struct {
		Pointer string `json:"pointer"`
		Code    string `json:"code"`
	} `json:"errors"`
}

// TestValidationErrorsAreCapped: however many invalid values a body holds, the problem
// lists the first 50, its detail counts the rest, and the answer stays under 64 kB; on the
// token endpoint too, without any credential.
func TestValidationErrorsAreCapped(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	form := "grant_type=client_credentials&client_id=x&client_secret=y" + strings.Repeat("&p=0", 14_000)
	cases := []struct {
		name, path, token, body, code, detail string
		contentType                           string
	}{
		{"20000 invalid scopes", "/v1/api-keys", apitest.OperatorToken, manyScopes(20_000), "validation_failed",
			"at least 20000 invalid fields; errors lists the first 50, and 19950 more were found", ""},
		{"20000 invalid scopes, with a charset", "/v1/api-keys", apitest.OperatorToken, manyScopes(20_000), "validation_failed",
			"at least 20000 invalid fields; errors lists the first 50, and 19950 more were found", "application/json; charset=utf-8"},
		{"14000 unknown properties, no credential", "/v1/oauth/token", "", manyUnknownProperties(14_000), "invalid_request",
			"at least 14000 invalid fields; errors lists the first 50, and 13950 more were found", ""},
		{"14000 unknown form fields, no credential", "/v1/oauth/token", "", form, "invalid_request", "", "application/x-www-form-urlencoded"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.body) > 1<<20 {
				t.Fatalf("the body is %d bytes: over the limit, it would be 413", len(tc.body))
			}
			req := apitest.Request{Method: http.MethodPost, Path: tc.path, Token: tc.token, Body: tc.body}
			req.ContentType = tc.contentType
			resp := env.Do(req)
			if resp.Status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %.300s", resp.Status, resp.Body)
			}
			if len(resp.Body) >= maxProblemBytes {
				t.Errorf("the problem is %d bytes, want under %d", len(resp.Body), maxProblemBytes)
			}
			t.Logf("%d-byte body: a %d-byte problem", len(tc.body), len(resp.Body))
			var p cappedProblem
			if err := json.Unmarshal(resp.Body, &p); err != nil {
				t.Fatal(err)
			}
			if tc.detail == "" { // kin-openapi refuses the form as a whole: one error
				if p.Code != tc.code || len(p.Errors) != 1 {
					t.Errorf("code %q, %d errors; want %q and one error", p.Code, len(p.Errors), tc.code)
				}
				return
			}
			if p.Code != tc.code || len(p.Errors) != 50 || !strings.Contains(p.Detail, tc.detail) {
				t.Errorf("code %q, %d errors, detail %q; want %q, 50 errors, detail with %q", p.Code, len(p.Errors), p.Detail, tc.code, tc.detail)
			}
		})
	}
	t.Run("a huge property name", func(t *testing.T) {
		name := strings.Repeat("n", 900_000)
		for _, path := range []string{"/v1/oauth/token", "/v1/api-keys"} {
			resp := env.Do(apitest.Request{Method: http.MethodPost, Path: path, Token: apitest.OperatorToken,
				Body: `{"` + name + `":1,"grant_type":"client_credentials","client_id":"x","client_secret":"y"}`})
			if resp.Status != http.StatusBadRequest || len(resp.Body) >= maxProblemBytes {
				t.Errorf("%s: status %d, a %d-byte problem; want 400 under %d bytes", path, resp.Status, len(resp.Body), maxProblemBytes)
			}
		}
	})
	t.Run("few errors are all listed", func(t *testing.T) {
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: apitest.OperatorToken, Body: manyScopes(3)})
		var p cappedProblem
		if err := json.Unmarshal(resp.Body, &p); err != nil {
			t.Fatal(err)
		}
		if resp.Status != http.StatusBadRequest || len(p.Errors) != 3 || p.Detail != "The request has 3 invalid fields; see errors." {
			t.Errorf("status %d, %d errors, detail %q; want 400, 3 errors and their count", resp.Status, len(p.Errors), p.Detail)
		}
	})
}

// TestValidationErrorsBoundTheWork: refusing a body of 100,000 invalid values allocates
// about what reading the body does, not an error per value (it was over 600 MB). Not
// parallel, since it reads the process's allocation counters. Large, so that a request's fixed
// costs (the request log's copy of the body among them) stay small beside the body's.
func TestValidationErrorsBoundTheWork(t *testing.T) {
	env := apitest.New(t)
	for _, body := range []string{manyScopes(100_000), manyUnknownProperties(70_000)} {
		path, token := "/v1/api-keys", apitest.OperatorToken
		if strings.Contains(body, "grant_type") {
			path, token = "/v1/oauth/token", ""
		}
		serve := func() *httptest.ResponseRecorder {
			r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			if token != "" {
				r.Header.Set("Authorization", "Bearer "+token)
			}
			w := httptest.NewRecorder()
			env.Handler.ServeHTTP(w, r)
			return w
		}
		serve() // warm up: caches, pools
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		w := serve()
		runtime.ReadMemStats(&after)
		if w.Code != http.StatusBadRequest || w.Body.Len() >= maxProblemBytes {
			t.Errorf("%s: status %d, %d bytes; want 400 under %d bytes", path, w.Code, w.Body.Len(), maxProblemBytes)
		}
		// Decoding the body into values and checking each costs about 35 bytes a byte; an
		// error per value cost a thousand.
		if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 48*uint64(len(body)) {
			t.Errorf("%s: refusing a %d-byte body allocated %d bytes, want at most %d", path, len(body), allocated, 48*len(body))
		} else {
			t.Logf("%s: refusing a %d-byte body allocated %d bytes", path, len(body), allocated)
		}
	}
}

// BenchmarkInvalidBodyFlood measures refusing a body of 100,000 invalid scopes.
func BenchmarkInvalidBodyFlood(b *testing.B) {
	env := apitest.New(b)
	body := manyScopes(100_000)
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, "/v1/api-keys", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer "+apitest.OperatorToken)
		w := httptest.NewRecorder()
		env.Handler.ServeHTTP(w, r)
		if w.Code != http.StatusBadRequest {
			b.Fatalf("status %d", w.Code)
		}
	}
}

// tokenRequest is a JSON token request for a key's prefix and secret.
func tokenRequest(key map[string]any) string {
	b, _ := json.Marshal(map[string]any{"grant_type": "client_credentials", "client_id": key["prefix"], "client_secret": key["secret"]})
	return string(b)
}

// TestTokenEndpointRefusesCredentialsInTheURL: RFC 6749 §2.3.1 keeps client credentials
// out of the URL, where proxies and logs keep them (issue 21, item 7).
func TestTokenEndpointRefusesCredentialsInTheURL(t *testing.T) {
	t.Parallel()
	f := newKeyFixture(t)
	key := f.createKey(t, []string{"organizations:read"}, nil)
	secret := url.QueryEscape(key["secret"].(string))
	for _, query := range []string{
		// The whole client in the URL: it used to get a token (Go merges the query into the form).
		"client_id=" + url.QueryEscape(key["prefix"].(string)) + "&client_secret=" + secret,
		"client_secret=" + secret,
		"Client_Secret=" + secret,
		"client%5Fsecret=" + secret,
		"access_token=x",
		"scope=organizations:write", // not a credential, but it would be merged into the form's
	} {
		header := http.Header{"Authorization": {basicCredentials(key)}}
		if strings.HasPrefix(query, "client_id=") {
			header = nil
		}
		resp := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/oauth/token?" + query,
			Body: "grant_type=client_credentials", ContentType: "application/x-www-form-urlencoded", Header: header})
		assertProblem(t, "credential in the query "+query, resp, http.StatusBadRequest, "invalid_request")
		if resp.JSON(t)["error"] != "invalid_request" {
			t.Errorf("%s: no RFC 6749 error: %s", query, resp.Body)
		}
	}
	if n := f.env.Count("SELECT count(*) FROM oauth_tokens"); n != 0 {
		t.Errorf("%d tokens issued to requests with credentials in the URL", n)
	}
	// A query naming no credential changes nothing.
	resp := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/oauth/token?trace=1", Body: tokenRequest(key)})
	if resp.Status != http.StatusOK {
		t.Errorf("token with a harmless query: %d %s", resp.Status, resp.Body)
	}
}

func basicCredentials(key map[string]any) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(key["prefix"].(string))+":"+url.QueryEscape(key["secret"].(string))))
}

// TestClientRequestIdIsOnlyCorrelated: a Request-Id the client sends is never the
// request's id (it could be another tenant's); the server always makes its own, and the
// access log keeps the client's beside it (issue 21, item 13).
func TestClientRequestIdIsOnlyCorrelated(t *testing.T) {
	t.Parallel()
	logs := &apitest.SyncBuffer{}
	env := apitest.New(t, func(c *httpapi.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	org := createOrganization(t, env, minimalOrganization)["id"].(string)
	token := apitest.OrgToken(uuid.MustParse(org))
	// Another tenant's request, whose id the client learned.
	victim := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/organizations/" + org, Token: token})
	theirs := victim.Header.Get("Request-Id")
	for _, sent := range []string{theirs, "client-trace-0001"} {
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/organizations/" + uuid.NewString(), Token: token,
			Header: http.Header{"Request-Id": {sent}}})
		got := resp.Header.Get("Request-Id")
		if got == sent || !strings.HasPrefix(got, "req_") || resp.JSON(t)["request_id"] != got {
			t.Errorf("sent Request-Id %q: header %q, problem %v; want a generated id in both", sent, got, resp.JSON(t)["request_id"])
		}
		if !strings.Contains(logs.String(), `"request_id":"`+got+`","client_request_id":"`+sent+`"`) {
			t.Errorf("the access log does not pair %q with the client's %q:\n%s", got, sent, logs.String())
		}
	}
	env.FlushRequestLogs()
	if n := env.Count("SELECT count(*) FROM request_logs WHERE request_id = $1", theirs); n != 1 {
		t.Errorf("%d request logs carry the id %q, want only the request it was made for", n, theirs)
	}
}

// TestTokenEndpointHoldsTheKeysRules: a key's address and origin rules refuse the token,
// not only its use; the token says when it dies with its key; a development token for no
// organization is refused; two Authorization headers are refused (issue 21, item 14).
func TestTokenEndpointHoldsTheKeysRules(t *testing.T) {
	t.Parallel()
	f := newKeyFixture(t)
	token := func(key map[string]any, header http.Header) *apitest.Response {
		return f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/oauth/token", Body: tokenRequest(key), Header: header})
	}

	elsewhere := f.createKey(t, []string{"organizations:read"}, map[string]any{"allowed_ips": []string{"203.0.113.0/24"}})
	assertProblem(t, "token from a disallowed address", token(elsewhere, nil), http.StatusForbidden, "ip_not_allowed")
	web := f.createKey(t, []string{"organizations:read"}, map[string]any{"allowed_origins": []string{"https://app.example.com"}})
	assertProblem(t, "token from a disallowed origin", token(web, http.Header{"Origin": {"https://evil.example.com"}}), http.StatusForbidden, "origin_not_allowed")
	if n := f.env.Count("SELECT count(*) FROM oauth_tokens"); n != 0 {
		t.Errorf("%d tokens issued to refused clients", n)
	}
	if resp := token(web, http.Header{"Origin": {"https://app.example.com"}}); resp.Status != http.StatusOK {
		t.Errorf("token from the allowed origin: %d %s", resp.Status, resp.Body)
	}

	t.Run("expires_in is capped at the key's expiry", func(t *testing.T) {
		short := f.createKey(t, []string{"organizations:read"}, nil)
		f.env.Exec("UPDATE api_keys SET expires_at = now() + interval '10 minutes' WHERE id = $1", short["id"])
		resp := token(short, nil)
		if resp.Status != http.StatusOK {
			t.Fatalf("token: %d %s", resp.Status, resp.Body)
		}
		if in := resp.JSON(t)["expires_in"].(float64); in > 600 || in < 590 {
			t.Errorf("expires_in = %v for a key expiring in 600 s", in)
		}
		if n := f.env.Count("SELECT count(*) FROM oauth_tokens t JOIN api_keys k ON k.id = t.api_key_id WHERE k.id = $1 AND t.expires_at <= k.expires_at", short["id"]); n != 1 {
			t.Errorf("the stored token outlives its key")
		}
	})

	t.Run("a development token for no organization is refused", func(t *testing.T) {
		for _, path := range []string{"/v1/organizations/" + f.orgID, "/v1/api-keys"} {
			resp := f.get(apitest.OrgToken(uuid.New()), path)
			assertProblem(t, "unknown dev:org on "+path, resp, http.StatusUnauthorized, "unauthenticated")
		}
		if resp := f.get(apitest.OrgToken(uuid.MustParse(f.orgID)), "/v1/organizations/"+f.orgID); resp.Status != http.StatusOK {
			t.Errorf("dev:org of an existing organization: %d %s", resp.Status, resp.Body)
		}
	})

	t.Run("two Authorization headers are refused", func(t *testing.T) {
		key := f.createKey(t, []string{"organizations:read"}, nil)
		two := http.Header{"Authorization": {"Bearer " + key["full_key"].(string), "Bearer dev:operator"}}
		resp := f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/organizations/" + f.orgID, Header: two})
		assertProblem(t, "two bearer headers", resp, http.StatusBadRequest, "validation_failed")
		if !hasFieldError(resp, "Authorization") || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_request"`) {
			t.Errorf("want a field error on Authorization and an RFC 6750 challenge: %v %s", resp.Header, resp.Body)
		}
		basic := http.Header{"Authorization": {basicCredentials(key), "Basic eDp5"}}
		resp = f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/oauth/token", Body: "grant_type=client_credentials",
			ContentType: "application/x-www-form-urlencoded", Header: basic})
		assertProblem(t, "two Basic headers", resp, http.StatusBadRequest, "invalid_request")
	})
}
