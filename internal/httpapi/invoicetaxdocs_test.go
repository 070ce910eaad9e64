package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
	"github.com/provider/coreapi/internal/secretbox"
)

// Organizations as buyers of the platform's tax documents: without a VAT number (a
// simplified invoice), VAT-registered with a national address that resolves in the sandbox
// data set (a standard one), and with a VAT number the engine refuses (BR-KSA-44).
var (
	buyerWithoutVAT = minimalOrganization
	buyerWithVAT    = `{"legal_name_ar":"شركة المشتري","legal_name_en":"Buyer Co","display_name":"Buyer","organization_type":"standard_customer",
		"country":"SA","vat_reference":"310123456700003","commercial_registration_reference":"1010123456","national_address_reference":"RRRD2929"}`
	buyerWithBadVAT = `{"legal_name_ar":"شركة المشتري","legal_name_en":"Buyer Co","display_name":"Buyer","organization_type":"standard_customer",
		"country":"SA","vat_reference":"12345","national_address_reference":"RRRD2929"}`
)

// billedOrganization creates an organization from body, selects the monthly growth plan
// (setup 50000 + 29900, SAR) on a subscription of it and returns its token and the invoice.
func billedOrganization(t *testing.T, env *apitest.Env, body string) (org, token string, invoice map[string]any) {
	t.Helper()
	org = createOrganization(t, env, body)["id"].(string)
	token = apitest.OrgToken(uuid.MustParse(org))
	sub := call(t, env, http.MethodPost, "/v1/subscriptions", token, subscriptionBody(org, productEinvoice, planEinvoiceSandbox), http.StatusCreated)
	sel := call(t, env, http.MethodPost, "/v1/subscriptions/"+sub["id"].(string)+"/select-plan", token,
		fmt.Sprintf(`{"plan_id":%q}`, planEinvoiceGrowthMonthly), http.StatusOK)
	return org, token, sel["invoice"].(map[string]any)
}

// waitForTaxDocuments reads the invoice's tax documents until its status is no longer
// pending and it has n documents (the job is asynchronous), and returns them.
func waitForTaxDocuments(t testing.TB, env *apitest.Env, token, invoiceID string, n int) map[string]any {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/invoices/" + invoiceID + "/tax-documents", Token: token})
		if resp.Status != http.StatusOK {
			t.Fatalf("tax documents of %s: %d %s", invoiceID, resp.Status, resp.Body)
		}
		docs := resp.JSON(t)
		if docs["tax_document_status"] != "pending" && len(docs["items"].([]any)) == n {
			return docs
		}
		if time.Now().After(deadline) {
			t.Fatalf("tax documents of %s after 15 s: %s", invoiceID, resp.Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// taxDocumentItem is the i-th document of a tax documents read.
func taxDocumentItem(docs map[string]any, i int) map[string]any {
	return docs["items"].([]any)[i].(map[string]any)
}

// checkDocumentValidates downloads the document's XML and validates it with the validation
// service (UBL 2.1 schema, business rules, hash, signature, QR): no error, and the only
// warning is that the stamp is the platform's sandbox certificate rather than the caller's.
func checkDocumentValidates(t *testing.T, env *apitest.Env, token, docID string) {
	t.Helper()
	xml := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/taxauth/invoices/" + docID + "/xml", Token: token})
	if xml.Status != http.StatusOK {
		t.Fatalf("xml of %s: %d %s", docID, xml.Status, xml.Body)
	}
	resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/taxauth/invoices/validate", Token: apitest.OperatorToken,
		Body: string(xml.Body), ContentType: "application/xml"})
	if resp.Status != http.StatusOK {
		t.Fatalf("validate %s: %d %s", docID, resp.Status, resp.Body)
	}
	result := resp.JSON(t)
	var problems []string
	for _, r := range result["results"].([]any) {
		f := r.(map[string]any)
		if f["type"] == "error" || (f["type"] == "warning" && f["code"] != "SBX-CERT-02") {
			problems = append(problems, fmt.Sprint(f["code"], ": ", f["message"]))
		}
	}
	if result["valid"] != true || len(problems) > 0 {
		t.Errorf("document %s does not validate: %v", docID, problems)
	}
}

// checkTotalsMatch reads the whole document and compares its totals with the billing
// invoice's, in minor units.
func checkTotalsMatch(t *testing.T, env *apitest.Env, token, docID string, invoice map[string]any) {
	t.Helper()
	doc := call(t, env, http.MethodGet, "/v1/taxauth/invoices/"+docID, token, "", http.StatusOK)
	totals := doc["invoice"].(map[string]any)["totals"].(map[string]any)
	net := invoice["subtotal"].(float64) - invoice["discount"].(float64)
	if totals["tax_exclusive_amount"] != net || totals["vat_amount"] != invoice["tax"] || totals["payable_amount"] != invoice["total"] ||
		totals["currency"] != "SAR" {
		t.Errorf("document totals %v, invoice subtotal-discount %v tax %v total %v", totals, net, invoice["tax"], invoice["total"])
	}
}

func TestInvoiceTaxDocuments(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)

	t.Run("SimplifiedWithoutVAT", func(t *testing.T) {
		t.Parallel()
		org, token, invoice := billedOrganization(t, env, buyerWithoutVAT)
		if invoice["tax_document_status"] != "pending" {
			t.Errorf("a new invoice's tax document is %v, want pending", invoice["tax_document_status"])
		}
		docs := waitForTaxDocuments(t, env, token, invoice["id"].(string), 1)
		doc := taxDocumentItem(docs, 0)
		if docs["tax_document_status"] != "issued" || docs["failure"] != nil || docs["invoice_id"] != invoice["id"] ||
			doc["kind"] != "simplified_tax_invoice" || doc["type_code"] != "388" || doc["egs_unit_id"] != "platform-billing" ||
			doc["organization_id"] != org || doc["payable_amount"] != invoice["total"] || doc["payable_amount"] != 91885.0 {
			t.Errorf("tax documents %v", docs)
		}
		if got := call(t, env, http.MethodGet, "/v1/invoices/"+invoice["id"].(string), token, "", http.StatusOK); got["tax_document_status"] != "issued" {
			t.Errorf("invoice's tax_document_status %v", got["tax_document_status"])
		}
		checkTotalsMatch(t, env, token, doc["id"].(string), invoice)
		checkDocumentValidates(t, env, token, doc["id"].(string))
		// In the organization's archive, among its own documents.
		archive := call(t, env, http.MethodGet, "/v1/taxauth/invoices?organization_id="+org, token, "", http.StatusOK)
		if items := archive["items"].([]any); len(items) != 1 || items[0].(map[string]any)["id"] != doc["id"] {
			t.Errorf("archive %v", archive)
		}
		// Announced and audited once.
		checkTaxDocumentEvents(t, env, org, "invoice.tax_document_issued", 1)
		if n := env.Count(`SELECT count(*) FROM audit_events WHERE organization_id = $1 AND action = 'billing_invoice.tax_document_issued'
			AND resource_id = $2`, org, invoice["id"]); n != 1 {
			t.Errorf("%d audit events of the issue", n)
		}
	})

	t.Run("StandardWithVAT", func(t *testing.T) {
		t.Parallel()
		_, token, invoice := billedOrganization(t, env, buyerWithVAT)
		docs := waitForTaxDocuments(t, env, token, invoice["id"].(string), 1)
		doc := taxDocumentItem(docs, 0)
		if docs["tax_document_status"] != "issued" || doc["kind"] != "standard_tax_invoice" || doc["type_name"] != "0100000" ||
			doc["payable_amount"] != invoice["total"] {
			t.Errorf("tax documents %v", docs)
		}
		checkTotalsMatch(t, env, token, doc["id"].(string), invoice)
		checkDocumentValidates(t, env, token, doc["id"].(string))
		// The buyer is the organization, the seller the platform.
		full := call(t, env, http.MethodGet, "/v1/taxauth/invoices/"+doc["id"].(string), token, "", http.StatusOK)
		req := full["request"].(map[string]any)
		buyer, seller := req["buyer"].(map[string]any), req["seller"].(map[string]any)
		if buyer["vat_number"] != "310123456700003" || buyer["legal_name"] != "Buyer Co" || buyer["postal_address"] == nil ||
			seller["vat_number"] != "399999999900003" {
			t.Errorf("buyer %v, seller %v", buyer, seller)
		}
	})

	t.Run("FailedOnABadVATNumber", func(t *testing.T) {
		t.Parallel()
		org, token, invoice := billedOrganization(t, env, buyerWithBadVAT)
		docs := waitForTaxDocuments(t, env, token, invoice["id"].(string), 0)
		failure, _ := docs["failure"].(map[string]any)
		if docs["tax_document_status"] != "failed" || failure == nil {
			t.Fatalf("tax documents %v", docs)
		}
		var codes []string
		for _, is := range failure["issues"].([]any) {
			codes = append(codes, is.(map[string]any)["code"].(string))
		}
		if !slices.Contains(codes, "BR-KSA-44") {
			t.Errorf("failure %v does not name BR-KSA-44", failure)
		}
		if n := env.Count(`SELECT count(*) FROM tax_invoices WHERE organization_id = $1`, org); n != 0 {
			t.Errorf("%d documents stored for a refused one", n)
		}
		checkTaxDocumentEvents(t, env, org, "invoice.tax_document_failed", 1)
		// A void has no credit note to give: there is no tax invoice to correct.
		call(t, env, http.MethodPost, "/v1/invoices/"+invoice["id"].(string)+"/void", token, "", http.StatusOK)
		waitForJobsOf(t, env, "issue_tax_documents")
		if docs := call(t, env, http.MethodGet, "/v1/invoices/"+invoice["id"].(string)+"/tax-documents", token, "", http.StatusOK); len(docs["items"].([]any)) != 0 ||
			docs["tax_document_status"] != "failed" {
			t.Errorf("after the void: %v", docs)
		}
	})

	t.Run("VoidGivesACreditNote", func(t *testing.T) {
		t.Parallel()
		org, token, invoice := billedOrganization(t, env, buyerWithVAT)
		original := taxDocumentItem(waitForTaxDocuments(t, env, token, invoice["id"].(string), 1), 0)
		call(t, env, http.MethodPost, "/v1/invoices/"+invoice["id"].(string)+"/void", token, "", http.StatusOK)
		docs := waitForTaxDocuments(t, env, token, invoice["id"].(string), 2)
		note := taxDocumentItem(docs, 1)
		if docs["tax_document_status"] != "issued" || taxDocumentItem(docs, 0)["id"] != original["id"] ||
			note["kind"] != "standard_credit_note" || note["type_code"] != "381" || note["billing_reference_number"] != original["number"] ||
			note["payable_amount"] != invoice["total"] {
			t.Errorf("tax documents after the void %v", docs)
		}
		checkDocumentValidates(t, env, token, note["id"].(string))
		checkTaxDocumentEvents(t, env, org, "invoice.tax_document_issued", 2)
	})

	t.Run("WhoMayRead", func(t *testing.T) {
		t.Parallel()
		_, token, invoice := billedOrganization(t, env, buyerWithoutVAT)
		path := "/v1/invoices/" + invoice["id"].(string) + "/tax-documents"
		waitForTaxDocuments(t, env, token, invoice["id"].(string), 1)
		// Another organization: 404, exactly as an unknown id.
		_, other := newOrganization(t, env)
		for _, p := range []string{path, "/v1/invoices/" + uuid.NewString() + "/tax-documents"} {
			resp := env.Do(apitest.Request{Method: http.MethodGet, Path: p, Token: other})
			if resp.Status != http.StatusNotFound || resp.JSON(t)["code"] != "not_found" {
				t.Errorf("GET %s as another organization: %d %s", p, resp.Status, resp.Body)
			}
		}
		// The operator reads any organization's.
		if docs := call(t, env, http.MethodGet, path, apitest.OperatorToken, "", http.StatusOK); len(docs["items"].([]any)) != 1 {
			t.Errorf("operator's read %v", docs)
		}
	})

	t.Run("Scopes", func(t *testing.T) {
		t.Parallel()
		org, token, invoice := billedOrganization(t, env, buyerWithoutVAT)
		path := "/v1/invoices/" + invoice["id"].(string) + "/tax-documents"
		key := func(scope string) string {
			return call(t, env, http.MethodPost, "/v1/api-keys", token,
				fmt.Sprintf(`{"organization_id":%q,"name":"tax documents","environment":"sandbox","scopes":[%q]}`, org, scope), http.StatusCreated)["full_key"].(string)
		}
		assertProblem(t, "without invoices:read", env.Do(apitest.Request{Method: http.MethodGet, Path: path, Token: key("subscriptions:read")}),
			http.StatusForbidden, "insufficient_scope")
		call(t, env, http.MethodGet, path, key("invoices:read"), "", http.StatusOK)
	})

	t.Run("NotApplicableOutsideSAR", func(t *testing.T) {
		t.Parallel()
		invoice := nonSARInvoice(t, env)
		if invoice["tax_document_status"] != "not_applicable" {
			t.Fatalf("a USD invoice's tax document is %v", invoice["tax_document_status"])
		}
		docs := call(t, env, http.MethodGet, "/v1/invoices/"+invoice["id"].(string)+"/tax-documents", apitest.OperatorToken, "", http.StatusOK)
		if docs["tax_document_status"] != "not_applicable" || len(docs["items"].([]any)) != 0 || docs["failure"] != nil {
			t.Errorf("tax documents %v", docs)
		}
		if n := env.Count(`SELECT count(*) FROM river_job WHERE kind = 'issue_tax_documents' AND args->>'invoice_id' = $1`, invoice["id"]); n != 0 {
			t.Errorf("%d jobs queued for a USD invoice", n)
		}
	})

	t.Run("PlatformEGSUnitIsReserved", func(t *testing.T) {
		t.Parallel()
		org, _ := newOrganization(t, env)
		body := fmt.Sprintf(`{"organization_id":%q,"egs_unit_id":"platform-billing","tax_calculation_mode":"service_calculated",
			"requested_invoice_type":"simplified_tax_invoice","seller":{"legal_name":"Seller","vat_number":"300000000000003"},
			"line_items":[{"line_id":"1","name_en":"Item","quantity":1,"unit_code":"PCE","unit_price":1000,"tax_category":"S","tax_rate":15}]}`, org)
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/taxauth/invoices/generate/simplified", Token: apitest.OperatorToken, Body: body})
		if resp.Status != http.StatusUnprocessableEntity || !strings.Contains(string(resp.Body), "/egs_unit_id") {
			t.Errorf("generate on the platform's unit: %d %s", resp.Status, resp.Body)
		}
		if n := env.Count(`SELECT count(*) FROM tax_invoices WHERE organization_id = $1`, org); n != 0 {
			t.Errorf("%d documents stored", n)
		}
	})
}

// TestInvoiceTaxDocumentsExactlyOnce runs the jobs of an invoice issued and voided while no
// process worked jobs in two processes at once, beside direct runs racing them: the invoice
// gets one tax invoice and one credit note, however many runs there were.
func TestInvoiceTaxDocumentsExactlyOnce(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	env.StopWorkers()
	org, token, invoice := billedOrganization(t, env, buyerWithoutVAT)
	id := uuid.MustParse(invoice["id"].(string))
	call(t, env, http.MethodPost, "/v1/invoices/"+invoice["id"].(string)+"/void", token, "", http.StatusOK)
	if n := env.Count(`SELECT count(*) FROM river_job WHERE kind = 'issue_tax_documents' AND args->>'invoice_id' = $1`, id.String()); n != 2 {
		t.Fatalf("%d jobs queued by the issue and the void, want 2", n)
	}
	box, err := secretbox.New(secretbox.DevelopmentKey())
	if err != nil {
		t.Fatal(err)
	}
	// Two processes take the queued jobs while four direct runs race them.
	env.Sibling()
	env.Sibling()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if err := env.DB.IssueTaxDocuments(context.Background(), box, uuid.MustParse(org), id); err != nil {
				t.Errorf("a direct run: %v", err)
			}
		})
	}
	wg.Wait()
	docs := waitForTaxDocuments(t, env, token, id.String(), 2)
	waitForJobsOf(t, env, "issue_tax_documents")
	if taxDocumentItem(docs, 0)["kind"] != "simplified_tax_invoice" || taxDocumentItem(docs, 1)["kind"] != "simplified_credit_note" {
		t.Errorf("documents %v", docs)
	}
	if n := env.Count(`SELECT count(*) FROM tax_invoices WHERE organization_id = $1`, org); n != 2 {
		t.Errorf("%d documents stored, want 2", n)
	}
	if n := env.Count(`SELECT count(*) FROM billing_invoice_tax_documents WHERE organization_id = $1`, org); n != 2 {
		t.Errorf("%d outcomes recorded, want 2", n)
	}
	checkTaxDocumentEvents(t, env, org, "invoice.tax_document_issued", 2)
	// The platform's chain has no gap: its counter is the number of its documents.
	if n := env.Count(`SELECT (SELECT last_icv FROM platform_einvoice_units)::int - (SELECT count(*) FROM tax_invoices WHERE egs_unit_id = 'platform-billing')::int`); n != 0 {
		t.Errorf("the platform's counter is %d ahead of its documents", n)
	}
}

// checkTaxDocumentEvents checks the organization stored n events of type typ, each one's
// data as the document describes it.
func checkTaxDocumentEvents(t *testing.T, env *apitest.Env, org, typ string, n int) {
	t.Helper()
	rows, err := env.Pool.Query(context.Background(), `SELECT data FROM webhook_events WHERE organization_id = $1 AND type = $2`, org, typ)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := 0
	for rows.Next() {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatal(err)
		}
		validateEventData(t, typ, v)
		got++
	}
	if got != n {
		t.Errorf("%d %s events, want %d", got, typ, n)
	}
}

// waitForJobsOf waits until no job of kind is waiting or running.
func waitForJobsOf(t testing.TB, env *apitest.Env, kind string) {
	t.Helper()
	waitForCount(t, env, 0, `SELECT count(*) FROM river_job WHERE kind = $1 AND state IN ('available', 'running', 'retryable', 'scheduled')`, kind)
}

// nonSARInvoice issues a USD invoice: a product with a free SAR plan to subscribe and a paid
// USD plan to select.
func nonSARInvoice(t *testing.T, env *apitest.Env) map[string]any {
	t.Helper()
	product, free := offeredPlan(t, env, "ga")
	usd := catalogueDo(t, env, apitest.OperatorToken, http.MethodPost, "/v1/plans", fmt.Sprintf(`{"product_id":%q,"code":"usd-%s","name":"Dollars",
		"billing_period":"monthly","currency":"USD","recurring_fee":1000,"prices":[{"component_type":"recurring_fee","amount":1000}]}`,
		product, uuid.NewString()[:8]), http.StatusCreated)["id"].(string)
	movePlan(t, env, usd, "active")
	org, token := newOrganization(t, env)
	sub := call(t, env, http.MethodPost, "/v1/subscriptions", token, subscriptionBody(org, product, free), http.StatusCreated)
	sel := call(t, env, http.MethodPost, "/v1/subscriptions/"+sub["id"].(string)+"/select-plan", token, fmt.Sprintf(`{"plan_id":%q}`, usd), http.StatusOK)
	return sel["invoice"].(map[string]any)
}

// Reachers of the tax document statuses the job moves an invoice to, and of not_applicable.
var (
	_ = reachable("TaxDocumentStatus", "issued", func(t *testing.T, env *apitest.Env) map[string]any {
		_, token, invoice := billedOrganization(t, env, buyerWithoutVAT)
		waitForTaxDocuments(t, env, token, invoice["id"].(string), 1)
		return call(t, env, http.MethodGet, "/v1/invoices/"+invoice["id"].(string), token, "", http.StatusOK)
	})
	_ = reachable("TaxDocumentStatus", "failed", func(t *testing.T, env *apitest.Env) map[string]any {
		_, token, invoice := billedOrganization(t, env, buyerWithBadVAT)
		waitForTaxDocuments(t, env, token, invoice["id"].(string), 0)
		return call(t, env, http.MethodGet, "/v1/invoices/"+invoice["id"].(string), token, "", http.StatusOK)
	})
	_ = reachable("TaxDocumentStatus", "not_applicable", func(t *testing.T, env *apitest.Env) map[string]any {
		return nonSARInvoice(t, env)
	})
)
