package httpapi_test

import (
	"fmt"
	"github.com/provider/coreapi/internal/apitest"
	"github.com/provider/coreapi/internal/einvoice"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// taxInclusiveAmount is the document's total with VAT (BT-112), the amount a tampering changes.
var taxInclusiveAmount = regexp.MustCompile(`(<cbc:TaxInclusiveAmount currencyID="SAR">)([0-9.]+)(<)`)

// instructionNote is a note's reason (KSA-10).
var instructionNote = regexp.MustCompile(`<cbc:InstructionNote>[^<]*</cbc:InstructionNote>`)

func einvoiceKind(t testing.TB, typ string) einvoice.Kind {
	t.Helper()
	k, ok := einvoice.KindOf(typ)
	if !ok {
		t.Fatalf("no kind %q", typ)
	}
	return k
}

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

			// The operator validates with the certificate the document embeds: the same
			// checks, and a warning that it is another organization's sandbox certificate.
			op := validateXML(t, f.env, apitest.OperatorToken, doc)
			if op.Status != "WARNING" || len(op.codesOf("error")) > 0 || !slices.Equal(op.codesOf("warning"), []string{"SBX-CERT-02"}) {
				t.Errorf("the operator's validation of %s: %s %+v", kind, op.Status, op.Results)
			}
			if einvoiceKind(t, kind).Note() {
				// A note without its reason (KSA-10) breaks BR-KSA-17, and the hash.
				v := validateXML(t, f.env, f.token, instructionNote.ReplaceAllString(doc, ""))
				for _, code := range []string{"BR-KSA-17", "SBX-HASH-01"} {
					if !slices.Contains(v.codesOf("error"), code) {
						t.Errorf("a %s without reason: no %s error: %+v", kind, code, v.Results)
					}
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

// TestValidateTaxInvoiceJSONEveryKind: a request of every kind is checked as its generation
// would check it: the standard buyer rules, a note's reference (resolved by id as generation
// resolves it) and reason. Nothing is issued.
func TestValidateTaxInvoiceJSONEveryKind(t *testing.T) {
	t.Parallel()
	f := newKindsFixture(t)
	simplified, standard, simplifiedNote := f.docs[0].Invoice.ID, f.docs[1].Invoice.ID, f.docs[2].Invoice.ID
	others := createOrganization(t, f.env, minimalOrganization)["id"].(string)
	othersInvoice := generateAt(t, f.env, invoicePath, "dev:org:"+others, invoiceBody(t, others, nil)).Invoice.ID
	invoices, lastICV, lastHash := invoiceChainState(t, f.env, f.org)
	usage := f.env.Count("SELECT count(*) FROM usage_events WHERE organization_id = $1", f.org)

	// noteBody is the example request made a note of kind correcting original, with changes.
	noteBody := func(kind, original string, changes map[string]string) string {
		all := noteChanges(kind, original)
		for k, v := range changes {
			all[k] = v
		}
		if einvoiceKind(t, kind).Standard {
			return standardBody(t, f.org, kind, all)
		}
		return invoiceBody(t, f.org, all)
	}
	type finding struct{ typ, code, path string }
	const unknown = "0193b5e2-4a1c-7d2e-8f30-5a6b7c8d9e01"
	for _, tc := range []struct {
		name string
		body string
		// want is every finding, in order. The simplified kinds keep the example's
		// individual buyer without a name: SBX-NOTE-01 (warning) says the document was issued
		// as simplified because the buyer cannot be identified, as generation says.
		want []finding
	}{
		{"SimplifiedInvoice", invoiceBody(t, f.org, nil), []finding{{"warning", "SBX-NOTE-01", "/buyer"}}},
		{"SimplifiedCreditNote", noteBody(einvoice.TypeSimplifiedCreditNote, simplified, nil), []finding{{"warning", "SBX-NOTE-01", "/buyer"}}},
		{"SimplifiedDebitNote", noteBody(einvoice.TypeSimplifiedDebitNote, simplified, nil), []finding{{"warning", "SBX-NOTE-01", "/buyer"}}},
		{"StandardInvoice", standardBody(t, f.org, einvoice.TypeStandard, nil), nil},
		{"StandardCreditNote", noteBody(einvoice.TypeStandardCreditNote, standard, nil), nil},
		{"StandardDebitNote", noteBody(einvoice.TypeStandardDebitNote, standard, nil), nil},

		{"StandardWithoutBuyer", standardBody(t, f.org, einvoice.TypeStandard, map[string]string{"buyer": `{"buyer_type": "business"}`}),
			[]finding{{"error", "SBX-STD-01", "/buyer/legal_name"}, {"error", "SBX-STD-02", "/buyer/vat_number"}, {"error", "SBX-STD-03", "/buyer/postal_address"}}},
		{"NoteWithoutReference", noteBody(einvoice.TypeStandardCreditNote, standard, map[string]string{"billing_reference": ""}),
			[]finding{{"error", "SBX-REF-01", "/billing_reference"}}},
		{"NoteWithoutReason", noteBody(einvoice.TypeStandardDebitNote, standard, map[string]string{"note_reason": ""}),
			[]finding{{"error", "BR-KSA-17", "/note_reason"}}},
		{"NoteOfUnknownInvoice", noteBody(einvoice.TypeStandardCreditNote, unknown, nil),
			[]finding{{"error", "SBX-REF-01", "/billing_reference/invoice_id"}}},
		{"NoteOfAnotherOrganizationsInvoice", noteBody(einvoice.TypeSimplifiedCreditNote, othersInvoice, nil),
			[]finding{{"error", "SBX-REF-01", "/billing_reference/invoice_id"}, {"warning", "SBX-NOTE-01", "/buyer"}}},
		{"NoteOfTheOtherFamily", noteBody(einvoice.TypeStandardCreditNote, simplified, nil),
			[]finding{{"error", "SBX-REF-01", "/billing_reference/invoice_id"}}},
		{"NoteOfANote", noteBody(einvoice.TypeSimplifiedDebitNote, simplifiedNote, nil),
			[]finding{{"error", "SBX-REF-01", "/billing_reference/invoice_id"}, {"warning", "SBX-NOTE-01", "/buyer"}}},
		{"NoteByIdAndNumber", noteBody(einvoice.TypeStandardCreditNote, standard,
			map[string]string{"billing_reference": fmt.Sprintf(`{"invoice_id": %q, "number": "INV-000002"}`, standard)}),
			[]finding{{"error", "SBX-REF-01", "/billing_reference"}}},
		{"InvoiceWithReference", standardBody(t, f.org, einvoice.TypeStandard, noteChanges(einvoice.TypeStandard, standard)),
			[]finding{{"warning", "SBX-REF-02", "/billing_reference"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := decodeValidation(t, f.env.Do(apitest.Request{Method: http.MethodPost, Path: validatePath, Token: f.token, Body: tc.body}))
			var got []finding
			for _, r := range v.Results {
				path := ""
				if r.Path != nil {
					path = *r.Path
				}
				got = append(got, finding{r.Type, r.Code, path})
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("findings %v, want %v: %+v", got, tc.want, v.Results)
			}
			wantStatus := map[bool]string{true: "PASS", false: "WARNING"}[len(tc.want) == 0]
			for _, w := range tc.want {
				if w.typ == "error" {
					wantStatus = "ERROR"
				}
			}
			if v.Status != wantStatus || v.Valid != (wantStatus != "ERROR") || v.Input != "json" {
				t.Errorf("status %s valid %v input %s, want %s", v.Status, v.Valid, v.Input, wantStatus)
			}
		})
	}
	t.Run("UnknownAndOthersAreOneAnswer", func(t *testing.T) {
		message := func(original string) string {
			v := decodeValidation(t, f.env.Do(apitest.Request{Method: http.MethodPost, Path: validatePath, Token: f.token,
				Body: noteBody(einvoice.TypeStandardCreditNote, original, nil)}))
			return strings.ReplaceAll(v.Results[0].Message, original, "ID")
		}
		if a, b := message(unknown), message(othersInvoice); a != b {
			t.Errorf("another organization's invoice %q, an unknown one %q", b, a)
		}
	})

	if n, icv, hash := invoiceChainState(t, f.env, f.org); n != invoices || icv != lastICV || hash != lastHash {
		t.Errorf("validations issued documents: %d invoices, ICV %d", n, icv)
	}
	if n := f.env.Count("SELECT count(*) FROM usage_events WHERE organization_id = $1", f.org); n != usage {
		t.Errorf("validations were counted: %d usage events, want %d", n, usage)
	}
}
