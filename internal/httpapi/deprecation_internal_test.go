package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// deprecationDocument has one operation of each kind, independent of openapi.yaml (which
// deprecates nothing today).
const deprecationDocument = `
openapi: 3.0.3
info: {title: t, version: 1.0.0}
paths:
  /current:
    get:
      operationId: current
      responses: {'204': {description: ok}}
  /dated:
    get:
      operationId: dated
      deprecated: true
      x-deprecated-at: '2026-01-15'
      x-sunset: '2026-12-31T23:59:59Z'
      responses: {'204': {description: ok}}
  /undated:
    get:
      operationId: undated
      deprecated: true
      responses: {'204': {description: ok}}
  /withparam:
    get:
      operationId: withparam
      deprecated: true
      x-sunset: '2027-06-30'
      parameters:
      - {name: n, in: query, required: true, schema: {type: integer}}
      responses: {'204': {description: ok}}
`

func contractOf(t *testing.T, document string) (*contract, error) {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData([]byte(document))
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return newContract(doc, nil, false, nil)
}

func TestDeprecationHeaders(t *testing.T) {
	t.Parallel()
	c, err := contractOf(t, deprecationDocument)
	if err != nil {
		t.Fatal(err)
	}
	h := c.middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	cases := []struct {
		name, target        string
		status              int
		deprecation, sunset string
	}{
		{"NotDeprecated", "/current", http.StatusNoContent, "", ""},
		{"WithDates", "/dated", http.StatusNoContent, "@1768435200", "Thu, 31 Dec 2026 23:59:59 GMT"},
		{"WithoutDates", "/undated", http.StatusNoContent, "true", ""},
		{"SunsetDateOnly", "/withparam?n=1", http.StatusNoContent, "true", "Wed, 30 Jun 2027 00:00:00 GMT"},
		{"AlsoOnErrors", "/withparam?n=x", http.StatusBadRequest, "true", "Wed, 30 Jun 2027 00:00:00 GMT"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.target, nil))
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if got := rec.Header().Get("Deprecation"); got != tc.deprecation {
				t.Errorf("Deprecation %q, want %q", got, tc.deprecation)
			}
			if got := rec.Header().Get("Sunset"); got != tc.sunset {
				t.Errorf("Sunset %q, want %q", got, tc.sunset)
			}
		})
	}
	t.Run("ErrBadSunsetDate", func(t *testing.T) {
		t.Parallel()
		_, err := contractOf(t, strings.Replace(deprecationDocument, "x-sunset: '2027-06-30'", "x-sunset: 'next summer'", 1))
		if err == nil || !strings.Contains(err.Error(), "x-sunset") {
			t.Fatalf("err = %v, want one naming x-sunset", err)
		}
	})
}
