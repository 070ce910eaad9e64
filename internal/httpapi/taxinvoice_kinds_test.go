package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
	"github.com/provider/coreapi/internal/einvoice"
)

const (
	standardInvoicePath = "/v1/taxauth/invoices/generate/standard"
	archivePath         = "/v1/taxauth/invoices"
)

// standardBody is the example request made a standard document of kind: a VAT-registered
// business buyer with a Saudi postal address.
func standardBody(t testing.TB, orgID, kind string, changes map[string]string) string {
	t.Helper()
	all := map[string]string{
		"requested_invoice_type": fmt.Sprintf("%q", kind),
		"buyer": `{"legal_name": "Al Noor Trading LLC", "vat_number": "300000000000003", "buyer_type": "business",
		  "postal_address": {"street_name": "Prince Sultan Street", "building_number": "1111", "district": "Al Rawdah",
		    "city": "Jeddah", "postal_code": "23435", "country_code": "SA"}}`,
	}
	for k, v := range changes {
		all[k] = v
	}
	return invoiceBody(t, orgID, all)
}

// noteChanges are the fields of a note correcting the invoice with id original.
func noteChanges(kind, original string) map[string]string {
	return map[string]string{
		"requested_invoice_type": fmt.Sprintf("%q", kind),
		"billing_reference":      fmt.Sprintf(`{"invoice_id": %q}`, original),
		"note_reason":            `"Returned goods"`,
	}
}

// generateAt posts body to path and returns the generation result.
func generateAt(t testing.TB, env *apitest.Env, path, token, body string) invoiceResult {
	t.Helper()
	resp := env.Do(apitest.Request{Method: http.MethodPost, Path: path, Token: token, Body: body})
	if resp.Status != http.StatusCreated {
		t.Fatalf("generate at %s: status %d: %s", path, resp.Status, resp.Body)
	}
	return decodeInvoice(t, resp)
}

// kindsFixture is an organization with one document of every kind, generated in this order
// (ICV 1 to 6 of one chain): simplified invoice, standard invoice, simplified credit note (by
// invoice id), simplified debit note (by number and date), standard credit and debit notes.
type kindsFixture struct {
	env   *apitest.Env
	org   string
	token string
	docs  []invoiceResult
}

func newKindsFixture(t *testing.T) *kindsFixture {
	t.Helper()
	env := apitest.New(t)
	org := createOrganization(t, env, minimalOrganization)["id"].(string)
	f := &kindsFixture{env: env, org: org, token: "dev:org:" + org}
	simplified := generateAt(t, env, invoicePath, f.token, invoiceBody(t, org, nil))
	standard := generateAt(t, env, standardInvoicePath, f.token, standardBody(t, org, einvoice.TypeStandard, nil))
	byNumber := noteChanges(einvoice.TypeSimplifiedDebitNote, "")
	byNumber["billing_reference"] = fmt.Sprintf(`{"number": %q, "issue_date": "2025-02-27"}`, simplified.Invoice.Identity.Number)
	f.docs = []invoiceResult{
		simplified, standard,
		generateAt(t, env, invoicePath, f.token, invoiceBody(t, org, noteChanges(einvoice.TypeSimplifiedCreditNote, simplified.Invoice.ID))),
		generateAt(t, env, invoicePath, f.token, invoiceBody(t, org, byNumber)),
		generateAt(t, env, standardInvoicePath, f.token, standardBody(t, org, einvoice.TypeStandardCreditNote, noteChanges(einvoice.TypeStandardCreditNote, standard.Invoice.ID))),
		generateAt(t, env, standardInvoicePath, f.token, standardBody(t, org, einvoice.TypeStandardDebitNote, noteChanges(einvoice.TypeStandardDebitNote, standard.Invoice.ID))),
	}
	return f
}

func (f *kindsFixture) get(token, path string) *apitest.Response {
	return f.env.Do(apitest.Request{Method: http.MethodGet, Path: path, Token: token})
}

// list reads one archive page of the fixture's organization with the given query.
func (f *kindsFixture) list(t testing.TB, token, query string) (items []map[string]any, next any) {
	t.Helper()
	resp := f.get(token, archivePath+"?organization_id="+f.org+query)
	if resp.Status != http.StatusOK {
		t.Fatalf("list %s: %d %s", query, resp.Status, resp.Body)
	}
	var page struct {
		Items      []map[string]any `json:"items"`
		NextCursor any              `json:"next_cursor"`
	}
	if err := json.Unmarshal(resp.Body, &page); err != nil {
		t.Fatal(err)
	}
	return page.Items, page.NextCursor
}

func numbers(items []map[string]any) string {
	var out []string
	for _, it := range items {
		out = append(out, it["number"].(string))
	}
	return strings.Join(out, " ")
}

// TestTaxDocumentKinds generates each kind, lists it in the archive and downloads its XML.
func TestTaxDocumentKinds(t *testing.T) {
	t.Parallel()
	f := newKindsFixture(t)

	t.Run("Generated", func(t *testing.T) {
		t.Parallel()
		prev := einvoice.FirstPIH
		for i, d := range f.docs {
			kind := einvoice.Kinds[[]int{0, 3, 1, 2, 4, 5}[i]]
			id := d.Invoice.Identity
			if id.InvoiceType != kind.Type || d.Classification.SelectedType != kind.Type || id.ICV != int64(i+1) || id.PIH != prev ||
				id.Number != fmt.Sprintf("%s-%06d", kind.NumberPrefix, i+1) || !d.Validation.Internal.Valid {
				t.Errorf("%s: identity %+v, validation %+v", kind.Type, id, d.Validation)
			}
			prev = id.InvoiceHash
			typeCode := fmt.Sprintf(`<cbc:InvoiceTypeCode name="%s">%s</cbc:InvoiceTypeCode>`, kind.Name, kind.Code)
			if !strings.Contains(d.XML.Content, typeCode) {
				t.Errorf("%s: no %s in the XML", kind.Type, typeCode)
			}
			if n := f.env.Count("SELECT count(*) FROM webhook_events WHERE type = 'tax_invoice.generated' AND data->>'id' = $1", d.Invoice.ID); n != 1 {
				t.Errorf("%s: %d tax_invoice.generated events, want 1", kind.Type, n)
			}
			if n := f.env.Count("SELECT count(*) FROM audit_events WHERE action = 'tax_invoice.generated' AND resource_id = $1", d.Invoice.ID); n != 1 {
				t.Errorf("%s: %d audit events, want 1", kind.Type, n)
			}
		}
		if n := f.env.Count("SELECT count(*) FROM usage_events WHERE organization_id = $1 AND product = 'einvoice'", f.org); n != len(f.docs) {
			t.Errorf("%d usage events, want %d: every kind is counted", n, len(f.docs))
		}
		// Notes name their original: by id (its number and issue date) or as given.
		simplified, standard := f.docs[0].Invoice.Identity, f.docs[1].Invoice.Identity
		for i, want := range map[int]string{
			2: "<cbc:ID>" + simplified.Number + "</cbc:ID><cbc:IssueDate>" + time.Now().UTC().Format(time.DateOnly),
			3: "<cbc:ID>" + simplified.Number + "</cbc:ID><cbc:IssueDate>2025-02-27",
			4: "<cbc:ID>" + standard.Number + "</cbc:ID>",
			5: "<cbc:ID>" + standard.Number + "</cbc:ID>",
		} {
			x := strings.Join(strings.Fields(f.docs[i].XML.Content), "") // without the layout
			if !strings.Contains(x, "<cac:InvoiceDocumentReference>"+want) || !strings.Contains(x, "<cbc:InstructionNote>Returnedgoods</cbc:InstructionNote>") {
				t.Errorf("%s: billing reference or reason missing (want %q):\n%s", f.docs[i].Invoice.Identity.InvoiceType, want, x)
			}
		}
		if n := f.env.Count("SELECT count(*) FROM tax_invoices WHERE id = $1 AND billing_reference_invoice_id = $2 AND billing_reference_number = $3",
			f.docs[4].Invoice.ID, f.docs[1].Invoice.ID, standard.Number); n != 1 {
			t.Error("the standard credit note does not record its original")
		}
	})

	t.Run("Listed", func(t *testing.T) {
		t.Parallel()
		all, next := f.list(t, f.token, "")
		if numbers(all) != "DN-000006 CN-000005 SDN-000004 SCN-000003 INV-000002 SINV-000001" || next != nil {
			t.Fatalf("archive: %s, next %v", numbers(all), next)
		}
		first := all[1]
		if first["kind"] != einvoice.TypeStandardCreditNote || first["type_code"] != "381" || first["type_name"] != "0100000" ||
			first["billing_reference_number"] != "INV-000002" || first["id"] != f.docs[4].Invoice.ID ||
			first["invoice_hash"] != f.docs[4].Invoice.Identity.InvoiceHash || first["connected_business_id"] != nil {
			t.Errorf("summary: %v", first)
		}
		today := time.Now().UTC().Format(time.DateOnly)
		yesterday := time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)
		for query, want := range map[string]string{
			"&kind=standard_credit_note":                                   "CN-000005",
			"&kind=simplified_tax_invoice":                                 "SINV-000001",
			"&icv_from=2&icv_to=3":                                         "SCN-000003 INV-000002",
			"&icv_from=6":                                                  "DN-000006",
			"&issued_from=" + today + "&issued_to=" + today:                numbers(all),
			"&issued_to=" + yesterday:                                      "",
			"&issued_from=" + today + "&kind=standard_debit_note&icv_to=6": "DN-000006",
		} {
			if items, _ := f.list(t, f.token, query); numbers(items) != want {
				t.Errorf("%s: %q, want %q", query, numbers(items), want)
			}
		}
		page1, cursor := f.list(t, f.token, "&limit=4")
		page2, end := f.list(t, f.token, "&limit=4&cursor="+fmt.Sprint(cursor))
		if numbers(page1)+" "+numbers(page2) != numbers(all) || end != nil {
			t.Errorf("pages %q + %q (next %v)", numbers(page1), numbers(page2), end)
		}
		for _, query := range []string{"&icv_from=3&icv_to=2", "&issued_from=" + today + "&issued_to=" + yesterday, "&kind=receipt", "&icv_from=0"} {
			if r := f.get(f.token, archivePath+"?organization_id="+f.org+query); r.Status != http.StatusBadRequest {
				t.Errorf("%s: %d %s", query, r.Status, r.Body)
			}
		}
	})

	t.Run("Downloaded", func(t *testing.T) {
		t.Parallel()
		for _, d := range f.docs {
			resp := f.get(f.token, "/v1/taxauth/invoices/"+d.Invoice.ID+"/xml")
			if resp.Status != http.StatusOK || resp.Header.Get("Content-Type") != "application/xml" {
				t.Fatalf("%s: %d %q %s", d.Invoice.Identity.InvoiceType, resp.Status, resp.Header.Get("Content-Type"), resp.Body)
			}
			if string(resp.Body) != d.XML.Content {
				t.Errorf("%s: the download differs from the generated XML", d.Invoice.Identity.InvoiceType)
			}
			if n := f.env.Count("SELECT count(*) FROM tax_invoices WHERE id = $1 AND xml = $2", d.Invoice.ID, string(resp.Body)); n != 1 {
				t.Errorf("%s: the download differs from the stored XML", d.Invoice.Identity.InvoiceType)
			}
			get := decodeInvoice(t, f.get(f.token, "/v1/taxauth/invoices/"+d.Invoice.ID))
			if get.Invoice.Identity != d.Invoice.Identity {
				t.Errorf("read back: %+v", get.Invoice.Identity)
			}
		}
	})

	t.Run("WhoMayRead", func(t *testing.T) {
		t.Parallel()
		other := createOrganization(t, f.env, minimalOrganization)["id"].(string)
		stranger := "dev:org:" + other
		doc := f.docs[4].Invoice.ID
		if r := f.get(stranger, archivePath+"?organization_id="+f.org); r.Status != http.StatusForbidden {
			t.Errorf("another organization lists the archive: %d", r.Status)
		}
		unknown := f.get(stranger, "/v1/taxauth/invoices/"+uuid.NewString()+"/xml")
		foreign := f.get(stranger, "/v1/taxauth/invoices/"+doc+"/xml")
		if unknown.Status != http.StatusNotFound || foreign.Status != http.StatusNotFound {
			t.Errorf("another organization's XML: %d, unknown: %d", foreign.Status, unknown.Status)
		}
		if items, _ := f.list(t, apitest.OperatorToken, ""); len(items) != len(f.docs) {
			t.Errorf("the operator lists %d", len(items))
		}
		if r := f.get(apitest.OperatorToken, "/v1/taxauth/invoices/"+doc+"/xml"); r.Status != http.StatusOK {
			t.Errorf("operator download: %d", r.Status)
		}
	})
}

// TestTaxArchiveScopes: the organization and the operator generate standard documents, another
// organization cannot; the archive needs invoice:archive or invoices:read, the XML
// invoice:generate or invoice:archive; a key without them is refused.
func TestTaxArchiveScopes(t *testing.T) {
	t.Parallel()
	f := newKeyFixture(t)
	token := "dev:org:" + f.orgID
	doc := generateAt(t, f.env, standardInvoicePath, token, standardBody(t, f.orgID, einvoice.TypeStandard, nil)).Invoice.ID
	// Who may generate: the organization itself and the operator, not another organization.
	generateAt(t, f.env, standardInvoicePath, apitest.OperatorToken, standardBody(t, f.orgID, einvoice.TypeStandard, nil))
	stranger := "dev:org:" + createOrganization(t, f.env, minimalOrganization)["id"].(string)
	assertProblem(t, "another organization generates", f.env.Do(apitest.Request{Method: http.MethodPost, Path: standardInvoicePath, Token: stranger,
		Body: standardBody(t, f.orgID, einvoice.TypeStandard, nil)}), http.StatusForbidden, "forbidden")
	list := archivePath + "?organization_id=" + f.orgID
	xml := "/v1/taxauth/invoices/" + doc + "/xml"
	for _, c := range []struct {
		scopes         []string
		list, download int
	}{
		{[]string{"invoice:archive"}, http.StatusOK, http.StatusOK},
		{[]string{"invoices:read"}, http.StatusOK, http.StatusForbidden},
		{[]string{"invoice:generate"}, http.StatusForbidden, http.StatusOK},
		{[]string{"address:read"}, http.StatusForbidden, http.StatusForbidden},
	} {
		key := f.createKey(t, c.scopes, nil)["full_key"].(string)
		if r := f.get(key, list); r.Status != c.list {
			t.Errorf("%v list: %d, want %d", c.scopes, r.Status, c.list)
		}
		if r := f.get(key, xml); r.Status != c.download {
			t.Errorf("%v download: %d, want %d", c.scopes, r.Status, c.download)
		}
	}
}

// TestTaxDocumentRefusals: what the rules reject is 422, and a refusal stores, counts and
// chains nothing.
func TestTaxDocumentRefusals(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org := createOrganization(t, env, minimalOrganization)["id"].(string)
	token := "dev:org:" + org
	simplified := generateAt(t, env, invoicePath, token, invoiceBody(t, org, nil))
	standard := generateAt(t, env, standardInvoicePath, token, standardBody(t, org, einvoice.TypeStandard, nil))
	credit := generateAt(t, env, invoicePath, token, invoiceBody(t, org, noteChanges(einvoice.TypeSimplifiedCreditNote, simplified.Invoice.ID)))
	otherOrg := createOrganization(t, env, minimalOrganization)["id"].(string)
	foreign := generateAt(t, env, invoicePath, "dev:org:"+otherOrg, invoiceBody(t, otherOrg, nil))
	invoices, lastICV, lastHash := invoiceChainState(t, env, org)
	usage := env.Count("SELECT count(*) FROM usage_events WHERE organization_id = $1", org)

	withRef := func(kind, ref string) map[string]string {
		c := noteChanges(kind, "")
		c["billing_reference"] = ref
		return c
	}
	simplifiedNote := func(changes map[string]string) (string, string) { return invoicePath, invoiceBody(t, org, changes) }
	standardNote := func(changes map[string]string) (string, string) {
		return standardInvoicePath, standardBody(t, org, einvoice.TypeStandardCreditNote, changes)
	}
	unknownID := uuid.NewString()
	cases := map[string]struct {
		path, body, pointer, code, message string
	}{}
	add := func(name string, pathBody func(map[string]string) (string, string), changes map[string]string, pointer, code, message string) {
		p, b := pathBody(changes)
		cases[name] = struct{ path, body, pointer, code, message string }{p, b, pointer, code, message}
	}
	noRef := noteChanges(einvoice.TypeSimplifiedCreditNote, "")
	delete(noRef, "billing_reference")
	noReason := noteChanges(einvoice.TypeSimplifiedDebitNote, simplified.Invoice.ID)
	delete(noReason, "note_reason")
	add("NoteWithoutReference", simplifiedNote, noRef, "/billing_reference", "SBX-REF-01", "")
	add("NoteWithEmptyReference", simplifiedNote, withRef(einvoice.TypeSimplifiedCreditNote, `{}`), "/billing_reference", "SBX-REF-01", "")
	add("NoteWithoutReason", simplifiedNote, noReason, "/note_reason", "BR-KSA-17", "")
	add("UnknownOriginal", simplifiedNote, noteChanges(einvoice.TypeSimplifiedCreditNote, unknownID), "/billing_reference/invoice_id", "unprocessable",
		"Tax invoice "+unknownID+" does not exist.")
	add("AnotherOrganizationsOriginal", simplifiedNote, noteChanges(einvoice.TypeSimplifiedCreditNote, foreign.Invoice.ID), "/billing_reference/invoice_id",
		"unprocessable", "Tax invoice "+foreign.Invoice.ID+" does not exist.")
	add("NoteOfANote", simplifiedNote, noteChanges(einvoice.TypeSimplifiedDebitNote, credit.Invoice.ID), "/billing_reference/invoice_id", "unprocessable", "")
	add("SimplifiedNoteOfStandardInvoice", simplifiedNote, noteChanges(einvoice.TypeSimplifiedCreditNote, standard.Invoice.ID), "/billing_reference/invoice_id", "unprocessable", "")
	add("StandardNoteOfSimplifiedInvoice", standardNote, noteChanges(einvoice.TypeStandardCreditNote, simplified.Invoice.ID), "/billing_reference/invoice_id", "unprocessable", "")
	add("IdAndNumber", simplifiedNote, withRef(einvoice.TypeSimplifiedCreditNote, fmt.Sprintf(`{"invoice_id": %q, "number": "X-1"}`, simplified.Invoice.ID)),
		"/billing_reference", "unprocessable", "")
	add("StandardKindAtSimplified", simplifiedNote, map[string]string{"requested_invoice_type": `"standard_tax_invoice"`}, "/requested_invoice_type", "unprocessable", "")
	add("SimplifiedKindAtStandard", standardNote, map[string]string{"requested_invoice_type": `"simplified_tax_invoice"`}, "/requested_invoice_type", "unprocessable", "")
	add("StandardWithoutBuyerName", standardNote, map[string]string{"requested_invoice_type": `"standard_tax_invoice"`, "buyer.legal_name": ""},
		"/buyer/legal_name", "SBX-STD-01", "")
	add("StandardWithoutBuyerID", standardNote, map[string]string{"requested_invoice_type": `"standard_tax_invoice"`, "buyer.vat_number": ""},
		"/buyer/vat_number", "SBX-STD-02", "")
	add("StandardWithFreeTextAddress", standardNote, map[string]string{"requested_invoice_type": `"standard_tax_invoice"`, "buyer.postal_address": "",
		"buyer.address": `"Prince Sultan Street, Jeddah"`}, "/buyer/postal_address", "SBX-STD-03", "")
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			resp := env.Do(apitest.Request{Method: http.MethodPost, Path: c.path, Token: token, Body: c.body})
			if resp.Status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d: %s", resp.Status, resp.Body)
			}
			_, errs := problemErrors(t, resp)
			found := false
			for _, e := range errs {
				if e["pointer"] == c.pointer && e["code"] == c.code && (c.message == "" || e["message"] == c.message) {
					found = true
				}
			}
			if !found {
				t.Errorf("want %s %s %q in %s", c.pointer, c.code, c.message, resp.Body)
			}
		})
	}
	if n, icv, hash := invoiceChainState(t, env, org); n != invoices || icv != lastICV || hash != lastHash {
		t.Errorf("a refusal changed the chain: %d invoices, ICV %d", n, icv)
	}
	if n := env.Count("SELECT count(*) FROM usage_events WHERE organization_id = $1", org); n != usage {
		t.Errorf("a refusal was counted: %d usage events, want %d", n, usage)
	}
}

// TestTaxDocumentKindsShareTheSpendControl: every kind counts one einvoice operation against
// the organization's control, and at its hard limit every kind is refused, storing nothing.
func TestTaxDocumentKindsShareTheSpendControl(t *testing.T) {
	t.Parallel()
	f := newSpendFixture(t)
	if r := f.put("einvoice", map[string]any{"hard_operation_limit": 3}); r.Status != http.StatusOK {
		t.Fatalf("put: %d %s", r.Status, r.Body)
	}
	standard := generateAt(t, f.env, standardInvoicePath, f.token, standardBody(t, f.orgID, einvoice.TypeStandard, nil))
	generateAt(t, f.env, standardInvoicePath, f.token, standardBody(t, f.orgID, einvoice.TypeStandardDebitNote,
		noteChanges(einvoice.TypeStandardDebitNote, standard.Invoice.ID)))
	generateAt(t, f.env, invoicePath, f.token, invoiceBody(t, f.orgID, nil))
	if st := f.status(t, "einvoice"); st["current_operations"] != 3.0 || st["hard_limit_reached"] != true {
		t.Errorf("after three documents: %v", st)
	}
	for _, req := range []apitest.Request{
		{Method: http.MethodPost, Path: standardInvoicePath, Token: f.token, Body: standardBody(t, f.orgID, einvoice.TypeStandardCreditNote,
			noteChanges(einvoice.TypeStandardCreditNote, standard.Invoice.ID))},
		{Method: http.MethodPost, Path: invoicePath, Token: f.token, Body: invoiceBody(t, f.orgID, nil)},
	} {
		assertProblem(t, req.Path, f.env.Do(req), http.StatusTooManyRequests, "spend_limit_reached")
	}
	if n := f.env.Count("SELECT count(*) FROM tax_invoices WHERE organization_id = $1", f.orgID); n != 3 {
		t.Errorf("%d documents stored, want 3", n)
	}
	// The archive stays readable at the limit.
	if r := f.env.Do(apitest.Request{Method: http.MethodGet, Path: archivePath + "?organization_id=" + f.orgID, Token: f.token}); r.Status != http.StatusOK {
		t.Errorf("archive at the limit: %d", r.Status)
	}
}

// TestTaxArchiveConnectedBusiness: a connected business's credential (scope invoice:generate
// only) reads its own documents one by one but not the archive, downloads no other seller's
// XML, and its notes may correct only its own invoices; the platform organization lists every
// document of the organization.
func TestTaxArchiveConnectedBusiness(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	p := newPlatform(t, env)
	_, key1 := einvoiceCredential(t, p, "b-1")
	_, key2 := einvoiceCredential(t, p, "b-2")
	platformDoc := generateAt(t, env, invoicePath, p.token, invoiceBody(t, p.orgID, nil))
	b1Doc := generateAt(t, env, invoicePath, key1, invoiceBody(t, p.orgID, nil))
	b2Doc := generateAt(t, env, standardInvoicePath, key2, standardBody(t, p.orgID, einvoice.TypeStandard, nil))
	listed := func() int {
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: archivePath + "?organization_id=" + p.orgID, Token: p.token})
		if resp.Status != http.StatusOK {
			t.Fatalf("list: %d %s", resp.Status, resp.Body)
		}
		return len(resp.JSON(t)["items"].([]any))
	}
	if n := listed(); n != 3 {
		t.Errorf("the platform lists %d, want its own and both businesses'", n)
	}
	assertProblem(t, "business archive", env.Do(apitest.Request{Method: http.MethodGet, Path: archivePath + "?organization_id=" + p.orgID, Token: key1}),
		http.StatusForbidden, "insufficient_scope")
	if r := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/taxauth/invoices/" + b1Doc.Invoice.ID + "/xml", Token: key1}); r.Status != http.StatusOK ||
		string(r.Body) != b1Doc.XML.Content {
		t.Errorf("business 1 downloads its own: %d", r.Status)
	}
	for _, id := range []string{platformDoc.Invoice.ID, b2Doc.Invoice.ID} {
		if r := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/taxauth/invoices/" + id + "/xml", Token: key1}); r.Status != http.StatusNotFound {
			t.Errorf("business 1 downloads %s: %d", id, r.Status)
		}
	}
	// A note of business 1 correcting business 2's invoice: unknown to business 1. The
	// platform correcting business 2's invoice: another seller's.
	unknown := env.Do(apitest.Request{Method: http.MethodPost, Path: standardInvoicePath, Token: key1,
		Body: standardBody(t, p.orgID, einvoice.TypeStandardCreditNote, noteChanges(einvoice.TypeStandardCreditNote, b2Doc.Invoice.ID))})
	other := env.Do(apitest.Request{Method: http.MethodPost, Path: standardInvoicePath, Token: p.token,
		Body: standardBody(t, p.orgID, einvoice.TypeStandardCreditNote, noteChanges(einvoice.TypeStandardCreditNote, b2Doc.Invoice.ID))})
	_, unknownErrs := problemErrors(t, unknown)
	_, otherErrs := problemErrors(t, other)
	if unknown.Status != http.StatusUnprocessableEntity || len(unknownErrs) != 1 ||
		unknownErrs[0]["message"] != "Tax invoice "+b2Doc.Invoice.ID+" does not exist." {
		t.Errorf("business 1 corrects business 2's invoice: %d %s", unknown.Status, unknown.Body)
	}
	if other.Status != http.StatusUnprocessableEntity || len(otherErrs) != 1 ||
		otherErrs[0]["message"] != "Tax invoice "+b2Doc.Invoice.ID+" was issued by another seller." {
		t.Errorf("the platform corrects business 2's invoice: %d %s", other.Status, other.Body)
	}
	if n := listed(); n != 3 {
		t.Errorf("a refused note was stored: %d documents", n)
	}
}
