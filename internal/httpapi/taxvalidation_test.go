package httpapi_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
	"github.com/provider/coreapi/internal/einvoice"
)

const validatePath = "/v1/taxauth/invoices/validate"

type validationResult struct {
	Valid   bool   `json:"valid"`
	Status  string `json:"status"`
	Input   string `json:"input"`
	Results []struct {
		Type     string  `json:"type"`
		Code     string  `json:"code"`
		Category string  `json:"category"`
		Message  string  `json:"message"`
		Path     *string `json:"path"`
	} `json:"results"`
	Sandbox             bool   `json:"sandbox"`
	ReportedToAuthority bool   `json:"reported_to_authority"`
	Notice              string `json:"notice"`
}

// codesOf lists the codes of the results of type typ.
func (v validationResult) codesOf(typ string) []string {
	var out []string
	for _, r := range v.Results {
		if r.Type == typ {
			out = append(out, r.Code)
		}
	}
	return out
}

func validateXML(t testing.TB, env *apitest.Env, token, doc string) validationResult {
	t.Helper()
	resp := env.Do(apitest.Request{Method: http.MethodPost, Path: validatePath, Token: token, Body: doc, ContentType: "application/xml"})
	return decodeValidation(t, resp)
}

func decodeValidation(t testing.TB, resp *apitest.Response) validationResult {
	t.Helper()
	if resp.Status != http.StatusOK {
		t.Fatalf("validate: status %d: %s", resp.Status, resp.Body)
	}
	var v validationResult
	if err := json.Unmarshal(resp.Body, &v); err != nil {
		t.Fatal(err)
	}
	if !v.Sandbox || v.ReportedToAuthority || v.Notice != einvoice.Notice {
		t.Errorf("a validation does not say it is a sandbox result: %s", resp.Body)
	}
	return v
}

// signatureValue is the text of the document's ds:SignatureValue.
func signatureValue(doc string) string { return elementText(doc, "ds:SignatureValue") }

// elementText is the text of the first element named name in doc.
func elementText(doc, name string) string {
	open := "<" + name + ">"
	i := strings.Index(doc, open) + len(open)
	return doc[i : i+strings.Index(doc[i:], "<")]
}

// TestValidateTaxInvoiceXML: a generated invoice fed back passes; tampered copies fail naming
// the broken rule, hash, QR or signature; nothing is stored or counted.
func TestValidateTaxInvoiceXML(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org := createOrganization(t, env, minimalOrganization)["id"].(string)
	token := "dev:org:" + org
	inv := generateInvoice(t, env, token, invoiceBody(t, org, nil))
	doc := inv.XML.Content

	v := validateXML(t, env, token, doc)
	if !v.Valid || v.Status == "ERROR" || v.Input != "xml" || len(v.codesOf("error")) > 0 {
		t.Fatalf("a generated invoice: %+v", v)
	}
	for _, code := range []string{"SBX-XSD-00", "SBX-HASH-00", "SBX-SIG-00", "SBX-CERT-00", "SBX-QR-00"} {
		if !slices.Contains(v.codesOf("info"), code) {
			t.Errorf("no %s: %+v", code, v.Results)
		}
	}

	qr := inv.QR.Payload
	// Another invoice's signature: well-formed, but of another hash.
	otherSignature := signatureValue(generateInvoice(t, env, token, invoiceBody(t, org, nil)).XML.Content)
	for _, tc := range []struct {
		name   string
		doc    string
		errors []string
	}{
		{"ChangedAmount", strings.Replace(doc, `<cbc:TaxInclusiveAmount currencyID="SAR">97.75`, `<cbc:TaxInclusiveAmount currencyID="SAR">9.75`, 1),
			[]string{"BR-CO-15", "SBX-HASH-01", "SBX-SIG-02"}},
		{"ChangedHash", strings.Replace(doc, "<ds:DigestValue>"+inv.Invoice.Identity.InvoiceHash, "<ds:DigestValue>AAAA"+inv.Invoice.Identity.InvoiceHash[4:], 1),
			[]string{"SBX-HASH-01"}},
		{"BrokenQR", strings.Replace(doc, qr, qr[:len(qr)-12], 1), []string{"SBX-QR-02"}},
		{"BrokenSignature", strings.Replace(doc, signatureValue(doc), otherSignature, 1), []string{"SBX-SIG-02", "SBX-QR-17"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.doc == doc {
				t.Fatal("the tampering changed nothing")
			}
			v := validateXML(t, env, token, tc.doc)
			if v.Valid || v.Status != "ERROR" {
				t.Fatalf("a tampered copy passes: %+v", v)
			}
			for _, code := range tc.errors {
				if !slices.Contains(v.codesOf("error"), code) {
					t.Errorf("no %s error: %+v", code, v.Results)
				}
			}
		})
	}
	if n := env.Count("SELECT count(*) FROM usage_events WHERE organization_id = $1", org); n != 2 {
		t.Errorf("%d usage events, want the two generations'", n)
	}
	if n := env.Count("SELECT count(*) FROM tax_invoices WHERE organization_id = $1", org); n != 2 {
		t.Errorf("%d tax invoices, want the two generated", n)
	}

	// The operator may validate documents: checked with the certificate they embed.
	op := validateXML(t, env, apitest.OperatorToken, doc)
	if len(op.codesOf("error")) > 0 || !slices.Contains(op.codesOf("warning"), "SBX-CERT-02") {
		t.Errorf("the operator's validation: %+v", op)
	}
	// Another organization: the document is not stamped with its certificate.
	other := createOrganization(t, env, minimalOrganization)["id"].(string)
	if v := validateXML(t, env, "dev:org:"+other, doc); !slices.Contains(v.codesOf("warning"), "SBX-CERT-02") {
		t.Errorf("another organization's validation: %+v", v)
	}
}

// TestValidateTaxInvoiceJSON: a request is checked as generation would, nothing is issued.
func TestValidateTaxInvoiceJSON(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org := createOrganization(t, env, minimalOrganization)["id"].(string)
	token := "dev:org:" + org

	v := decodeValidation(t, env.Do(apitest.Request{Method: http.MethodPost, Path: validatePath, Token: token, Body: invoiceBody(t, org, nil)}))
	if !v.Valid || v.Status != "WARNING" || v.Input != "json" || len(v.Results) != 1 || v.Results[0].Code != "SBX-NOTE-01" ||
		v.Results[0].Path == nil || *v.Results[0].Path != "/buyer" || v.Results[0].Category != "business_rules" {
		t.Errorf("the example request: %+v", v)
	}
	bad := invoiceBody(t, org, map[string]string{"seller.vat_number": `"123"`})
	v = decodeValidation(t, env.Do(apitest.Request{Method: http.MethodPost, Path: validatePath, Token: token, Body: bad}))
	if v.Valid || v.Status != "ERROR" || !slices.Contains(v.codesOf("error"), "BR-KSA-40") {
		t.Errorf("an invalid VAT number: %+v", v)
	}
	for table, want := range map[string]int{"tax_invoices": 0, "usage_events": 0, "einvoice_counters": 0, "einvoice_sandbox_keys": 0} {
		if n := env.Count("SELECT count(*) FROM "+table+" WHERE organization_id = $1", org); n != want {
			t.Errorf("%s: %d rows after validations, want %d", table, n, want)
		}
	}

	// Who may call it: another organization's id is 403, the operator names any existing one.
	other := createOrganization(t, env, minimalOrganization)["id"].(string)
	assertProblem(t, "another organization", env.Do(apitest.Request{Method: http.MethodPost, Path: validatePath, Token: "dev:org:" + other,
		Body: invoiceBody(t, org, nil)}), http.StatusForbidden, "forbidden")
	if r := env.Do(apitest.Request{Method: http.MethodPost, Path: validatePath, Token: apitest.OperatorToken, Body: invoiceBody(t, org, nil)}); r.Status != http.StatusOK {
		t.Errorf("operator: %d %s", r.Status, r.Body)
	}
	assertProblem(t, "unknown organization", env.Do(apitest.Request{Method: http.MethodPost, Path: validatePath, Token: apitest.OperatorToken,
		Body: invoiceBody(t, uuid.NewString(), nil)}), http.StatusNotFound, "not_found")
}

// TestValidateTaxInvoiceRefusesBadXML: what is no readable document is 400 (or 413), costs
// bounded time and memory, and fetches or expands nothing.
func TestValidateTaxInvoiceRefusesBadXML(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org := createOrganization(t, env, minimalOrganization)["id"].(string)
	token := "dev:org:" + org
	laughs := `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">` +
		`<!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">` +
		`<!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">` +
		`<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]><Invoice>&lol3;</Invoice>`
	for name, doc := range map[string]string{
		"Malformed":       "<Invoice><cbc:ID>1</Invoice>",
		"BillionLaughs":   laughs,
		"ExternalEntity":  `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><Invoice>&xxe;</Invoice>`,
		"ExternalDTD":     `<?xml version="1.0"?><!DOCTYPE Invoice SYSTEM "http://127.0.0.1:9/invoice.dtd"><Invoice/>`,
		"DeepNesting":     strings.Repeat("<a>", 1000) + strings.Repeat("</a>", 1000),
		"NotXMLAtAll":     "hello",
		"JSONSentAsXML":   invoiceBody(t, org, nil),
		"TruncatedInvoke": `<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><cbc:ID`,
	} {
		t.Run(name, func(t *testing.T) {
			resp := env.Do(apitest.Request{Method: http.MethodPost, Path: validatePath, Token: token, Body: doc, ContentType: "application/xml"})
			assertProblem(t, name, resp, http.StatusBadRequest, "validation_failed")
			if resp.Status == http.StatusBadRequest && !strings.Contains(string(resp.Body), `"code":"xml"`) {
				t.Errorf("the problem does not name the XML: %s", resp.Body)
			}
		})
	}
	huge := `<Invoice>` + strings.Repeat("x", 1<<20) + `</Invoice>`
	assertProblem(t, "huge", env.Do(apitest.Request{Method: http.MethodPost, Path: validatePath, Token: token, Body: huge, ContentType: "application/xml"}),
		http.StatusRequestEntityTooLarge, "payload_too_large")
	assertProblem(t, "neither JSON nor XML", env.Do(apitest.Request{Method: http.MethodPost, Path: validatePath, Token: token, Body: "hello", ContentType: "text/plain"}),
		http.StatusBadRequest, "validation_failed")
	// A well-formed document of another kind is a result, not a request error.
	v := validateXML(t, env, token, `<Order xmlns="urn:oasis:names:specification:ubl:schema:xsd:Order-2"/>`)
	if v.Valid || !slices.Contains(v.codesOf("error"), "SBX-XSD-01") {
		t.Errorf("another document: %+v", v)
	}
}

// TestValidateTaxInvoiceIdempotentAndGated: a replay answers the first result; the
// einvoice entitlement rules apply, and their withdrawal is obeyed by the very next request.
func TestValidateTaxInvoiceIdempotentAndGated(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org := organizationIn(t, env, map[string]string{"lifecycle_status": "active"})
	token := "dev:org:" + org
	inv := generateInvoice(t, env, token, invoiceBody(t, org, nil))
	key := http.Header{"Idempotency-Key": {uuid.NewString()}}
	send := func(body, contentType string, h http.Header) *apitest.Response {
		return env.Do(apitest.Request{Method: http.MethodPost, Path: validatePath, Token: token, Body: body, ContentType: contentType, Header: h})
	}
	first := send(inv.XML.Content, "application/xml", key)
	replay := send(inv.XML.Content, "application/xml", key)
	if first.Status != http.StatusOK || replay.Status != http.StatusOK || replay.Header.Get("Idempotent-Replayed") != "true" ||
		string(replay.Body) != string(first.Body) {
		t.Fatalf("replay: %d %d %q", first.Status, replay.Status, replay.Header.Get("Idempotent-Replayed"))
	}
	assertProblem(t, "same key, other body", send(invoiceBody(t, org, nil), "application/json", key), http.StatusUnprocessableEntity, "idempotency_key_reused")

	patchStanding(t, env, org, `{"lifecycle_status":"suspended"}`)
	assertProblem(t, "XML, very next request", send(inv.XML.Content, "application/xml", nil), http.StatusForbidden, "organization_suspended")
	assertProblem(t, "JSON", send(invoiceBody(t, org, nil), "application/json", nil), http.StatusForbidden, "organization_suspended")
}

// TestValidateTaxInvoiceUnusualRequests: what generation issues for unusual but allowed
// requests its own validator passes (a long Arabic seller name cut in the QR, control
// characters written as U+FFFD), and what no XML tool could read back is not issued.
func TestValidateTaxInvoiceUnusualRequests(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org := createOrganization(t, env, minimalOrganization)["id"].(string)
	token := "dev:org:" + org
	for name, tc := range map[string]struct {
		legalName string
		warning   string // expected in both the generation's issues and the validation's results
	}{
		"ArabicSellerNameOver255Bytes":    {strings.Repeat("شركة نخلة ", 15), "SBX-QR-01"},
		"SellerNameWithControlCharacters": {"Nakhla\u0001 Trading\u000b", "SBX-TEXT-01"},
	} {
		raw := `"` + strings.NewReplacer("\u0001", `\u0001`, "\u000b", `\u000b`).Replace(tc.legalName) + `"`
		r := generateInvoice(t, env, token, invoiceBody(t, org, map[string]string{"seller.legal_name": raw}))
		if !slices.ContainsFunc(r.Validation.Internal.Issues, func(i einvoice.Issue) bool { return i.Code == tc.warning }) {
			t.Errorf("%s: generation issues %+v, want %s", name, r.Validation.Internal.Issues, tc.warning)
		}
		v := validateXML(t, env, token, r.XML.Content)
		if !v.Valid || len(v.codesOf("error")) > 0 {
			t.Errorf("%s: the issued document is invalid: %v %+v", name, v.codesOf("error"), v.Results)
		}
	}

	before := env.Count("SELECT count(*) FROM tax_invoices WHERE organization_id = $1", org)
	resp := env.Do(apitest.Request{Method: http.MethodPost, Path: invoicePath, Token: token, Body: invoiceBody(t, org, map[string]string{
		"line_items": `[{"line_id":"1","name_en":"Saffron","quantity":1e-25,"unit_code":"GRM","unit_price":4999,"tax_category":"S","tax_rate":15}]`})})
	assertProblem(t, "quantity of 25 digits", resp, http.StatusUnprocessableEntity, "unprocessable")
	if _, errs := problemErrors(t, resp); len(errs) != 1 || errs[0]["code"] != "SBX-LINE-03" || errs[0]["pointer"] != "/line_items/0/quantity" {
		t.Errorf("quantity of 25 digits: %+v", errs)
	}
	if after := env.Count("SELECT count(*) FROM tax_invoices WHERE organization_id = $1", org); after != before {
		t.Errorf("a refused request issued a document: %d -> %d", before, after)
	}
}
