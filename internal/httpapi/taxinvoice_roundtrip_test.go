package httpapi_test

import (
	"net/http"
	"regexp"
	"slices"
	"testing"
)

// taxInclusiveAmount is the document's total with VAT (BT-112), the amount a tampering changes.
var taxInclusiveAmount = regexp.MustCompile(`(<cbc:TaxInclusiveAmount currencyID="SAR">)([0-9.]+)(<)`)

// TestTaxDocumentRoundTrip is issue 24's proof: each kind is generated, found in the archive
// under its kind, downloaded, and fed back to validate with no error; a copy with a changed
// amount gives errors naming the broken rule, the hash, the signature and the QR code.
func TestTaxDocumentRoundTrip(t *testing.T) {
	t.Parallel()
	f := newKindsFixture(t)
	for _, d := range f.docs {
		kind := d.Invoice.Identity.InvoiceType
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			items, _ := f.list(t, f.token, "&kind="+kind)
			if len(items) != 1 || items[0]["id"] != d.Invoice.ID {
				t.Fatalf("the archive under kind %s: %v", kind, items)
			}
			resp := f.get(f.token, archivePath+"/"+d.Invoice.ID+"/xml")
			if resp.Status != http.StatusOK {
				t.Fatalf("download: %d %s", resp.Status, resp.Body)
			}
			doc := string(resp.Body)

			v := validateXML(t, f.env, f.token, doc)
			if !v.Valid || v.Status != "PASS" || len(v.codesOf("error")) > 0 || len(v.codesOf("warning")) > 0 {
				t.Errorf("the downloaded %s: %s %+v", kind, v.Status, v.Results)
			}
			for _, code := range []string{"SBX-XSD-00", "SBX-HASH-00", "SBX-SIG-00", "SBX-CERT-00", "SBX-QR-00"} {
				if !slices.Contains(v.codesOf("info"), code) {
					t.Errorf("no %s: %+v", code, v.Results)
				}
			}

			tampered := taxInclusiveAmount.ReplaceAllString(doc, "${1}1${2}${3}")
			if tampered == doc {
				t.Fatal("the tampering changed nothing")
			}
			v = validateXML(t, f.env, f.token, tampered)
			if v.Valid || v.Status != "ERROR" {
				t.Fatalf("a tampered %s passes: %+v", kind, v)
			}
			for _, code := range []string{"BR-CO-15", "SBX-HASH-01", "SBX-SIG-02", "SBX-QR-16"} {
				if !slices.Contains(v.codesOf("error"), code) {
					t.Errorf("a tampered %s: no %s error: %+v", kind, code, v.Results)
				}
			}
		})
	}
}
