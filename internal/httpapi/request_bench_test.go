package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/provider/coreapi/internal/apitest"
)

// BenchmarkRequest serves the load benchmark's read requests in process, through the whole
// handler (request id, timeout, access log, gate with the API key's credential lookup,
// restrictions and rate limit, validation, the strict handler, its query on PostgreSQL,
// response encoding, request log), without the network: its allocations per request are
// what the API's own layers and queries cost, and a change to them shows here exactly,
// where a load run's figures move with the host.
func BenchmarkRequest(b *testing.B) {
	env := apitest.New(b)
	org := createOrganization(b, env, minimalOrganization)["id"].(string)
	// Each key may send 200 at once and 100 a second (the standard policy): the requests
	// take turns over enough keys that none is refused for its rate.
	keys := benchKeys(b, env, org, 128, `"organizations:read","products:read"`)
	for _, bc := range []struct{ name, path string }{
		{"GetOrganization", "/v1/organizations/" + org},
		{"ListProducts", "/v1/products"},
		{"ListPlans", "/v1/plans?product_id=0193a000-0000-7000-8000-000000000001"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			// Once over the network, for the response to be checked against the document.
			if resp := env.Do(apitest.Request{Method: http.MethodGet, Path: bc.path, Header: http.Header{"Authorization": {keys[0]}}}); resp.Status != http.StatusOK {
				b.Fatalf("status %d: %s", resp.Status, resp.Body)
			}
			requests := make([]*http.Request, len(keys))
			for i, key := range keys {
				requests[i] = httptest.NewRequest(http.MethodGet, bc.path, nil)
				requests[i].Header.Set("Authorization", key)
			}
			w := &discardResponse{header: http.Header{}}
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				clear(w.header)
				w.status = 0
				env.Handler.ServeHTTP(w, requests[i%len(requests)])
				if w.status != http.StatusOK {
					b.Fatalf("request %d: status %d", i, w.status)
				}
				i++
			}
		})
	}
}

// benchKeys creates n sandbox API keys of organization org with scopes (a JSON list's
// items) and returns their Authorization headers.
func benchKeys(b *testing.B, env *apitest.Env, org string, n int, scopes string) []string {
	b.Helper()
	keys := make([]string, n)
	for i := range keys {
		body := fmt.Sprintf(`{"organization_id":%q,"name":"bench-%d","environment":"sandbox","scopes":[%s]}`, org, i, scopes)
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: apitest.OperatorToken, Body: body})
		if resp.Status != http.StatusCreated {
			b.Fatalf("create key: status %d: %s", resp.Status, resp.Body)
		}
		var key struct {
			FullKey string `json:"full_key"`
		}
		if err := json.Unmarshal(resp.Body, &key); err != nil {
			b.Fatal(err)
		}
		keys[i] = "Bearer " + key.FullKey
	}
	return keys
}

// discardResponse is a response writer that keeps only the status.
type discardResponse struct {
	header http.Header
	status int
}

func (w *discardResponse) Header() http.Header { return w.header }
func (w *discardResponse) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return len(p), nil
}
func (w *discardResponse) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

// BenchmarkGenerateInvoiceRequest generates, stamps and stores simplified invoices through the
// whole handler, as the load benchmark's invoice scenario does, without the network: its
// allocations per request are issue 27's cost target (100 kB per generated, signed and
// stored invoice). The request itself (its body reader and headers) is made in the loop and
// counted, about 2 kB.
func BenchmarkGenerateInvoiceRequest(b *testing.B) {
	env := apitest.New(b)
	org := createOrganization(b, env, minimalOrganization)["id"].(string)
	body := invoiceBody(b, org, nil)
	if resp := env.Do(apitest.Request{Method: http.MethodPost, Path: invoicePath, Token: "dev:org:" + org, Body: body}); resp.Status != http.StatusCreated {
		b.Fatalf("status %d: %s", resp.Status, resp.Body)
	}
	w := &discardResponse{header: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, invoicePath, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer dev:org:"+org)
		r.Header.Set("Content-Type", "application/json")
		clear(w.header)
		w.status = 0
		env.Handler.ServeHTTP(w, r)
		if w.status != http.StatusCreated {
			b.Fatalf("status %d", w.status)
		}
	}
}
