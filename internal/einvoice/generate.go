package einvoice

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"regexp"
	"strings"
	"time"

	"github.com/beevik/etree"
)

// Draft is a checked and computed request: everything about an invoice that does not depend
// on its place in the chain.
type Draft struct {
	Request       Request
	Totals        Totals
	Issues        []Issue
	Discrepancies []Discrepancy
}

// Prepare computes the amounts of req and checks its business rules. The only error is
// ErrAmountOutOfRange; rule violations are issues of the draft.
func Prepare(req Request) (*Draft, error) {
	totals, err := Compute(req.Lines)
	if err != nil {
		return nil, err
	}
	d := &Draft{Request: req, Totals: totals, Issues: Validate(req, totals), Discrepancies: Discrepancies(req, totals)}
	if len(d.Discrepancies) > 0 {
		d.Issues = append(d.Issues, Issue{Code: "SBX-CALC-01", Severity: SeverityWarning, Path: "/tax_calculation_mode",
			Message: "Client-supplied amounts differ from the computed ones (see tax_discrepancies); the invoice uses the computed amounts."})
	}
	return d, nil
}

// Generate renders the invoice at its place in the chain and stamps it with key: the XML
// with its signature extension, QR reference and signature element, the invoice hash and
// the QR payload.
func (d *Draft) Generate(id Identity, key *SandboxKey) (*Invoice, error) {
	doc, mapping := render(d.Request, id, d.Totals)
	inv := doc.Root()

	// The stamp's parts go in as placeholders first, so the document is laid out (indented)
	// once and the hash covers exactly the whitespace the final document has.
	ext, slots := signatureExtension()
	inv.InsertChildAt(0, ext)
	qrRef := etree.NewElement("cac:AdditionalDocumentReference")
	el(qrRef, "cbc:ID", "QR")
	qrValue := el(el(qrRef, "cac:Attachment"), "cbc:EmbeddedDocumentBinaryObject")
	qrValue.CreateAttr("mimeCode", "text/plain")
	sig := etree.NewElement("cac:Signature")
	el(sig, "cbc:ID", signatureID)
	el(sig, "cbc:SignatureMethod", signatureMethod)
	at := inv.SelectElement("cac:AccountingSupplierParty").Index()
	inv.InsertChildAt(at, qrRef)
	inv.InsertChildAt(at+1, sig)
	doc.Indent(4)

	digest, hash, err := InvoiceHash(doc)
	if err != nil {
		return nil, err
	}
	signature, err := sign(slots, key, id.IssuedAt, digest, hash)
	if err != nil {
		return nil, err
	}
	parts, err := key.stampingParts()
	if err != nil {
		return nil, err
	}
	qr, truncated := QRFields{
		SellerName:           d.Request.Seller.LegalName,
		VATNumber:            d.Request.Seller.VATNumber,
		Timestamp:            id.IssueDate() + "T" + id.IssueTime() + "Z",
		TotalWithVAT:         FormatAmount(d.Totals.TaxInclusive),
		VATTotal:             FormatAmount(d.Totals.VAT),
		InvoiceHash:          hash,
		Signature:            signature,
		PublicKey:            parts.publicKeyInfo,
		CertificateSignature: parts.certificateSignature,
	}.Encode()
	qrValue.SetText(qr)

	issues := append([]Issue{}, d.Issues...)
	if truncated {
		issues = append(issues, Issue{Code: "SBX-QR-01", Severity: SeverityWarning, Path: "/seller/legal_name",
			Message: "A QR value is longer than 255 bytes and was shortened in the QR payload."})
	}
	var xml strings.Builder
	xml.Grow(documentSizeHint(len(d.Request.Lines)))
	if _, err := doc.WriteTo(&xml); err != nil {
		return nil, err
	}
	return &Invoice{
		Type:          KindOfRequest(d.Request).Type,
		Totals:        d.Totals,
		Issues:        issues,
		Discrepancies: d.Discrepancies,
		XML:           xml.String(),
		Mapping:       mapping,
		Hash:          hash,
		QR:            qr,
	}, nil
}

// signatureExtension is the ext:UBLExtensions element holding the sandbox stamp as an
// enveloped XML signature: ECDSA (secp256k1) with SHA-256 over the invoice hash, the
// references excluding the parts the hash leaves out, and the sandbox certificate. Digest,
// signature and certificate are filled in once the hash is known, into its slots.
func signatureExtension() (*etree.Element, *signatureSlots) {
	var slots signatureSlots
	ext := etree.NewElement("ext:UBLExtensions")
	u := el(ext, "ext:UBLExtension")
	el(u, "ext:ExtensionURI", signatureMethod)
	sigs := el(el(u, "ext:ExtensionContent"), "sig:UBLDocumentSignatures")
	sigs.CreateAttr("xmlns:sig", nsSIG)
	sigs.CreateAttr("xmlns:sac", nsSAC)
	sigs.CreateAttr("xmlns:sbc", nsSBC)
	info := el(sigs, "sac:SignatureInformation")
	el(info, "cbc:ID", "urn:oasis:names:specification:ubl:signature:1")
	el(info, "sbc:ReferencedSignatureID", signatureID)
	s := el(info, "ds:Signature")
	s.CreateAttr("xmlns:ds", nsDS)
	s.CreateAttr("Id", "signature")
	si := el(s, "ds:SignedInfo")
	el(si, "ds:CanonicalizationMethod").CreateAttr("Algorithm", "http://www.w3.org/2006/12/xml-c14n11")
	el(si, "ds:SignatureMethod").CreateAttr("Algorithm", "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256")
	ref := el(si, "ds:Reference")
	ref.CreateAttr("Id", "invoiceSignedData")
	ref.CreateAttr("URI", "")
	transforms := el(ref, "ds:Transforms")
	for _, xpath := range []string{
		"not(//ancestor-or-self::ext:UBLExtensions)",
		"not(//ancestor-or-self::cac:Signature)",
		"not(//ancestor-or-self::cac:AdditionalDocumentReference[cbc:ID='QR'])",
	} {
		t := el(transforms, "ds:Transform")
		t.CreateAttr("Algorithm", "http://www.w3.org/TR/1999/REC-xpath-19991116")
		el(t, "ds:XPath", xpath)
	}
	el(transforms, "ds:Transform").CreateAttr("Algorithm", "http://www.w3.org/2006/12/xml-c14n11")
	el(ref, "ds:DigestMethod").CreateAttr("Algorithm", digestSHA256)
	slots.invoiceDigest = el(ref, "ds:DigestValue")
	props := el(si, "ds:Reference")
	props.CreateAttr("Type", "http://www.w3.org/2000/09/xmldsig#SignatureProperties")
	props.CreateAttr("URI", "#xadesSignedProperties")
	el(props, "ds:DigestMethod").CreateAttr("Algorithm", digestSHA256)
	slots.propertiesDigest = el(props, "ds:DigestValue")
	slots.signatureValue = el(s, "ds:SignatureValue")
	slots.certificate = el(el(el(s, "ds:KeyInfo"), "ds:X509Data"), "ds:X509Certificate")
	qualifying := el(el(s, "ds:Object"), "xades:QualifyingProperties")
	qualifying.CreateAttr("xmlns:xades", nsXAdES)
	qualifying.CreateAttr("Target", "signature")
	signed := el(qualifying, "xades:SignedProperties")
	signed.CreateAttr("Id", "xadesSignedProperties")
	slots.signedProperties = signed
	ssp := el(signed, "xades:SignedSignatureProperties")
	slots.signingTime = el(ssp, "xades:SigningTime")
	cert := el(el(ssp, "xades:SigningCertificate"), "xades:Cert")
	certDigest := el(cert, "xades:CertDigest")
	el(certDigest, "ds:DigestMethod").CreateAttr("Algorithm", digestSHA256)
	slots.certificateDigest = el(certDigest, "ds:DigestValue")
	issuerSerial := el(cert, "xades:IssuerSerial")
	slots.issuerName = el(issuerSerial, "ds:X509IssuerName")
	slots.serialNumber = el(issuerSerial, "ds:X509SerialNumber")
	return ext, &slots
}

// signatureSlots are the elements of a signature extension a stamp fills in.
type signatureSlots struct {
	invoiceDigest, propertiesDigest, signatureValue, certificate               *etree.Element
	signedProperties, signingTime, certificateDigest, issuerName, serialNumber *etree.Element
}

// findSignatureSlots finds the slots of a stamped document's signature extension (as
// signatureExtension lays it out); ok is false when one is missing.
func findSignatureSlots(ext *etree.Element) (slots *signatureSlots, ok bool) {
	slots = &signatureSlots{
		invoiceDigest:     ext.FindElement(".//ds:Reference[@Id='invoiceSignedData']/ds:DigestValue"),
		propertiesDigest:  ext.FindElement(".//ds:Reference[@URI='#xadesSignedProperties']/ds:DigestValue"),
		signatureValue:    ext.FindElement(".//ds:SignatureValue"),
		certificate:       ext.FindElement(".//ds:X509Certificate"),
		signedProperties:  ext.FindElement(".//xades:SignedProperties"),
		signingTime:       ext.FindElement(".//xades:SigningTime"),
		certificateDigest: ext.FindElement(".//xades:CertDigest/ds:DigestValue"),
		issuerName:        ext.FindElement(".//ds:X509IssuerName"),
		serialNumber:      ext.FindElement(".//ds:X509SerialNumber"),
	}
	for _, e := range []*etree.Element{slots.invoiceDigest, slots.propertiesDigest, slots.signatureValue, slots.certificate,
		slots.signedProperties, slots.signingTime, slots.certificateDigest, slots.issuerName, slots.serialNumber} {
		if e == nil {
			return nil, false
		}
	}
	return slots, true
}

const (
	nsXAdES      = "http://uri.etsi.org/01903/v1.3.2#"
	digestSHA256 = "http://www.w3.org/2001/04/xmlenc#sha256"
)

// sign completes the XAdES signature in slots (as signatureExtension lays it out) with key
// for the invoice hash digest (hash, its base64): the signed properties signed at signedAt and
// their digest, the invoice reference's digest, the signature value and the certificate. It
// returns the signature value (base64), QR tag 7.
func sign(slots *signatureSlots, key *SandboxKey, signedAt time.Time, digest []byte, hash string) (string, error) {
	signedProps, err := fillSignedProperties(slots, key, signedAt)
	if err != nil {
		return "", err
	}
	parts, err := key.stampingParts()
	if err != nil {
		return "", err
	}
	// As the authority's SDK signs: SHA-256 with ECDSA over the invoice hash's bytes.
	prehashed := sha256.Sum256(digest)
	signature := base64.StdEncoding.EncodeToString(key.Sign(prehashed[:]))
	slots.invoiceDigest.SetText(hash)
	slots.propertiesDigest.SetText(signedProps)
	slots.signatureValue.SetText(signature)
	slots.certificate.SetText(parts.certificateText)
	return signature, nil
}

// fillSignedProperties writes the XAdES signed properties (signing time, the certificate's
// digest, issuer and serial number) and returns their digest for the SignedInfo reference.
// Both digests are computed as the authority's SDK computes them: base64 of the hexadecimal
// SHA-256, the certificate's over its base64 text, the properties' over the element as the
// document lays it out, each namespace declared where it is first used.
func fillSignedProperties(slots *signatureSlots, key *SandboxKey, signedAt time.Time) (string, error) {
	parts, err := key.stampingParts()
	if err != nil {
		return "", err
	}
	slots.signingTime.SetText(signedAt.UTC().Format(signingTimeLayout))
	slots.certificateDigest.SetText(parts.certificateDigest)
	slots.issuerName.SetText(parts.issuer)
	slots.serialNumber.SetText(parts.serial)
	return hexDigest([]byte(SignedPropertiesText(slots.signedProperties))), nil
}

// signingTimeLayout is how the XAdES SigningTime is written: UTC, without a zone, as the
// authority's SDK writes it.
const signingTimeLayout = "2006-01-02T15:04:05"

// SignedPropertiesText is what the signed properties' digest covers: the element serialized
// on its own, xmlns:xades on it and xmlns:ds on each ds: element (where a serializer of the
// detached element declares them), empty elements closed as the document closes them.
func SignedPropertiesText(signed *etree.Element) string {
	var b strings.Builder
	signed.WriteTo(&b, &etree.WriteSettings{})
	text := strings.Replace(b.String(), "<xades:SignedProperties ", `<xades:SignedProperties xmlns:xades="`+nsXAdES+`" `, 1)
	return dsElement.ReplaceAllString(text, `$0 xmlns:ds="`+nsDS+`"`)
}

var dsElement = regexp.MustCompile(`<ds:[A-Za-z0-9]+`)

// hexDigest is base64(hex(SHA-256(b))), the authority's encoding of a certificate's and the
// signed properties' digests.
func hexDigest(b []byte) string {
	sum := sha256.Sum256(b)
	return base64.StdEncoding.EncodeToString([]byte(hex.EncodeToString(sum[:])))
}

// Valid reports whether the draft has no issue of severity error: only a valid draft may be
// issued (given a counter value and a place in the chain).
func (d *Draft) Valid() bool { return !hasErrors(d.Issues) }

// documentSizeHint is about the size of a stamped document of n lines (with the XAdES
// signature, the test invoice is 12.3 kB and 1.4 kB a line: 13.7 kB with one line, 19.4 kB with
// five): the document is written once into a buffer this large, instead of into one doubled
// and then copied.
func documentSizeHint(n int) int { return 13<<10 + 1400*n }
