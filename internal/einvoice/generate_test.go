package einvoice_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/asn1"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/beevik/etree"
	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"

	"github.com/provider/coreapi/internal/einvoice"
	"github.com/provider/coreapi/internal/einvoice/ubl21"
)

// sampleRequest is a valid request touching every part of the document: every tax
// category, discounts and charges, buyer details, supply references and notes.
func sampleRequest() einvoice.Request {
	return einvoice.Request{
		TaxCalculationMode: einvoice.ModeServiceCalculated,
		RequestedType:      einvoice.TypeSimplified,
		Seller: einvoice.Seller{
			LegalName:              "Nakhla Technology Company & Sons <Riyadh>",
			VATNumber:              "310123456700003",
			CommercialRegistration: ptr("1010123456"),
			Address: &einvoice.Address{
				StreetName: ptr("King Fahd Road"), BuildingNumber: ptr("2929"), AdditionalNumber: ptr("8228"),
				District: ptr("Al Olaya"), City: ptr("Riyadh"), PostalCode: ptr("12214"), Province: ptr("Riyadh Region"), CountryCode: "SA",
			},
			Branch:      ptr("Riyadh HQ"),
			Identifiers: []einvoice.Identifier{{Scheme: "CRN", Value: "1010123456"}},
		},
		Buyer: &einvoice.Buyer{
			LegalName: ptr("محمد العتيبي"), Address: ptr("Olaya Street, Riyadh"),
			Identifiers: []einvoice.Identifier{{Scheme: "NAT", Value: "1234567890"}}, BuyerType: "individual",
		},
		Supply: &einvoice.Supply{
			SupplyDate: "2025-03-01", EndDate: ptr("2025-03-02"), PurchaseOrderReference: ptr("PO-1"),
			ContractReference: ptr("C-7"), DeliveryReference: ptr("D-9"), PaymentTerms: ptr("Paid at the counter"), PaymentMethod: ptr("10"),
		},
		Lines: []einvoice.Line{
			{ID: "1", NameAr: ptr("قهوة عربية"), NameEn: "Arabic coffee", Description: ptr("Arabic coffee, 250 g"), Quantity: 2, UnitCode: "PCE",
				UnitPrice: 4500, Discounts: []einvoice.AllowanceCharge{{Amount: 500, Reason: ptr("Loyalty discount"), ReasonCode: ptr("95")}},
				TaxCategory: "S", TaxRate: 15},
			{ID: "2", NameEn: "Delivery", Quantity: 1, UnitCode: "C62", UnitPrice: 1000,
				Charges: []einvoice.AllowanceCharge{{Amount: 250, Reason: ptr("Packing"), ReasonCode: ptr("ABL")}}, TaxCategory: "S", TaxRate: 15},
			{ID: "3", NameEn: "Insulin pen", Quantity: 1.5, UnitCode: "EA", UnitPrice: 3333, TaxCategory: "Z", TaxExemptionReason: ptr("VATEX-SA-35")},
			{ID: "4", NameEn: "Account fee", Quantity: 1, UnitCode: "EA", UnitPrice: 700, TaxCategory: "E", TaxExemptionReason: ptr("VATEX-SA-29")},
			{ID: "5", NameEn: "Government fee", Quantity: 1, UnitCode: "EA", UnitPrice: 1500, TaxCategory: "O", TaxExemptionReason: ptr("VATEX-SA-OOS")},
		},
		Notes: map[string]string{"en": "Thank you for your visit.", "ar": "شكراً لزيارتكم"},
	}
}

// requestOf turns a simplified-invoice request into a valid request of kind: a standard
// document gets a VAT-registered buyer with a Saudi postal address, a note the invoice it
// corrects and its reason.
func requestOf(kind einvoice.Kind, req einvoice.Request) einvoice.Request {
	req.RequestedType = kind.Type
	if kind.Standard {
		req.Buyer = &einvoice.Buyer{
			LegalName: ptr("Al Noor Trading LLC"), VATNumber: ptr("300000000000003"), BuyerType: "business",
			PostalAddress: &einvoice.Address{StreetName: ptr("Prince Sultan Street"), BuildingNumber: ptr("1111"), District: ptr("Al Rawdah"),
				City: ptr("Jeddah"), PostalCode: ptr("23435"), CountryCode: "SA"},
		}
		if req.Supply == nil {
			req.Supply = &einvoice.Supply{SupplyDate: "2025-03-01"}
		}
	}
	if kind.Note() {
		req.BillingReference = &einvoice.BillingReference{Number: "SINV-000001", IssueDate: ptr("2025-02-27")}
		req.NoteReason = ptr("Returned goods")
	}
	return req
}

func generate(t testing.TB, req einvoice.Request) (*einvoice.Invoice, *einvoice.SandboxKey) {
	t.Helper()
	key, err := einvoice.NewSandboxKey("0193b5e2-4a1c-7d2e-8f30-5a6b7c8d9e01", certificatesIssuedAt)
	if err != nil {
		t.Fatal(err)
	}
	d, err := einvoice.Prepare(req)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := d.Generate(einvoice.Identity{
		Number: "SINV-000001", UUID: "6f0b8a3e-2c1d-4e5f-9a8b-7c6d5e4f3a2b", ICV: 1, PIH: einvoice.FirstPIH,
		IssuedAt: time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC),
	}, key)
	if err != nil {
		t.Fatal(err)
	}
	return inv, key
}

// xmllint runs Debian's libxml2 xmllint; the XML tests depend on real XML tooling, so its
// absence fails them rather than skipping.
func xmllint(t testing.TB, args ...string) []byte {
	t.Helper()
	path, err := exec.LookPath("xmllint")
	if err != nil {
		t.Fatalf("xmllint is required to validate invoices against the UBL 2.1 schema: install Debian's libxml2-utils (apt-get install libxml2-utils)")
	}
	var stderr bytes.Buffer
	cmd := exec.Command(path, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("xmllint %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// invoiceSchema writes the embedded UBL 2.1 schemas (package ubl21) into a temporary folder
// for xmllint and returns the path of the invoice schema there: the tests validate against
// what the server embeds, and read nothing outside the repository.
func invoiceSchema(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, ubl21.FS); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, filepath.FromSlash(ubl21.InvoiceSchema))
}

func writeTemp(t testing.TB, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGenerate_ValidUBL(t *testing.T) {
	t.Parallel()
	xsd := invoiceSchema(t)
	minimal := sampleRequest()
	minimal.Buyer, minimal.Supply, minimal.Notes = nil, nil, nil
	minimal.Lines = minimal.Lines[:1]
	for _, kind := range einvoice.Kinds {
		for name, req := range map[string]einvoice.Request{"Full": sampleRequest(), "Minimal": minimal} {
			name = kind.Type + "-" + name
			inv, _ := generate(t, requestOf(kind, req))
			if !inv.Valid() || (name == einvoice.TypeSimplified+"-Full" && len(inv.Issues) > 0) {
				t.Errorf("%s: the sample has issues: %+v", name, inv.Issues)
			}
			if inv.Type != kind.Type {
				t.Errorf("%s: type %s", name, inv.Type)
			}
			xmllint(t, "--noout", "--schema", xsd, writeTemp(t, name+".xml", []byte(inv.XML)))
		}
	}
}

// TestGenerate_Kinds checks what each kind writes: its type code and name, and on a note the
// billing reference and the reason in the payment means.
func TestGenerate_Kinds(t *testing.T) {
	t.Parallel()
	for _, kind := range einvoice.Kinds {
		inv, _ := generate(t, requestOf(kind, sampleRequest()))
		doc := etree.NewDocument()
		if err := doc.ReadFromString(inv.XML); err != nil {
			t.Fatal(err)
		}
		root := doc.Root()
		tc := root.FindElement("cbc:InvoiceTypeCode")
		if tc.Text() != kind.Code || tc.SelectAttrValue("name", "") != kind.Name {
			t.Errorf("%s: InvoiceTypeCode %s name %s", kind.Type, tc.Text(), tc.SelectAttrValue("name", ""))
		}
		ref := root.FindElement("cac:BillingReference/cac:InvoiceDocumentReference/cbc:ID")
		reason := root.FindElement("cac:PaymentMeans/cbc:InstructionNote")
		if kind.Note() != (ref != nil && ref.Text() == "SINV-000001" && reason != nil && reason.Text() == "Returned goods") {
			t.Errorf("%s: billing reference %v, reason %v", kind.Type, ref, reason)
		}
		if kind.Standard != (root.FindElement("cac:AccountingCustomerParty/cac:Party/cac:PostalAddress/cbc:CitySubdivisionName") != nil) {
			t.Errorf("%s: the buyer's structured address is written only when given", kind.Type)
		}
	}
}

// TestGenerate_NoteWithoutPaymentMethod checks that a note's reason still has its payment
// means, with the code of an undefined instrument (BR-49 wants one).
func TestGenerate_NoteWithoutPaymentMethod(t *testing.T) {
	t.Parallel()
	req := requestOf(einvoice.Kinds[1], sampleRequest())
	req.Supply = nil
	inv, _ := generate(t, req)
	doc := etree.NewDocument()
	if err := doc.ReadFromString(inv.XML); err != nil {
		t.Fatal(err)
	}
	if got := doc.FindElement("//cac:PaymentMeans/cbc:PaymentMeansCode"); got == nil || got.Text() != "1" {
		t.Errorf("payment means code %v, want 1", got)
	}
}

func TestGenerate_Document(t *testing.T) {
	t.Parallel()
	inv, _ := generate(t, sampleRequest())
	doc := etree.NewDocument()
	if err := doc.ReadFromString(inv.XML); err != nil {
		t.Fatal(err)
	}
	root := doc.Root()
	text := func(path string) string {
		t.Helper()
		e := root.FindElement(path)
		if e == nil {
			t.Fatalf("no %s in the invoice", path)
		}
		return e.Text()
	}
	for path, want := range map[string]string{
		"cbc:ProfileID":            "reporting:1.0",
		"cbc:InvoiceTypeCode":      "388",
		"cbc:ID":                   "SINV-000001",
		"cbc:IssueDate":            "2025-03-01",
		"cbc:IssueTime":            "09:30:00Z",
		"cbc:DocumentCurrencyCode": "SAR",
		"cbc:TaxCurrencyCode":      "SAR",
		"cac:AdditionalDocumentReference[cbc:ID='ICV']/cbc:UUID":                                        "1",
		"cac:AdditionalDocumentReference[cbc:ID='PIH']/cac:Attachment/cbc:EmbeddedDocumentBinaryObject": einvoice.FirstPIH,
		"cac:AdditionalDocumentReference[cbc:ID='QR']/cac:Attachment/cbc:EmbeddedDocumentBinaryObject":  inv.QR,
		"cac:LegalMonetaryTotal/cbc:LineExtensionAmount":                                                "169.50", // 85 + 12.50 + 50 (1.5 x 33.33 = 49.995) + 7 + 15
		"cac:LegalMonetaryTotal/cbc:TaxExclusiveAmount":                                                 "169.50",
		"cac:LegalMonetaryTotal/cbc:TaxInclusiveAmount":                                                 "184.13", // VAT 97.50 x 15 % = 14.625 -> 14.63
		"cac:LegalMonetaryTotal/cbc:PayableAmount":                                                      "184.13",
		"cac:InvoiceLine[1]/cac:Item/cbc:Name":                                                          "قهوة عربية | Arabic coffee",
		"cac:InvoiceLine[3]/cbc:InvoicedQuantity":                                                       "1.5",
		"cac:InvoiceLine[1]/cac:TaxTotal/cbc:RoundingAmount":                                            "97.75",
		"cac:AccountingSupplierParty/cac:Party/cac:PartyTaxScheme/cbc:CompanyID":                        "310123456700003",
	} {
		if got := text(path); got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	if got := root.FindElement("cbc:InvoiceTypeCode").SelectAttrValue("name", ""); got != "0200000" {
		t.Errorf("InvoiceTypeCode name = %q", got)
	}
	if n := len(root.SelectElements("cac:TaxTotal")); n != 2 {
		t.Errorf("%d TaxTotal elements, want 2", n)
	}
	if n := len(root.FindElements("cac:TaxTotal[2]/cac:TaxSubtotal")); n != 4 {
		t.Errorf("%d VAT breakdowns, want one per category (4)", n)
	}
	if got := root.FindElement("cac:AccountingSupplierParty/cac:Party/cac:PartyIdentification/cbc:ID"); got == nil ||
		len(root.FindElements("cac:AccountingSupplierParty/cac:Party/cac:PartyIdentification")) != 1 {
		t.Errorf("the seller needs exactly one identification")
	}
	if root.FindElement("cac:InvoiceLine[5]/cac:Item/cac:ClassifiedTaxCategory/cbc:Percent") != nil {
		t.Error("category O must carry no rate")
	}
	if got := text("cac:TaxTotal[2]/cac:TaxSubtotal[2]/cac:TaxCategory/cbc:TaxExemptionReasonCode"); got != "VATEX-SA-35" {
		t.Errorf("zero-rated breakdown exemption code = %q", got)
	}
	// Every mapped xpath exists in the document.
	for _, m := range inv.Mapping {
		p := strings.TrimPrefix(m.XPath, "/Invoice/")
		p, _, _ = strings.Cut(p, "/@")
		if root.FindElement(p) == nil {
			t.Errorf("mapping %s -> %s names no element", m.Field, m.XPath)
		}
	}
	if len(inv.Mapping) < 40 {
		t.Errorf("the mapping report has %d entries", len(inv.Mapping))
	}
}

// TestGenerate_Hash recomputes the invoice hash with libxml2's C14N 1.1 instead of the
// package's canonicalizer.
func TestGenerate_Hash(t *testing.T) {
	t.Parallel()
	inv, _ := generate(t, sampleRequest())
	doc := etree.NewDocument()
	if err := doc.ReadFromString(inv.XML); err != nil {
		t.Fatal(err)
	}
	root := doc.Root()
	for _, path := range []string{"ext:UBLExtensions", "cac:Signature", "cac:AdditionalDocumentReference[cbc:ID='QR']"} {
		e := root.FindElement(path)
		if e == nil {
			t.Fatalf("the stamped invoice has no %s", path)
		}
		root.RemoveChild(e)
	}
	stripped, err := doc.WriteToBytes()
	if err != nil {
		t.Fatal(err)
	}
	canonical := xmllint(t, "--c14n11", writeTemp(t, "stripped.xml", stripped))
	sum := sha256.Sum256(canonical)
	want := base64.StdEncoding.EncodeToString(sum[:])
	if inv.Hash != want {
		t.Fatalf("invoice hash = %s, libxml2 C14N 1.1 gives %s", inv.Hash, want)
	}
	full := etree.NewDocument()
	_ = full.ReadFromString(inv.XML)
	if got := full.FindElement("//ds:DigestValue").Text(); got != want {
		t.Errorf("ds:DigestValue = %s, want the invoice hash", got)
	}
}

func TestGenerate_QR(t *testing.T) {
	t.Parallel()
	inv, key := generate(t, sampleRequest())
	tags, err := einvoice.DecodeQR(inv.QR)
	if err != nil {
		t.Fatal(err)
	}
	for tag, want := range map[int]string{
		1: "Nakhla Technology Company & Sons <Riyadh>",
		2: "310123456700003",
		3: "2025-03-01T09:30:00Z",
		4: "184.13",
		5: "14.63",
		6: inv.Hash,
	} {
		if got := string(tags[tag]); got != want {
			t.Errorf("tag %d = %q, want %q", tag, got, want)
		}
	}
	if len(tags) != 9 {
		t.Errorf("%d tags, want 9", len(tags))
	}
	// Tag 7 is an ECDSA signature of the invoice hash by the key in tag 8.
	var spki struct {
		Algorithm struct {
			Algorithm  asn1.ObjectIdentifier
			Parameters asn1.ObjectIdentifier
		}
		PublicKey asn1.BitString
	}
	if _, err := asn1.Unmarshal(tags[8], &spki); err != nil {
		t.Fatalf("tag 8 is not a SubjectPublicKeyInfo: %v", err)
	}
	if !spki.Algorithm.Parameters.Equal(asn1.ObjectIdentifier{1, 3, 132, 0, 10}) {
		t.Errorf("public key curve = %v, want secp256k1", spki.Algorithm.Parameters)
	}
	pub, err := secp256k1.ParsePubKey(spki.PublicKey.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	sigDER, err := base64.StdEncoding.DecodeString(string(tags[7]))
	if err != nil {
		t.Fatal(err)
	}
	sig, err := ecdsa.ParseDERSignature(sigDER)
	if err != nil {
		t.Fatal(err)
	}
	digest, _ := base64.StdEncoding.DecodeString(inv.Hash)
	prehashed := sha256.Sum256(digest)
	if !sig.Verify(prehashed[:], pub) {
		t.Error("tag 7 does not verify against the invoice hash and the tag 8 key")
	}
	// Tag 9 is the signature of the self-signed sandbox certificate, made by the same key.
	var cert struct {
		TBS    asn1.RawValue
		SigAlg asn1.RawValue
		Sig    asn1.BitString
	}
	if _, err := asn1.Unmarshal(key.Certificate, &cert); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(cert.Sig.Bytes, tags[9]) {
		t.Error("tag 9 is not the certificate's signature")
	}
	certSig, err := ecdsa.ParseDERSignature(tags[9])
	if err != nil {
		t.Fatal(err)
	}
	tbsDigest := sha256.Sum256(cert.TBS.FullBytes)
	if !certSig.Verify(tbsDigest[:], pub) {
		t.Error("the certificate is not self-signed by the stamping key")
	}
	if !bytes.Contains(cert.TBS.FullBytes, []byte(einvoice.SandboxTemplate)) || !bytes.Contains(cert.TBS.FullBytes, []byte(einvoice.SandboxUnit)) {
		t.Error("the certificate is not marked as sandbox")
	}
}

func TestGenerate_QRTruncatesLongValues(t *testing.T) {
	t.Parallel()
	req := sampleRequest()
	req.Seller.LegalName = strings.Repeat("نخلة ", 80) // 800 bytes
	inv, _ := generate(t, req)
	tags, err := einvoice.DecodeQR(inv.QR)
	if err != nil {
		t.Fatal(err)
	}
	if len(tags[1]) > 255 || !strings.HasPrefix(req.Seller.LegalName, string(tags[1])) {
		t.Errorf("tag 1 = %d bytes, not a prefix of whole characters", len(tags[1]))
	}
	if !hasIssue(inv.Issues, "SBX-QR-01") {
		t.Error("no SBX-QR-01 warning")
	}
}

func TestFirstPIH(t *testing.T) {
	t.Parallel()
	const want = "NWZlY2ViNjZmZmM4NmYzOGQ5NTI3ODZjNmQ2OTZjNzljMmRiYzIzOWRkNGU5MWI0NjcyOWQ3M2EyN2ZiNTdlOQ=="
	if einvoice.FirstPIH != want {
		t.Errorf("FirstPIH = %s, want %s", einvoice.FirstPIH, want)
	}
}

func hasIssue(issues []einvoice.Issue, code string) bool {
	for _, i := range issues {
		if i.Code == code {
			return true
		}
	}
	return false
}

// TestGenerate_RepresentativeValidUBL validates every invoice the official rules are run over
// (representativeCases) against the UBL 2.1 schema.
func TestGenerate_RepresentativeValidUBL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	names := writeRepresentativeInvoices(t, dir)
	args := []string{"--noout", "--schema", invoiceSchema(t)}
	for _, n := range names {
		args = append(args, filepath.Join(dir, n))
	}
	xmllint(t, args...)
}

// TestGenerate_OneSellerIdentification checks that the invoice carries exactly one seller
// identification, the first in BR-KSA-08's order (CRN, MOM, MLS, 700, SAG, OTH), mapped from
// the field that gave it: the official rules cannot evaluate an invoice with several.
func TestGenerate_OneSellerIdentification(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		crn         *string
		ids         []einvoice.Identifier
		scheme, val string
		field       string
	}{
		{"CRNFirst", ptr("1010"), []einvoice.Identifier{{Scheme: "MOM", Value: "M1"}}, "CRN", "1010", "/seller/commercial_registration"},
		{"RankOverOrder", nil, []einvoice.Identifier{{Scheme: "OTH", Value: "O1"}, {Scheme: "700", Value: "7001"}, {Scheme: "MOM", Value: "M1"}},
			"MOM", "M1", "/seller/additional_identifiers/2"},
		{"FirstOfAScheme", nil, []einvoice.Identifier{{Scheme: "SAG", Value: "S1"}, {Scheme: "SAG", Value: "S2"}}, "SAG", "S1", "/seller/additional_identifiers/0"},
		{"Single", nil, []einvoice.Identifier{{Scheme: "OTH", Value: "O1"}}, "OTH", "O1", "/seller/additional_identifiers/0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			req := sampleRequest()
			req.Seller.CommercialRegistration, req.Seller.Identifiers = c.crn, c.ids
			inv, _ := generate(t, req)
			doc := etree.NewDocument()
			if err := doc.ReadFromString(inv.XML); err != nil {
				t.Fatal(err)
			}
			ids := doc.Root().FindElements("cac:AccountingSupplierParty/cac:Party/cac:PartyIdentification/cbc:ID")
			if len(ids) != 1 || ids[0].Text() != c.val || ids[0].SelectAttrValue("schemeID", "") != c.scheme {
				t.Fatalf("seller identifications: %d, want one %s %s", len(ids), c.scheme, c.val)
			}
			var fields []string
			for _, m := range inv.Mapping {
				if strings.HasSuffix(m.XPath, "cac:AccountingSupplierParty/cac:Party/cac:PartyIdentification/cbc:ID") {
					fields = append(fields, m.Field)
				}
			}
			if len(fields) != 1 || fields[0] != c.field {
				t.Errorf("mapped from %v, want %s", fields, c.field)
			}
			several := len(c.ids) > 1 || (c.crn != nil && len(c.ids) > 0)
			if hasIssue(inv.Issues, "BR-KSA-08") != several || !inv.Valid() {
				t.Errorf("issues %+v", inv.Issues)
			}
		})
	}
}

func TestDraft_Valid(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		change func(*einvoice.Request)
		want   bool
	}{
		"Sample":   {func(*einvoice.Request) {}, true},
		"Warnings": {func(r *einvoice.Request) { r.Buyer = nil }, true}, // SBX-NOTE-01
		"DiscountBeyondLine": {func(r *einvoice.Request) {
			r.Lines[0].Discounts = []einvoice.AllowanceCharge{{Amount: 9001, Reason: ptr("Too generous")}}
		}, false},
		"SellerVATNumber": {func(r *einvoice.Request) { r.Seller.VATNumber = "123" }, false},
	} {
		req := sampleRequest()
		tc.change(&req)
		d, err := einvoice.Prepare(req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d.Valid() != tc.want {
			t.Errorf("%s: Valid() = %v, want %v (issues %+v)", name, d.Valid(), tc.want, d.Issues)
		}
	}
}

// TestInvoiceHash_CanonicalFormAsLibxml2 compares the invoice hash with libxml2's C14N 1.1 on
// what generated invoices never contain but other documents may: processing instructions, CDATA, characters to escape in text and attributes, attributes out of order
// and in namespaces, and namespace declarations repeated or changed below the root. (No
// comments: xmllint's --c14n11 keeps them, the signature's transform drops them.)
func TestInvoiceHash_CanonicalFormAsLibxml2(t *testing.T) {
	t.Parallel()
	const doc = `<?xml version="1.0" encoding="UTF-8"?>
<Invoice xmlns:cbc="urn:cbc" xmlns="urn:inv" xmlns:cac="urn:cac" z="1" a="2" xmlns:b="urn:b" b:x="3" cbc:y="4">
  <cbc:ID>A &amp; B &lt; C &gt; D "q" 'a'&#13;</cbc:ID>
  <cac:Party xmlns:cac="urn:cac" xmlns:cbc="urn:other"><cbc:Name t="tab&#9;nl&#10;cr&#13;amp&amp;lt&lt;gt>q&quot;"/></cac:Party>
  <?pi some data?>
  <cbc:Note><![CDATA[<raw> & text]]></cbc:Note>
  <Inner xmlns=""><Deeper xmlns="urn:inv"/></Inner>
  <cac:Signature><cbc:ID>left out</cbc:ID></cac:Signature>
</Invoice>`
	tree := etree.NewDocument()
	if err := tree.ReadFromString(doc); err != nil {
		t.Fatal(err)
	}
	_, got, err := einvoice.InvoiceHash(tree)
	if err != nil {
		t.Fatal(err)
	}
	stripped := strings.Replace(doc, "<cac:Signature><cbc:ID>left out</cbc:ID></cac:Signature>", "", 1)
	sum := sha256.Sum256(xmllint(t, "--c14n11", writeTemp(t, "doc.xml", []byte(stripped))))
	if want := base64.StdEncoding.EncodeToString(sum[:]); got != want {
		t.Errorf("hash %s, libxml2's C14N 1.1 gives %s", got, want)
	}
}
