package httpapi

import (
	"context"
	"github.com/provider/coreapi/internal/metrics"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/core"
)

// fixedPrincipal authenticates every request as one organization with every scope.
type fixedPrincipal struct{ p *core.Principal }

func (f fixedPrincipal) Authenticate(context.Context, *http.Request) (*core.Principal, error) {
	return f.p, nil
}

// BenchmarkContractGate times the contract gate per operation of the load benchmark:
// finding the operation, the scope check and kin-openapi's validation of parameters and
// body (authentication is a fixed principal here; BenchmarkCredentialLookup in
// internal/postgres times it). Target: at most 20 µs and a handful of allocations.
func BenchmarkContractGate(b *testing.B) {
	doc, err := LoadDocument()
	if err != nil {
		b.Fatal(err)
	}
	org := uuid.MustParse("0193b5e2-4a1c-7d2e-8f30-5a6b7c8d9e01")
	gate, err := newContract(doc, fixedPrincipal{&core.Principal{
		Kind: core.PrincipalOrganization, OrganizationID: org, Subject: "bench", Scopes: ScopesOf(doc),
	}}, false, metrics.New())
	if err != nil {
		b.Fatal(err)
	}
	passed := false
	h := gate.middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { passed = true }))
	invoice := `{"organization_id":"` + org.String() + `","tax_calculation_mode":"service_calculated","requested_invoice_type":"simplified_tax_invoice",` +
		`"seller":{"legal_name":"Nakhla","vat_number":"310123456700003","commercial_registration":"1010123456",` +
		`"address":{"street_name":"King Fahd Road","building_number":"2929","district":"Al Olaya","city":"Riyadh","postal_code":"12214","country_code":"SA"}},` +
		`"line_items":[{"line_id":"1","name_en":"Coffee","quantity":2,"unit_code":"PCE","unit_price":4500,"tax_category":"S","tax_rate":15}]}`
	for _, bc := range []struct{ name, method, path, body string }{
		{"GetOrganization", "GET", "/v1/organizations/" + org.String(), ""},
		{"ListProducts", "GET", "/v1/products", ""},
		{"ListPlans", "GET", "/v1/plans?product_id=0193a000-0000-7000-8000-000000000001", ""},
		{"CreateSupportCase", "POST", "/v1/support-cases", `{"organization_id":"` + org.String() + `","subject":"Invoices fail","description":"Every invoice reports BR-KSA-40.","severity":"medium","category":"technical","product_id":"einvoice","diagnostics":{"sdk":"go","retries":3}}`},
		{"CreateGrowthEvent", "POST", "/v1/growth/events", `{"event_name":"page_view","organization_id":"` + org.String() + `","anonymous_id":"visitor-000001","traffic_type":"load_test","product":"einvoice","source":"bench","page_path":"/pricing"}`},
		{"GenerateSimplifiedInvoice", "POST", "/v1/taxauth/invoices/generate/simplified", invoice},
	} {
		b.Run(bc.name, func(b *testing.B) {
			// One request, its body rewound for every round, and one response writer: what
			// is measured is the gate's own work, as the server would do it per request.
			body := strings.NewReader(bc.body)
			r := httptest.NewRequest(bc.method, bc.path, body)
			if bc.body != "" {
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Idempotency-Key", "bench-key-1")
			}
			w := &discardWriter{header: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				body.Reset(bc.body)
				clear(w.header)
				passed = false
				h.ServeHTTP(w, r)
				if !passed {
					b.Fatalf("refused: %d", w.status)
				}
			}
		})
	}
}

// discardWriter is a response writer that keeps only the status.
type discardWriter struct {
	header http.Header
	status int
}

func (w *discardWriter) Header() http.Header         { return w.header }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(status int)      { w.status = status }

// BenchmarkProblemRendering times the answer to a request that fails validation on two
// fields, the most elaborate problem document.
func BenchmarkProblemRendering(b *testing.B) {
	err := &core.Error{Code: core.EValidation, Message: "The request has 2 invalid fields; see errors.", Fields: []core.FieldError{
		{Location: "body", Pointer: "/country", Code: "pattern", Message: "Field /country: string doesn't match the pattern."},
		{Location: "body", Pointer: "/display_name", Code: "required", Message: "Field /display_name is required."},
	}}
	r := httptest.NewRequest("POST", "/v1/organizations", nil)
	r = r.WithContext(core.WithRequestID(r.Context(), "req_0193b5e2-4a1c-7d2e-8f30-5a6b7c8d9e01"))
	b.ReportAllocs()
	for b.Loop() {
		writeProblem(httptest.NewRecorder(), r, err)
	}
}
