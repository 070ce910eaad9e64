package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
	"github.com/provider/coreapi/internal/httpapi"
)

// implemented lists the operations whose issues have landed, with the status their example
// request gets from an operator against an empty database. Every other operation of the
// document must be routed and answer 501 not_implemented to a valid request.
var implemented = map[string]int{
	"createOrganization": http.StatusCreated,
	"getOrganization":    http.StatusNotFound,
	"updateOrganization": http.StatusNotFound,     // a random id names nothing
	"createOAuthToken":   http.StatusUnauthorized, // the example's client does not exist
	"createApiKey":       http.StatusUnprocessableEntity,
	"listApiKeys":        http.StatusOK,
	"getApiKey":          http.StatusNotFound,
	"revokeApiKey":       http.StatusNotFound,
	"rotateApiKey":       http.StatusNotFound,

	"createConnectedBusiness":           http.StatusForbidden, // the operator is not a platform organization
	"listConnectedBusinesses":           http.StatusOK,
	"getConnectedBusiness":              http.StatusNotFound,
	"updateConnectedBusiness":           http.StatusNotFound,
	"createConnectedBusinessCredential": http.StatusNotFound,

	"generateSimplifiedInvoice": http.StatusNotFound, // the example's organization does not exist
	"getTaxInvoice":             http.StatusNotFound,
	"generateStandardInvoice":   http.StatusNotFound, // the example's organization does not exist
	"listTaxInvoices":           http.StatusOK,       // the operator lists any organization's archive: the example's is empty
	"getTaxInvoiceXml":          http.StatusNotFound,
	"validateTaxInvoice":        http.StatusNotFound,  // the example's organization does not exist
	"submitTaxInvoice":          http.StatusForbidden, // submission is the taxpayer's, never the operator's
	"getTaxInvoiceSubmission":   http.StatusNotFound,
	"resolveShortAddress":       http.StatusOK,

	"createEgsUnit":                     http.StatusForbidden, // tenant only: the walk's operator is refused
	"listEgsUnits":                      http.StatusForbidden,
	"getEgsUnit":                        http.StatusForbidden,
	"issueEgsUnitProductionCertificate": http.StatusForbidden,
	"revokeEgsUnit":                     http.StatusForbidden,

	"putSpendControl":   http.StatusUnprocessableEntity, // the example's organization does not exist
	"listSpendControls": http.StatusOK,
	"getUsage":          http.StatusOK,
	"listAuditEvents":   http.StatusOK,

	"createVerifiedLoginOnboarding": http.StatusCreated,
	"getOrganizationOnboarding":     http.StatusNotFound, // a random id names no onboarded organization
	// Catalogue (the seeded catalogue is present on an empty database).
	"listProducts": http.StatusOK,
	"getProduct":   http.StatusNotFound,
	"listPlans":    http.StatusOK,
	// Catalogue administration: the examples create a product and a plan of the seeded
	// einvoice product; the random ids name nothing.
	"createProduct":   http.StatusCreated,
	"updateProduct":   http.StatusNotFound,
	"createPlan":      http.StatusCreated,
	"updatePlan":      http.StatusNotFound,
	"createPlanPrice": http.StatusNotFound,
	"updatePlanPrice": http.StatusNotFound,
	// Incidents: the random product ids name nothing.
	"listProductIncidents":   http.StatusNotFound,
	"openProductIncident":    http.StatusNotFound,
	"getProductIncident":     http.StatusNotFound,
	"resolveProductIncident": http.StatusNotFound,
	// Subscriptions: the example organization and the random ids name nothing.
	"listSubscriptions":      http.StatusNotFound,
	"createSubscription":     http.StatusNotFound,
	"getSubscription":        http.StatusNotFound,
	"selectSubscriptionPlan": http.StatusNotFound,
	"changeSubscriptionPlan": http.StatusNotFound,
	"cancelSubscription":     http.StatusNotFound,
	"reactivateSubscription": http.StatusNotFound,
	"suspendSubscription":    http.StatusNotFound,
	"resumeSubscription":     http.StatusNotFound,
	"terminateSubscription":  http.StatusNotFound,
	// Test clocks: the example organization and the random ids name nothing.
	"createTestClock":   http.StatusNotFound,
	"getTestClock":      http.StatusNotFound,
	"advanceTestClock":  http.StatusNotFound,
	"listSupportCases":  http.StatusOK,                  // the example organization_id is not an id
	"createSupportCase": http.StatusUnprocessableEntity, // the example's organization does not exist
	"getSupportCase":    http.StatusNotFound,
	"closeSupportCase":  http.StatusNotFound,
	"createGrowthEvent": http.StatusAccepted,
	"getGrowthSummary":  http.StatusOK,
	"listRequestLogs":   http.StatusOK,
	"getRequestLog":     http.StatusNotFound, // a random id names no log
	// Webhooks: the example organization and the random ids name nothing.
	"createWebhookEndpoint":       http.StatusNotFound,
	"listWebhookEndpoints":        http.StatusOK,
	"getWebhookEndpoint":          http.StatusNotFound,
	"deleteWebhookEndpoint":       http.StatusNotFound,
	"sendWebhookEndpointTest":     http.StatusNotFound,
	"updateWebhookEndpoint":       http.StatusNotFound,
	"rotateWebhookEndpointSecret": http.StatusNotFound,
	// Support workflow: the random ids name no case.
	"updateSupportCase":        http.StatusNotFound,
	"listSupportCaseMessages":  http.StatusNotFound,
	"createSupportCaseMessage": http.StatusNotFound,
	// Billing: the example organization has no invoices and the random ids name nothing.
	"listInvoices":                  http.StatusOK,
	"getInvoice":                    http.StatusNotFound,
	"listInvoiceLines":              http.StatusNotFound,
	"listInvoiceTaxDocuments":       http.StatusNotFound,
	"retryInvoiceTaxDocuments":      http.StatusNotFound,
	"getCreditBalance":              http.StatusNotFound, // the example's organization does not exist
	"listCreditBalanceTransactions": http.StatusOK,
	"createInvoicePayment":          http.StatusNotFound,
	"voidInvoice":                   http.StatusNotFound,
	"markInvoiceUncollectible":      http.StatusNotFound,
	"listPayments":                  http.StatusOK,
	"getPayment":                    http.StatusNotFound,
	"getUpcomingInvoice":            http.StatusNotFound,
	"listUpcomingInvoiceLines":      http.StatusNotFound,
	// Events and deliveries: the random ids name nothing.
	"listEvents":               http.StatusOK,
	"getEvent":                 http.StatusNotFound,
	"streamEvents":             http.StatusOK,
	"listWebhookDeliveries":    http.StatusNotFound,
	"resendWebhookDelivery":    http.StatusNotFound,
	"recoverWebhookDeliveries": http.StatusNotFound,
}

// TestEveryOperationIsRouted walks the document: each operation gets a request built from
// the document's own examples and must reach its handler (no 404/405, no 400 for a valid
// example). New operations are covered without touching this test.
func TestEveryOperationIsRouted(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	doc, err := httpapi.LoadDocument()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		methods := make([]string, 0, len(item.Operations()))
		for m := range item.Operations() {
			methods = append(methods, m)
		}
		sort.Strings(methods)
		for _, method := range methods {
			op := item.GetOperation(method)
			seen++
			req := exampleRequest(t, method, path, item, op)
			resp := env.Do(req)
			want, ok := implemented[op.OperationID]
			if !ok {
				assertProblem(t, op.OperationID, resp, http.StatusNotImplemented, "not_implemented")
				continue
			}
			if resp.Status != want {
				t.Errorf("%s: status %d, want %d: %s", op.OperationID, resp.Status, want, resp.Body)
			}
		}
	}
	if seen < 40 {
		t.Errorf("the document has %d operations; the v1 contract has more than 40", seen)
	}
}

// exampleRequest builds a valid request for op from the document's examples.
func exampleRequest(t *testing.T, method, path string, item *openapi3.PathItem, op *openapi3.Operation) apitest.Request {
	t.Helper()
	req := apitest.Request{Method: method, Token: apitest.OperatorToken, Header: http.Header{}}
	query := url.Values{}
	params := append(openapi3.Parameters{}, item.Parameters...)
	params = append(params, op.Parameters...)
	for _, ref := range params {
		p := ref.Value
		value := exampleParam(p)
		switch p.In {
		case "path":
			path = strings.ReplaceAll(path, "{"+p.Name+"}", value)
		case "query":
			if p.Required || p.Example != nil {
				query.Set(p.Name, value)
			}
		}
	}
	req.Path = path
	if len(query) > 0 {
		req.Path += "?" + query.Encode()
	}
	if op.RequestBody != nil && op.RequestBody.Value.Required {
		mt := op.RequestBody.Value.Content.Get("application/json")
		if mt == nil {
			t.Fatalf("%s: no application/json request body", op.OperationID)
		}
		ex := mt.Example
		if ex == nil {
			for _, e := range mt.Examples {
				ex = e.Value.Value
				break
			}
		}
		if ex == nil && mt.Schema != nil {
			ex = mt.Schema.Value.Example
		}
		if ex == nil {
			t.Fatalf("%s: the request body has no example", op.OperationID)
		}
		b, err := json.Marshal(ex)
		if err != nil {
			t.Fatal(err)
		}
		req.Body = string(b)
	}
	return req
}

func exampleParam(p *openapi3.Parameter) string {
	if p.Example != nil {
		return toString(p.Example)
	}
	s := p.Schema.Value
	switch {
	case s.Example != nil:
		return toString(s.Example)
	case len(s.Enum) > 0:
		return toString(s.Enum[0])
	case s.Format == "uuid":
		return uuid.NewString()
	case s.Format == "date-time":
		return "2026-01-01T00:00:00Z"
	case s.Type.Is("integer"):
		return "1"
	}
	return "example"
}

func toString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
