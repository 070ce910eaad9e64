package httpapi_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/provider/coreapi/internal/apitest"
	"github.com/provider/coreapi/internal/einvoice"
)

// issueEachKind generates one document of each of the six kinds with the unit: the simplified
// and standard invoices, then a credit and a debit note of each.
func issueEachKind(t *testing.T, env *apitest.Env, org, token, unit string) []invoiceResult {
	t.Helper()
	withUnit := func(changes map[string]string) map[string]string {
		if changes == nil {
			changes = map[string]string{}
		}
		changes["egs_unit_id"] = fmt.Sprintf("%q", unit)
		return changes
	}
	simplified := generateAt(t, env, invoicePath, token, invoiceBody(t, org, withUnit(nil)))
	standard := generateAt(t, env, standardInvoicePath, token, standardBody(t, org, einvoice.TypeStandard, withUnit(nil)))
	docs := []invoiceResult{simplified, standard}
	for _, kind := range []string{einvoice.TypeSimplifiedCreditNote, einvoice.TypeSimplifiedDebitNote} {
		docs = append(docs, generateAt(t, env, invoicePath, token, invoiceBody(t, org, withUnit(noteChanges(kind, simplified.Invoice.ID)))))
	}
	for _, kind := range []string{einvoice.TypeStandardCreditNote, einvoice.TypeStandardDebitNote} {
		docs = append(docs, generateAt(t, env, standardInvoicePath, token, standardBody(t, org, kind, withUnit(noteChanges(kind, standard.Invoice.ID)))))
	}
	return docs
}

// assertClean checks a validation found no error and no warning, and says which certificate
// it checked the stamp against (SBX-CERT-04 a unit's of the sandbox CA, SBX-CERT-05 the
// sandbox authority's own).
func assertClean(t *testing.T, what string, v validationResult, certificate string) {
	t.Helper()
	if !v.Valid || v.Status != einvoice.VerdictPass || len(v.codesOf("error")) > 0 || len(v.codesOf("warning")) > 0 {
		t.Errorf("%s: %s %+v", what, v.Status, v.Results)
	}
	for _, code := range []string{"SBX-XSD-00", "SBX-HASH-00", "SBX-SIG-00", certificate, "SBX-QR-00"} {
		if !slices.Contains(v.codesOf("info"), code) {
			t.Errorf("%s: no %s in %+v", what, code, v.Results)
		}
	}
}

// TestEInvoiceJourney is issue 27's proof: register a unit from a CSR, pass compliance with
// every kind its flags declare, get the production certificate, issue each kind with it,
// submit each (simplified reported, standard cleared by the sandbox authority), find them
// in the archive by submission status, download their XML and validate it, and the cleared
// XML: all clean. A document stamped with a certificate the sandbox CA did not issue keeps
// the warning that its chain is not verified.
func TestEInvoiceJourney(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org := createOrganization(t, env, minimalOrganization)["id"].(string)
	token := "dev:org:" + org

	unit := registerUnit(t, env, org, token, "1100")
	unitID := unit["id"].(string)
	if unit["status"] != "compliance" {
		t.Fatalf("a new unit: %v", unit)
	}
	compliance := issueEachKind(t, env, org, token, unitID)
	prod := call(t, env, http.MethodPost, egsUnitsPath+"/"+unitID+"/production-certificate", token, "", http.StatusOK)
	if prod["status"] != "production" {
		t.Fatalf("after compliance: %v", prod)
	}
	productionCert := certificateBody(prod["production_certificate"].(map[string]any)["pem"].(string))
	docs := issueEachKind(t, env, org, token, unitID)

	cleared := map[string]string{} // document id → cleared XML
	for _, d := range docs {
		kind := einvoiceKind(t, d.Invoice.Identity.InvoiceType)
		s, resp := submit(t, env, token, d.Invoice.ID)
		want := map[bool]string{false: einvoice.SubmissionReported, true: einvoice.SubmissionCleared}[kind.Standard]
		if s.SubmissionStatus != want || s.ValidationResults.Status != einvoice.VerdictPass ||
			len(s.ValidationResults.WarningMessages)+len(s.ValidationResults.ErrorMessages) > 0 ||
			!slices.Contains(messageCodes(s.ValidationResults.InfoMessages), "SBX-CERT-04") {
			t.Errorf("submitting %s: %s", kind.Type, resp.Body)
		}
		if kind.Standard {
			cleared[d.Invoice.ID] = string(s.ClearedInvoice)
		}
	}

	// The archive by submission status: the production documents under their outcome, the
	// compliance ones not submitted.
	byStatus := map[string][]invoiceResult{einvoice.SubmissionNotSubmitted: compliance}
	for _, d := range docs {
		standard := einvoiceKind(t, d.Invoice.Identity.InvoiceType).Standard
		status := map[bool]string{false: einvoice.SubmissionReported, true: einvoice.SubmissionCleared}[standard]
		byStatus[status] = append(byStatus[status], d)
	}
	for status, want := range byStatus {
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: archivePath + "?organization_id=" + org + "&submission_status=" + status, Token: token})
		if resp.Status != http.StatusOK {
			t.Fatalf("archive %s: %d %s", status, resp.Status, resp.Body)
		}
		var ids []string
		for _, item := range resp.JSON(t)["items"].([]any) {
			ids = append(ids, item.(map[string]any)["id"].(string))
		}
		for _, d := range want {
			if !slices.Contains(ids, d.Invoice.ID) {
				t.Errorf("archive %s: %s missing from %v", status, d.Invoice.ID, ids)
			}
		}
		if len(ids) != len(want) {
			t.Errorf("archive %s: %d documents, want %d", status, len(ids), len(want))
		}
	}

	// Download and validate: each document clean, checked against the sandbox CA; each
	// cleared copy clean, stamped by the sandbox authority.
	for _, d := range docs {
		kind := d.Invoice.Identity.InvoiceType
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: archivePath + "/" + d.Invoice.ID + "/xml", Token: token})
		if resp.Status != http.StatusOK {
			t.Fatalf("download %s: %d %s", kind, resp.Status, resp.Body)
		}
		doc := string(resp.Body)
		if doc != d.XML.Content || elementText(doc, "ds:X509Certificate") != productionCert {
			t.Errorf("%s: the download is not the document stamped with the production certificate", kind)
		}
		assertClean(t, "downloaded "+kind, validateXML(t, env, token, doc), "SBX-CERT-04")
		assertClean(t, "downloaded "+kind+", by the operator", validateXML(t, env, apitest.OperatorToken, doc), "SBX-CERT-04")
		if c, ok := cleared[d.Invoice.ID]; ok {
			if elementText(c, "ds:X509Certificate") == productionCert {
				t.Errorf("%s: the cleared copy carries the unit's certificate, not the sandbox authority's", kind)
			}
			assertClean(t, "cleared "+kind, validateXML(t, env, token, c), "SBX-CERT-05")
		}
	}

	// Another organization's self-signed sandbox certificate is not the sandbox CA's: checked
	// with the certificate it embeds, and the warning stays.
	other := createOrganization(t, env, minimalOrganization)["id"].(string)
	foreign := generateAt(t, env, invoicePath, "dev:org:"+other, invoiceBody(t, other, nil))
	v := validateXML(t, env, token, foreign.XML.Content)
	if len(v.codesOf("error")) > 0 || !slices.Equal(v.codesOf("warning"), []string{"SBX-CERT-02"}) || slices.Contains(v.codesOf("info"), "SBX-CERT-04") {
		t.Errorf("a document of another organization's own key: %+v", v)
	}
}
