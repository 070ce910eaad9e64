package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"net/http"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/provider/coreapi/internal/apitest"
	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/httpapi"
)

// eventDataSchemas is the table of the document's WebhookEventType description: the schema
// of the data of each event type.
var eventDataSchemas = map[string]string{
	"subscription.created":                   "Subscription",
	"subscription.activated":                 "Subscription",
	"subscription.plan_changed":              "Subscription",
	"subscription.cancelled":                 "Subscription",
	"subscription.reactivated":               "Subscription",
	"subscription.suspended":                 "Subscription",
	"subscription.resumed":                   "Subscription",
	"subscription.terminated":                "Subscription",
	"subscription.degraded":                  "Subscription",
	"subscription.restored":                  "Subscription",
	"subscription.renewed":                   "Subscription",
	"subscription.overdue":                   "Subscription",
	"subscription.payment_retry_failed":      "Subscription",
	"subscription.written_off":               "Subscription",
	"subscription.recovered":                 "Subscription",
	"billing_invoice.issued":                 "BillingInvoice",
	"invoice.issued":                         "BillingInvoice",
	"invoice.paid":                           "BillingInvoice",
	"invoice.payment_failed":                 "BillingInvoice",
	"invoice.voided":                         "BillingInvoice",
	"invoice.uncollectible":                  "BillingInvoice",
	"connected_business.created":             "ConnectedBusiness",
	"connected_business.updated":             "ConnectedBusiness",
	"api_key.created":                        "ApiKey",
	"api_key.revoked":                        "ApiKey",
	"api_key.rotated":                        "ApiKey",
	"support_case.opened":                    "SupportCase",
	"support_case.closed":                    "SupportCase",
	"support_case.updated":                   "SupportCase",
	"support_case.message_created":           "SupportCaseMessage",
	"spend_control.warning_reached":          "SpendControlStatus",
	"spend_control.hard_limit_reached":       "SpendControlStatus",
	"tax_invoice.generated":                  "TaxInvoiceEventData",
	"product.updated":                        "Product",
	"plan.deprecated":                        "Plan",
	"plan.retired":                           "Plan",
	"webhook_endpoint.test":                  "WebhookTestEventData",
	"organization.updated":                   "Organization",
	"webhook_endpoint.updated":               "WebhookEndpoint",
	"webhook_endpoint.secret_rotated":        "WebhookEndpoint",
	"webhook_endpoint.disabled":              "WebhookEndpoint",
	"egs_unit.registered":                    "EgsUnit",
	"egs_unit.production_certificate_issued": "EgsUnit",
	"egs_unit.revoked":                       "EgsUnit",
	"invoice.tax_document_issued":            "InvoiceTaxDocumentList",
	"invoice.tax_document_failed":            "InvoiceTaxDocumentList",
	"tax_invoice.submitted":                  "TaxInvoiceSubmission",
	"credit_balance.updated":                 "CreditBalanceTransaction",
	"invoice.tax_document_retried":           "InvoiceTaxDocumentList",
}

var (
	eventDocOnce sync.Once
	eventDoc     *openapi3.T
	eventDocErr  error
)

func schema(t testing.TB, name string) *openapi3.Schema {
	t.Helper()
	eventDocOnce.Do(func() { eventDoc, eventDocErr = httpapi.LoadDocument() })
	if eventDocErr != nil {
		t.Fatal(eventDocErr)
	}
	ref := eventDoc.Components.Schemas[name]
	if ref == nil {
		t.Fatalf("no schema %s in the document", name)
	}
	return ref.Value
}

// validateEvent checks a delivery body against the document's WebhookEvent, and its data
// against the schema its type names.
func validateEvent(t testing.TB, body []byte) {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal(body, &ev); err != nil {
		t.Fatalf("event body: %v", err)
	}
	if err := schema(t, "WebhookEvent").VisitJSON(ev); err != nil {
		t.Errorf("delivery does not match WebhookEvent: %v\n%s", err, body)
	}
	typ, _ := ev["type"].(string)
	validateEventData(t, typ, ev["data"])
}

func validateEventData(t testing.TB, typ string, data any) {
	t.Helper()
	name, ok := eventDataSchemas[typ]
	if !ok {
		t.Errorf("event type %q is not in the document's table", typ)
		return
	}
	if err := schema(t, name).VisitJSON(data); err != nil {
		b, _ := json.Marshal(data)
		t.Errorf("%s data does not match %s: %v\n%s", typ, name, err, b)
	}
}

// TestWebhookEvents_MatchTheDocument triggers every event type reachable through the API and
// checks that each stored event, and each delivery of it, is exactly what the document says.
func TestWebhookEvents_MatchTheDocument(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	began := time.Now()
	p := newPlatform(t, env) // a reseller, so connected businesses are allowed
	org, token := p.orgID, p.token
	recv := newReceiver(t, nil)
	all := allEventTypes(t)
	endpoint := createEndpoint(t, env, token, endpointBody(org, recv.URL, all...))
	do := func(method, path, body string, want int) map[string]any {
		t.Helper()
		resp := env.Do(apitest.Request{Method: method, Path: path, Token: token, Body: body})
		if resp.Status != want {
			t.Fatalf("%s %s: %d %s", method, path, resp.Status, resp.Body)
		}
		if len(resp.Body) == 0 || resp.Body[0] != '{' {
			return nil
		}
		return resp.JSON(t)
	}

	// Subscriptions: created, activated (provisioning completes), plan changed (select-plan
	// issuing an invoice, change-plan), suspended, resumed, cancelled, reactivated, terminated.
	sub := createSubscription(t, env, token, org, productEinvoice, planEinvoiceSandbox)
	waitForService(t, env, token, sub.ID, "active")
	// A tax invoice, while the subscription to einvoice is active (once terminated, it
	// refuses the product's operations).
	taxInvoice := generateInvoice(t, env, token, invoiceBody(t, org, nil))
	do(http.MethodPost, "/v1/taxauth/invoices/"+taxInvoice.Invoice.ID+"/submit", "", http.StatusOK)
	// An EGS unit: registered, certified for production after its three compliance
	// documents (three more tax_invoice.generated), revoked.
	unit := registerUnit(t, env, org, token, "0100")["id"].(string)
	passCompliance(t, env, org, token, unit)
	do(http.MethodPost, egsUnitsPath+"/"+unit+"/production-certificate", "", http.StatusOK)
	do(http.MethodPost, egsUnitsPath+"/"+unit+"/revoke", "", http.StatusOK)
	subPath := "/v1/subscriptions/" + sub.ID + "/"
	// Invoices: the first selection's invoice voided, the second's written off by the
	// operator, the third's paid after a declined payment.
	selectMonthly := func() string {
		sel := do(http.MethodPost, subPath+"select-plan", fmt.Sprintf(`{"plan_id":%q}`, planEinvoiceGrowthMonthly), http.StatusOK)
		return "/v1/invoices/" + sel["invoice"].(map[string]any)["id"].(string)
	}
	do(http.MethodPost, selectMonthly()+"/void", "", http.StatusOK)
	call(t, env, http.MethodPost, selectMonthly()+"/mark-uncollectible", apitest.OperatorToken, "", http.StatusOK)
	// Tax documents: the two invoices' (and the void's credit note) issued; then the
	// organization gives a VAT number the engine refuses, and the third's fails.
	waitForJobsOf(t, env, "issue_tax_documents")
	do(http.MethodPatch, "/v1/organizations/"+org, `{"display_name":"Renamed platform","vat_reference":"12345"}`, http.StatusOK)
	paid := selectMonthly()
	do(http.MethodPost, paid+"/payments", `{"amount":91885,"payment_method":"pm_sandbox_declined"}`, http.StatusCreated)
	do(http.MethodPost, paid+"/payments", `{"amount":91885,"payment_method":"pm_sandbox_success"}`, http.StatusCreated)
	do(http.MethodPost, subPath+"change-plan", fmt.Sprintf(`{"plan_id":%q}`, planEinvoiceGrowthAnnual), http.StatusOK) // prorated: an invoice
	// The catalogue: the operator changes the subscription's product, then deprecates and
	// retires its plan; the lifecycle actions below keep working on the retired plan.
	for path, body := range map[string]string{
		"/v1/products/" + productEinvoice:       `{"description":"Renamed for the events test."}`,
		"/v1/plans/" + planEinvoiceGrowthAnnual: `{"status":"deprecated"}`,
	} {
		catalogueDo(t, env, apitest.OperatorToken, http.MethodPatch, path, body, http.StatusOK)
	}
	movePlan(t, env, planEinvoiceGrowthAnnual, "retired")
	// The free plan selected (voiding the proration invoice), so the termination below credits
	// no fee: a credit balance would pay the dunned invoice below. It is reached at the end.
	do(http.MethodPost, subPath+"select-plan", fmt.Sprintf(`{"plan_id":%q}`, planEinvoiceSandbox), http.StatusOK)
	for _, action := range []string{"suspend", "resume", "cancel", "reactivate", "terminate"} {
		do(http.MethodPost, subPath+action, "", http.StatusOK)
	}
	// Incidents: a running subscription to another product degraded and restored.
	addressSub := createSubscription(t, env, token, org, productAddress, planAddressPreview)
	waitForService(t, env, token, addressSub.ID, "active")
	inc := openIncident(t, env, productAddress, "Lookups time out.")
	resolveIncident(t, env, productAddress, inc.ID)
	// Dunning: a new e-invoicing subscription's first invoice, unpaid through the advance
	// below, is overdue, retried (no payment method on file) and written off; paid, it recovers.
	dunnedSub := createSubscription(t, env, token, org, productEinvoice, planEinvoiceSandbox)
	waitForService(t, env, token, dunnedSub.ID, "active")
	dunnedSel := do(http.MethodPost, "/v1/subscriptions/"+dunnedSub.ID+"/select-plan", fmt.Sprintf(`{"plan_id":%q}`, planEinvoiceGrowthMonthly), http.StatusOK)
	// A renewal: the organization on a test clock, advanced past the address subscription's
	// first renewal (a free plan: no invoice).
	start := time.Now().UTC().Truncate(time.Second)
	clock := do(http.MethodPost, "/v1/test-clocks", fmt.Sprintf(`{"organization_id":%q,"frozen_time":%q}`, org, start.Format(time.RFC3339)), http.StatusCreated)
	do(http.MethodPost, "/v1/test-clocks/"+clock["id"].(string)+"/advance", fmt.Sprintf(`{"frozen_time":%q}`, start.AddDate(0, 1, 1).Format(time.RFC3339)), http.StatusOK)
	do(http.MethodPost, "/v1/invoices/"+dunnedSel["invoice"].(map[string]any)["id"].(string)+"/payments", `{"amount":91885,"payment_method":"pm_sandbox_success"}`, http.StatusCreated)
	// Recovered, the dunned subscription renews (a second advance); a change to the free plan
	// then credits its unused fee beyond the change's charges (none) to the credit balance.
	do(http.MethodPost, "/v1/test-clocks/"+clock["id"].(string)+"/advance", fmt.Sprintf(`{"frozen_time":%q}`, start.AddDate(0, 1, 2).Format(time.RFC3339)), http.StatusOK)
	do(http.MethodPost, "/v1/subscriptions/"+dunnedSub.ID+"/change-plan", fmt.Sprintf(`{"plan_id":%q}`, planEinvoiceSandbox), http.StatusOK)
	// Connected businesses.
	cb := p.create(t, businessBody("events-1", nil))
	do(http.MethodPatch, "/v1/connected-businesses/"+cb["id"].(string), `{"display_name":"Renamed merchant"}`, http.StatusOK)
	// API keys: created, rotated (which creates the replacement), revoked.
	key := do(http.MethodPost, "/v1/api-keys", fmt.Sprintf(`{"organization_id":%q,"name":"events","environment":"sandbox","scopes":["organizations:read"]}`, org), http.StatusCreated)
	replacement := do(http.MethodPost, "/v1/api-keys/"+key["id"].(string)+"/rotate", `{"grace_period_seconds":60}`, http.StatusCreated)
	do(http.MethodPost, "/v1/api-keys/"+replacement["id"].(string)+"/revoke", "", http.StatusOK)
	// Spend controls: the first of two allowed operations reaches the 50 % warning, the
	// second the hard limit.
	do(http.MethodPut, "/v1/spend-controls/address", fmt.Sprintf(`{"organization_id":%q,"warning_threshold_percent":50,"monthly_budget_minor_units":null,
		"hard_operation_limit":2,"notification_recipients":[],"enabled":true}`, org), http.StatusOK)
	for range 2 {
		do(http.MethodPost, "/v1/address/resolve-short", `{"short_address":"RRMA1234","language":"en"}`, http.StatusOK)
	}
	// A test event.
	sendTest(t, env, token, endpoint["id"].(string))
	// Webhook endpoints: another endpoint changed, its secret rotated, then disabled.
	otherPath := "/v1/webhook-endpoints/" + createEndpoint(t, env, token, endpointBody(org, "http://127.0.0.1:9/other", "api_key.created"))["id"].(string)
	do(http.MethodPatch, otherPath, `{"description":"Renamed receiver"}`, http.StatusOK)
	do(http.MethodPost, otherPath+"/rotate-secret", `{"grace_period_seconds":0}`, http.StatusOK)
	do(http.MethodPatch, otherPath, `{"status":"disabled"}`, http.StatusOK)

	// Support cases: opened, updated by the operator, a message, closed.
	opened := do(http.MethodPost, "/v1/support-cases", fmt.Sprintf(`{"organization_id":%q,"subject":"Events","description":"Every event must match the document.",
		"severity":"low","category":"other","diagnostics":{"sdk":"go","retries":2,"verbose":false,"proxy":null}}`, org), http.StatusCreated)
	casePath := "/v1/support-cases/" + opened["id"].(string)
	if resp := env.Do(apitest.Request{Method: http.MethodPatch, Path: casePath, Token: apitest.OperatorToken, Body: `{"status":"in_progress"}`}); resp.Status != http.StatusOK {
		t.Fatalf("move the case: %d %s", resp.Status, resp.Body)
	}
	do(http.MethodPost, casePath+"/messages", `{"body":"Every event must match the document."}`, http.StatusCreated)
	do(http.MethodPost, casePath+"/close", "", http.StatusOK)
	// A failed tax document retried (and refused again: the VAT number is still bad).
	waitForJobsOf(t, env, "issue_tax_documents")
	do(http.MethodPost, "/v1/invoices/"+dunnedSel["invoice"].(map[string]any)["id"].(string)+"/tax-documents/retry", "", http.StatusOK)
	waitForJobsOf(t, env, "issue_tax_documents")
	unreachable := map[string]bool{}

	// Every stored event matches the document.
	rows, err := env.Pool.Query(context.Background(), "SELECT id::text, type, data FROM webhook_events WHERE organization_id = $1 ORDER BY id", org)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string][]map[string]any{}
	var storedIDs []string
	for rows.Next() {
		var id, typ string
		var data map[string]any
		if err := rows.Scan(&id, &typ, &data); err != nil {
			t.Fatal(err)
		}
		validateEventData(t, typ, data)
		stored[typ] = append(stored[typ], data)
		if typ != "billing_invoice.issued" { // the deprecated alias is not delivered to an endpoint naming invoice.issued
			storedIDs = append(storedIDs, id)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, typ := range all {
		if len(stored[typ]) == 0 && !unreachable[typ] {
			missing = append(missing, typ)
		}
	}
	if len(missing) > 0 {
		t.Errorf("no event of types %v", missing)
	}
	counts := map[string]int{}
	for typ, evs := range stored {
		counts[typ] = len(evs)
	}
	want := map[string]int{
		// plan_changed: three selections, change-plan, the free plan selected, the dunned
		// subscription's selection and change.
		"subscription.created": 3, "subscription.activated": 3, "subscription.plan_changed": 7, "subscription.suspended": 1,
		"subscription.resumed": 1, "subscription.cancelled": 1, "subscription.reactivated": 1, "subscription.terminated": 1,
		"subscription.degraded": 1, "subscription.restored": 1,
		// Three selections' invoices, change-plan's proration invoice, the dunned subscription's
		// selection, renewal and change (to the free plan: credit_balance.updated). Voided: the
		// first selection's and the proration invoice (by the free plan's selection).
		"billing_invoice.issued": 7, "invoice.issued": 7, "invoice.voided": 2, "invoice.uncollectible": 2,
		"invoice.payment_failed": 1, "invoice.paid": 2, "connected_business.created": 1, "connected_business.updated": 1,
		"api_key.created": 2, "api_key.rotated": 1, "api_key.revoked": 1,
		"spend_control.warning_reached": 1, "spend_control.hard_limit_reached": 1, "tax_invoice.generated": 4, "tax_invoice.submitted": 1, "webhook_endpoint.test": 1,
		"support_case.opened": 1, "support_case.closed": 1, "support_case.updated": 1, "support_case.message_created": 1,
		"organization.updated": 1, "subscription.renewed": 2, "credit_balance.updated": 1,
		"subscription.overdue": 1, "subscription.payment_retry_failed": 2, "subscription.written_off": 1, "subscription.recovered": 1,
		"webhook_endpoint.updated": 1, "webhook_endpoint.secret_rotated": 1, "webhook_endpoint.disabled": 1,
		"product.updated": 1, "plan.deprecated": 1, "plan.retired": 1,
		"egs_unit.registered": 1, "egs_unit.production_certificate_issued": 1, "egs_unit.revoked": 1,
		// failed: the 5 invoices issued after the VAT number went bad, and the retry of one
		"invoice.tax_document_issued": 3, "invoice.tax_document_failed": 6, "invoice.tax_document_retried": 1,
	}
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("events per type %v, want %v", counts, want)
	}
	// Spot checks of the contents.
	if d := stored["subscription.activated"]; len(d) == 2 && (d[0]["id"] != sub.ID || d[0]["service_status"] != "active") {
		t.Errorf("subscription.activated: %v", d[0])
	}
	if d := stored["subscription.degraded"]; len(d) == 1 && (d[0]["id"] != addressSub.ID || d[0]["service_status"] != "degraded") {
		t.Errorf("subscription.degraded: %v", d[0])
	}
	if d := stored["subscription.restored"]; len(d) == 1 && (d[0]["id"] != addressSub.ID || d[0]["service_status"] != "active") {
		t.Errorf("subscription.restored: %v", d[0])
	}
	if d := stored["subscription.terminated"]; len(d) == 1 && d[0]["service_status"] != "terminated" {
		t.Errorf("subscription.terminated: %v", d[0])
	}
	if d := stored["api_key.rotated"]; len(d) == 1 && (d[0]["id"] != key["id"] || d[0]["expires_at"] == nil || d[0]["status"] != "active") {
		t.Errorf("api_key.rotated is not about the rotated key in its grace period: %v", d[0])
	}
	if d := stored["api_key.revoked"]; len(d) == 1 && (d[0]["id"] != replacement["id"] || d[0]["status"] != "revoked") {
		t.Errorf("api_key.revoked: %v", d[0])
	}
	if d := stored["spend_control.warning_reached"]; len(d) == 1 && (d[0]["warning_reached"] != true || d[0]["current_operations"] != 1.0) {
		t.Errorf("spend_control.warning_reached: %v", d[0])
	}
	if d := stored["spend_control.hard_limit_reached"]; len(d) == 1 && (d[0]["hard_limit_reached"] != true || d[0]["current_operations"] != 2.0) {
		t.Errorf("spend_control.hard_limit_reached: %v", d[0])
	}
	if d := stored["support_case.message_created"]; len(d) == 1 && (d[0]["support_case_id"] != opened["id"] || d[0]["author"] != "customer") {
		t.Errorf("support_case.message_created: %v", d[0])
	}
	if d := stored["connected_business.updated"]; len(d) == 1 && d[0]["display_name"] != "Renamed merchant" {
		t.Errorf("connected_business.updated: %v", d[0])
	}
	if d := stored["invoice.paid"]; len(d) == 1 && (d[0]["status"] != "paid" || d[0]["paid_at"] == nil || d[0]["total"] != 91885.0) {
		t.Errorf("invoice.paid: %v", d[0])
	}
	if d := stored["invoice.payment_failed"]; len(d) == 1 && d[0]["status"] != "issued" {
		t.Errorf("invoice.payment_failed changed the invoice: %v", d[0])
	}
	if d := stored["organization.updated"]; len(d) == 1 && (d[0]["id"] != org || d[0]["display_name"] != "Renamed platform") {
		t.Errorf("organization.updated: %v", d[0])
	}

	// Every stored event is delivered to the endpoint subscribed to all types, signed and
	// matching the document.
	got := recv.waitFor(t, len(storedIDs))
	var delivered []string
	for _, d := range got {
		ev := d.event(t, endpoint["secret"].(string))
		validateEvent(t, d.Body)
		if ev["organization_id"] != org {
			t.Errorf("event of organization %v", ev["organization_id"])
		}
		if ts, err := time.Parse(time.RFC3339Nano, ev["created_at"].(string)); err != nil || ts.Before(began) || ts.After(time.Now()) {
			t.Errorf("created_at %v, want a time during the test (from %s)", ev["created_at"], began.UTC().Format(time.RFC3339Nano))
		}
		delivered = append(delivered, ev["id"].(string))
	}
	sort.Strings(delivered)
	if fmt.Sprint(delivered) != fmt.Sprint(storedIDs) {
		t.Errorf("delivered %d events, stored %d", len(delivered), len(storedIDs))
	}
}

// TestWebhookEvents_RolledBackChangesPublishNothing: an event commits with its change only.
func TestWebhookEvents_RolledBackChangesPublishNothing(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org, token := newOrganization(t, env)
	recv := newReceiver(t, nil)
	createEndpoint(t, env, token, endpointBody(org, recv.URL, "subscription.created"))
	createSubscription(t, env, token, org, productEinvoice, planEinvoiceSandbox)
	// A second live subscription to the product is refused after the checks have run.
	resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/subscriptions", Token: token, Body: subscriptionBody(org, productEinvoice, planEinvoiceSandbox)})
	assertProblem(t, "second subscription", resp, http.StatusConflict, "conflict")
	if n := env.Count("SELECT count(*) FROM webhook_events WHERE organization_id = $1 AND type = 'subscription.created'", org); n != 1 {
		t.Errorf("%d subscription.created events, want 1", n)
	}
	// Jobs are queued in the change's transaction: one delivery job, one provisioning job.
	for kind, want := range map[string]int{"deliver_webhook": 1, "provision_subscription": 1} {
		if n := env.Count("SELECT count(*) FROM river_job WHERE kind = $1 AND args->>'organization_id' = $2::text", kind, org); n != want {
			t.Errorf("%d %s jobs, want %d", n, kind, want)
		}
	}
	recv.waitFor(t, 1)
	time.Sleep(100 * time.Millisecond)
	if n := len(recv.deliveries()); n != 1 {
		t.Errorf("%d deliveries, want 1", n)
	}
}

// TestWebhookEvents_EveryTypeHasAPublisher: the document's event types are core's, and the
// source publishes every one: each core.Event* constant reaches DB.publish or queuePublish (or
// storeEvent, which stores an event for one endpoint), directly or through a function that forwards its
// core.EventType parameter there (act, markCrossing). A type nothing publishes fails here,
// before any request is made; TestWebhookEvents_MatchTheDocument then proves each one fires.
func TestWebhookEvents_EveryTypeHasAPublisher(t *testing.T) {
	t.Parallel()
	var inCore []string
	for _, e := range core.EventTypes() {
		inCore = append(inCore, string(e))
	}
	inDoc := allEventTypes(t)
	sort.Strings(inCore)
	sort.Strings(inDoc)
	if fmt.Sprint(inCore) != fmt.Sprint(inDoc) {
		t.Errorf("core.EventTypes() %v, the document's WebhookEventType %v", inCore, inDoc)
	}

	names := eventConstants(t, "../core")
	published := publishedEvents(t, "..")
	if len(published) == 0 {
		t.Fatal("no publish call found: the scan no longer matches the source")
	}
	for _, e := range core.EventTypes() {
		name, ok := names[string(e)]
		if !ok {
			t.Errorf("event type %s has no constant in core", e)
			continue
		}
		if len(published[name]) == 0 {
			t.Errorf("nothing publishes core.%s (%s)", name, e)
		}
	}
}

// eventConstants maps the value of every core.EventType constant declared in dir to its name.
func eventConstants(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range parseSources(t, token.NewFileSet(), dir) {
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				if typ, ok := vs.Type.(*ast.Ident); !ok || typ.Name != "EventType" {
					continue
				}
				for i, name := range vs.Names {
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok {
						continue
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					out[v] = name.Name
				}
			}
		}
	}
	return out
}

// publishedEvents returns, for each core.Event* constant name, the positions where it is
// published in the non-test sources under root.
func publishedEvents(t *testing.T, root string) map[string][]string {
	t.Helper()
	fset := token.NewFileSet()
	var funcs []*ast.FuncDecl
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		for _, f := range parseSources(t, fset, path) {
			for _, decl := range f.Decls {
				if fn, ok := decl.(*ast.FuncDecl); ok && fn.Body != nil {
					funcs = append(funcs, fn)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// publishers maps a function's name to the index of the core.EventType parameter it
	// publishes: publish, queuePublish (publish's statement queued in a pipeline) and
	// storeEvent, then every function passing its own such parameter on to one of them,
	// until nothing changes.
	publishers := map[string]int{}
	for _, fn := range funcs {
		if name := fn.Name.Name; name == "publish" || name == "queuePublish" || name == "storeEvent" {
			if i, _ := eventParam(fn); i >= 0 {
				publishers[name] = i
			}
		}
	}
	for changed := true; changed; {
		changed = false
		for _, fn := range funcs {
			i, param := eventParam(fn)
			if _, known := publishers[fn.Name.Name]; known || i < 0 {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if arg := publishedArg(n, publishers); arg != nil {
					if id, ok := arg.(*ast.Ident); ok && id.Name == param {
						publishers[fn.Name.Name], changed = i, true
					}
				}
				return true
			})
		}
	}
	out := map[string][]string{}
	for _, fn := range funcs {
		_, param := eventParam(fn)
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			arg := publishedArg(n, publishers)
			switch a := arg.(type) {
			case nil:
			case *ast.SelectorExpr:
				if x, ok := a.X.(*ast.Ident); ok && x.Name == "core" && strings.HasPrefix(a.Sel.Name, "Event") {
					out[a.Sel.Name] = append(out[a.Sel.Name], fset.Position(a.Pos()).String())
					return true
				}
				t.Errorf("%s: the event type published is %s, not a core.Event constant", fset.Position(a.Pos()), types.ExprString(a))
			case *ast.Ident:
				if a.Name != param {
					t.Errorf("%s: the event type published is %s, not a core.Event constant", fset.Position(a.Pos()), a.Name)
				}
			default:
				t.Errorf("%s: the event type published is %s, not a core.Event constant", fset.Position(a.Pos()), types.ExprString(a))
			}
			return true
		})
	}
	return out
}

// eventParam is the index and name of fn's core.EventType parameter (-1 when it has none).
func eventParam(fn *ast.FuncDecl) (int, string) {
	i := 0
	for _, field := range fn.Type.Params.List {
		isEvent := types.ExprString(field.Type) == "core.EventType"
		for _, name := range field.Names {
			if isEvent {
				return i, name.Name
			}
			i++
		}
		if len(field.Names) == 0 {
			i++
		}
	}
	return -1, ""
}

// publishedArg is the event type argument of n when n calls a publisher, else nil.
func publishedArg(n ast.Node, publishers map[string]int) ast.Expr {
	call, ok := n.(*ast.CallExpr)
	if !ok {
		return nil
	}
	var name string
	switch f := call.Fun.(type) {
	case *ast.Ident:
		name = f.Name
	case *ast.SelectorExpr:
		name = f.Sel.Name
	default:
		return nil
	}
	i, ok := publishers[name]
	if !ok || i >= len(call.Args) {
		return nil
	}
	return call.Args[i]
}

// parseSources parses the non-test Go files of dir.
func parseSources(t *testing.T, fset *token.FileSet, dir string) []*ast.File {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []*ast.File
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}
