package einvoice

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"sync"
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
//
// The invoice is written once, with no tree: its text with holes for the stamp's parts and,
// beside it, the canonical form the invoice hash covers (xmlWriter). The stamp, which signs
// that hash, is written next, and the document is joined once into its string.
func (d *Draft) Generate(id Identity, key *SandboxKey) (*Invoice, error) {
	parts, err := key.stampingParts()
	if err != nil {
		return nil, err
	}
	bufs := renderBuffers.Get().(*documentBuffers)
	defer bufs.release()
	w := &xmlWriter{doc: &bufs.body, c14n: &bufs.canonical, open: bufs.open[:0], holes: bufs.holes[:0]}
	mapping := render(w, d.Request, id, d.Totals)
	bufs.open, bufs.holes = w.open, w.holes

	sum := sha256.Sum256(bufs.canonical.Bytes())
	hash := base64.StdEncoding.EncodeToString(sum[:])
	x := xadesValues{invoiceDigest: hash, signingTime: id.IssuedAt.UTC().Format(signingTimeLayout), parts: parts}
	x.propertiesDigest = x.signedPropertiesDigest(&bufs.stamp)
	// As the authority's SDK signs: SHA-256 with ECDSA over the invoice hash's bytes.
	prehashed := sha256.Sum256(sum[:])
	x.signatureValue = base64.StdEncoding.EncodeToString(key.Sign(prehashed[:]))
	// The QR carries the seller name as the document does: with U+FFFD where XML could not
	// carry a character, else the validator finds the two differ.
	sellerName, _ := xmlText(d.Request.Seller.LegalName)
	qr, truncated := QRFields{
		SellerName:           sellerName,
		VATNumber:            d.Request.Seller.VATNumber,
		Timestamp:            id.IssueDate() + "T" + id.IssueTime() + "Z",
		TotalWithVAT:         FormatAmount(d.Totals.TaxInclusive),
		VATTotal:             FormatAmount(d.Totals.VAT),
		InvoiceHash:          hash,
		Signature:            x.signatureValue,
		PublicKey:            parts.publicKeyInfo,
		CertificateSignature: parts.certificateSignature,
	}.Encode()

	issues := append([]Issue{}, d.Issues...)
	if w.replaced > 0 {
		issues = append(issues, Issue{Code: "SBX-TEXT-01", Severity: SeverityWarning, Path: "",
			Message: fmt.Sprintf("%d characters that XML cannot carry (control characters, invalid UTF-8) were written as U+FFFD.", w.replaced)})
	}
	if truncated {
		issues = append(issues, Issue{Code: "SBX-QR-01", Severity: SeverityWarning, Path: "/seller/legal_name",
			Message: "A QR value is longer than 255 bytes and was shortened in the QR payload."})
	}
	return &Invoice{
		Type:          KindOfRequest(d.Request).Type,
		Totals:        d.Totals,
		Issues:        issues,
		Discrepancies: d.Discrepancies,
		XML:           bufs.join(w.holes, x, qr),
		Mapping:       mapping,
		Hash:          hash,
		QR:            qr,
	}, nil
}

// documentBuffers are what Generate writes a document into, kept between documents.
type documentBuffers struct {
	body, canonical, stamp bytes.Buffer
	open                   []string
	holes                  []int
	stampParts             [3]int // where the stamp's parts end in stamp
}

var renderBuffers = sync.Pool{New: func() any { return new(documentBuffers) }}

// release returns the buffers to the pool, unless one grew beyond what documents need (a
// thousand lines), which the pool would keep alive.
func (b *documentBuffers) release() {
	if b.body.Cap() > 2<<20 || b.canonical.Cap() > 2<<20 {
		return
	}
	b.body.Reset()
	b.canonical.Reset()
	b.stamp.Reset()
	renderBuffers.Put(b)
}

// join writes the stamp's parts (the signature extension, the QR reference and the
// cac:Signature) and returns the document with them in its holes.
func (b *documentBuffers) join(holes []int, x xadesValues, qr string) string {
	b.stamp.Reset()
	w := &xmlWriter{doc: &b.stamp, depth: 1, open: b.open[:0]}
	writeSignatureExtension(w, x)
	b.stampParts[0] = b.stamp.Len()
	writeQRReference(w, qr)
	b.stampParts[1] = b.stamp.Len()
	w.start("cac:Signature")
	w.leaf("cbc:ID", signatureID)
	w.leaf("cbc:SignatureMethod", signatureMethod)
	w.end()
	b.stampParts[2] = b.stamp.Len()

	body, stamp := b.body.Bytes(), b.stamp.Bytes()
	var doc strings.Builder
	doc.Grow(len(body) + len(stamp))
	from, part := 0, 0
	for i, at := range holes {
		doc.Write(body[from:at])
		doc.Write(stamp[part:b.stampParts[i]])
		from, part = at, b.stampParts[i]
	}
	doc.Write(body[from:])
	return doc.String()
}

// writeQRReference writes the cac:AdditionalDocumentReference carrying the QR payload.
func writeQRReference(w *xmlWriter, qr string) {
	w.start("cac:AdditionalDocumentReference")
	w.leaf("cbc:ID", "QR")
	w.start("cac:Attachment")
	w.leaf("cbc:EmbeddedDocumentBinaryObject", qr, "mimeCode", "text/plain")
	w.end()
	w.end()
}

// xadesValues are what a stamp's XAdES signature says; empty values leave their elements
// empty.
type xadesValues struct {
	invoiceDigest, propertiesDigest, signatureValue string
	signingTime                                     string
	parts                                           *stampingParts // nil: no certificate yet
}

// signedPropertiesDigest writes the signed properties on their own into scratch (as
// SignedPropertiesText has them) and returns their digest for the SignedInfo reference.
func (x xadesValues) signedPropertiesDigest(scratch *bytes.Buffer) string {
	scratch.Reset()
	x.writeSignedProperties(&xmlWriter{doc: scratch, depth: signedPropertiesDepth}, true)
	return hexDigest(scratch.Bytes())
}

// signedPropertiesDepth is the level of xades:SignedProperties in a stamped document.
const signedPropertiesDepth = 9

// writeSignatureExtension writes the ext:UBLExtensions element holding the stamp as an
// enveloped XML signature: ECDSA (secp256k1) with SHA-256 over the invoice hash, the
// references excluding the parts the hash leaves out, the certificate and the XAdES signed
// properties.
func writeSignatureExtension(w *xmlWriter, x xadesValues) {
	w.start("ext:UBLExtensions")
	w.start("ext:UBLExtension")
	w.leaf("ext:ExtensionURI", signatureMethod)
	w.start("ext:ExtensionContent")
	w.start("sig:UBLDocumentSignatures", "xmlns:sig", nsSIG, "xmlns:sac", nsSAC, "xmlns:sbc", nsSBC)
	w.start("sac:SignatureInformation")
	w.leaf("cbc:ID", "urn:oasis:names:specification:ubl:signature:1")
	w.leaf("sbc:ReferencedSignatureID", signatureID)
	w.start("ds:Signature", "xmlns:ds", nsDS, "Id", "signature")
	w.start("ds:SignedInfo")
	w.leaf("ds:CanonicalizationMethod", "", "Algorithm", "http://www.w3.org/2006/12/xml-c14n11")
	w.leaf("ds:SignatureMethod", "", "Algorithm", "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256")
	w.start("ds:Reference", "Id", "invoiceSignedData", "URI", "")
	w.start("ds:Transforms")
	for _, xpath := range []string{
		"not(//ancestor-or-self::ext:UBLExtensions)",
		"not(//ancestor-or-self::cac:Signature)",
		"not(//ancestor-or-self::cac:AdditionalDocumentReference[cbc:ID='QR'])",
	} {
		w.start("ds:Transform", "Algorithm", "http://www.w3.org/TR/1999/REC-xpath-19991116")
		w.leaf("ds:XPath", xpath)
		w.end()
	}
	w.leaf("ds:Transform", "", "Algorithm", "http://www.w3.org/2006/12/xml-c14n11")
	w.end()
	w.leaf("ds:DigestMethod", "", "Algorithm", digestSHA256)
	w.leaf("ds:DigestValue", x.invoiceDigest)
	w.end()
	w.start("ds:Reference", "Type", "http://www.w3.org/2000/09/xmldsig#SignatureProperties", "URI", "#xadesSignedProperties")
	w.leaf("ds:DigestMethod", "", "Algorithm", digestSHA256)
	w.leaf("ds:DigestValue", x.propertiesDigest)
	w.end()
	w.end()
	w.leaf("ds:SignatureValue", x.signatureValue)
	w.start("ds:KeyInfo")
	w.start("ds:X509Data")
	certificate := ""
	if x.parts != nil {
		certificate = x.parts.certificateText
	}
	w.leaf("ds:X509Certificate", certificate)
	w.end()
	w.end()
	w.start("ds:Object")
	w.start("xades:QualifyingProperties", "xmlns:xades", nsXAdES, "Target", "signature")
	x.writeSignedProperties(w, false)
	w.end()
	w.end()
	w.end()
	w.end()
	w.end()
	w.end()
	w.end()
	w.end()
}

// writeSignedProperties writes the XAdES signed properties: the signing time, the
// certificate's digest, issuer and serial number. Written on their own for their digest
// (declare), xmlns:xades is declared on them and xmlns:ds on each ds: element, as
// SignedPropertiesText has them.
func (x xadesValues) writeSignedProperties(w *xmlWriter, declare bool) {
	ds := func(tag, text string, attrs ...string) {
		if declare {
			attrs = append([]string{"xmlns:ds", nsDS}, attrs...)
		}
		w.leaf(tag, text, attrs...)
	}
	if declare {
		w.start("xades:SignedProperties", "xmlns:xades", nsXAdES, "Id", "xadesSignedProperties")
	} else {
		w.start("xades:SignedProperties", "Id", "xadesSignedProperties")
	}
	var certDigest, issuer, serial string
	if p := x.parts; p != nil {
		certDigest, issuer, serial = p.certificateDigest, p.issuer, p.serial
	}
	w.start("xades:SignedSignatureProperties")
	w.leaf("xades:SigningTime", x.signingTime)
	w.start("xades:SigningCertificate")
	w.start("xades:Cert")
	w.start("xades:CertDigest")
	ds("ds:DigestMethod", "", "Algorithm", digestSHA256)
	ds("ds:DigestValue", certDigest)
	w.end()
	w.start("xades:IssuerSerial")
	ds("ds:X509IssuerName", issuer)
	ds("ds:X509SerialNumber", serial)
	w.end()
	w.end()
	w.end()
	w.end()
	w.end()
}

// signatureExtension is an empty signature extension as a tree (its values left empty, no
// indentation), for a document restamped without one, and its slots.
func signatureExtension() (*etree.Element, *signatureSlots) {
	var b bytes.Buffer
	writeSignatureExtension(&xmlWriter{doc: &b, flat: true}, xadesValues{})
	tree := etree.NewDocument()
	if err := tree.ReadFromBytes(b.Bytes()); err != nil {
		panic("einvoice: the signature extension does not parse: " + err.Error())
	}
	ext := tree.Root()
	ext.Parent().RemoveChild(ext)
	slots, _ := findSignatureSlots(ext)
	return ext, slots
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
