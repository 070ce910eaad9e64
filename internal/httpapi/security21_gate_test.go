package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/provider/coreapi/internal/apitest"
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
	form := "grant_type=client_credentials&client_id=x&client_secret=y" + strings.Repeat("&p=0", 70_000)
	cases := []struct {
		name, path, token, body, code, detail string
		form                                  bool
	}{
		{"100000 invalid scopes", "/v1/api-keys", apitest.OperatorToken, manyScopes(100_000), "validation_failed",
			"at least 100000 invalid fields; errors lists the first 50, and 99950 more were found", false},
		{"70000 unknown properties, no credential", "/v1/oauth/token", "", manyUnknownProperties(70_000), "invalid_request",
			"at least 70000 invalid fields; errors lists the first 50, and 69950 more were found", false},
		{"70000 unknown form fields, no credential", "/v1/oauth/token", "", form, "invalid_request", "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.body) > 1<<20 {
				t.Fatalf("the body is %d bytes: over the limit, it would be 413", len(tc.body))
			}
			req := apitest.Request{Method: http.MethodPost, Path: tc.path, Token: tc.token, Body: tc.body}
			if tc.form {
				req.ContentType = "application/x-www-form-urlencoded"
			}
			resp := env.Do(req)
			if resp.Status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %.300s", resp.Status, resp.Body)
			}
			if len(resp.Body) >= maxProblemBytes {
				t.Errorf("the problem is %d bytes, want under %d", len(resp.Body), maxProblemBytes)
			}
			var p cappedProblem
			if err := json.Unmarshal(resp.Body, &p); err != nil {
				t.Fatal(err)
			}
			if tc.form { // kin-openapi refuses the form as a whole: one error
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
// about what reading the body does, not an error per value (it was over 600 MB).
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
