package einvoice

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/beevik/etree"
	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
)

// stamp is what a document's cryptographic stamp says, next to the recomputed hash.
type stamp struct {
	digest    []byte // the invoice hash recomputed from the document
	hash      string // its base64
	signature *etree.Element
}

// checkHash recomputes the invoice hash (C14N 1.1 of the document without the stamp's
// parts, SHA-256) and compares it with the digest the signature names.
func checkHash(r *report, tree *etree.Document, inv xmlInvoice) stamp {
	digest, hash, err := InvoiceHash(tree)
	if err != nil {
		r.add(ResultError, CategoryHash, "SBX-HASH-02", "The invoice hash cannot be computed: the document does not canonicalize (%s).", err)
		return stamp{}
	}
	s := stamp{digest: digest, hash: hash, signature: find(inv.root, "ext:UBLExtensions//ds:Signature")}
	if s.signature == nil {
		if inv.simplified() {
			r.add(ResultWarning, CategorySignature, "BR-KSA-60", "A simplified invoice or note must carry a cryptographic stamp (KSA-15); the document has none.")
		}
		r.add(ResultInfo, CategoryHash, "SBX-HASH-00", "The invoice hash of the document is %s (no signature states one to compare).", hash)
		return s
	}
	stated := text(s.signature, "ds:SignedInfo/ds:Reference[@Id='invoiceSignedData']/ds:DigestValue")
	if stated == "" {
		stated = text(s.signature, "ds:SignedInfo/ds:Reference[@URI='']/ds:DigestValue")
	}
	if stated != hash {
		r.add(ResultError, CategoryHash, "SBX-HASH-01",
			"The invoice hash in the signature (ds:DigestValue) is %q but the document's hash is %s: the document was changed after it was stamped, or hashed another way.",
			truncate(stated, 100), hash)
	} else {
		r.add(ResultInfo, CategoryHash, "SBX-HASH-00", "The invoice hash %s matches the signature's digest.", hash)
	}
	return s
}

// checkStamp checks the stamp's structure (BR-KSA-28, 29, 30), its certificate, its
// signature of the invoice hash and the QR payload against the document.
func checkStamp(r *report, inv xmlInvoice, s stamp, trust Trust) {
	var cert *parsedCertificate
	var signature []byte
	if s.signature != nil {
		checkStampStructure(r, inv)
		cert = checkCertificate(r, s.signature, trust)
		if cert != nil {
			checkCertificateAtSigning(r, inv, s.signature, cert, trust)
		}
		signature = checkSignature(r, s, cert)
		checkSignedProperties(r, s.signature)
	}
	checkQR(r, inv, s, cert, signature)
}

func checkStampStructure(r *report, inv xmlInvoice) {
	info := find(inv.root, "ext:UBLExtensions//sac:SignatureInformation")
	if info == nil || text(info, "cbc:ID") != "urn:oasis:names:specification:ubl:signature:1" {
		r.add(ResultError, CategorySignature, "BR-KSA-28", "The stamp's signature information must have the ID \"urn:oasis:names:specification:ubl:signature:1\".")
	}
	if info == nil || text(info, "sbc:ReferencedSignatureID") != signatureID {
		r.add(ResultWarning, CategorySignature, "BR-KSA-29", "The stamp's referenced signature ID must be %q.", signatureID)
	}
	if text(inv.root, "cac:Signature/cbc:SignatureMethod") != signatureMethod {
		r.add(ResultError, CategorySignature, "BR-KSA-30", "The document's cac:Signature must name the signature method %q.", signatureMethod)
	}
}

// parsedCertificate is what the validation needs of an X.509 certificate. crypto/x509 does
// not read secp256k1 keys, which both the authority's and this sandbox's certificates use.
type parsedCertificate struct {
	der          []byte
	publicKeyDER []byte // SubjectPublicKeyInfo (QR tag 8)
	publicKey    *secp256k1.PublicKey
	signature    []byte // the certificate's signature value (QR tag 9)
	sandbox      bool   // marked with SandboxTemplate
	tbs          []byte // the signed part (TBSCertificate), its DER
	issuer       []byte // the issuer's name, its DER
	subject      []byte // the subject's name, its DER
	notBefore    time.Time
	notAfter     time.Time
	// unitOfSandboxCA: issued by the sandbox CA to an EGS unit, which the CA may revoke.
	unitOfSandboxCA bool
}

// Trust is what the validator checks a stamp's certificate against (DER certificates, nil
// when there is none yet): the caller's own sandbox certificate, and the sandbox CA's, which
// issues the EGS units' certificates and stamps cleared documents as the sandbox authority.
type Trust struct {
	Own       []byte
	SandboxCA []byte
	// RevokedAt says when the sandbox CA revoked a certificate it issued to an EGS unit (DER),
	// revoked false while it has not: the sandbox authority's revocation list. Nil when the
	// caller has none to consult; an error ends the validation.
	RevokedAt func(certificate []byte) (at time.Time, revoked bool, err error)
}

// issuedBy reports whether ca signed c: c names ca's subject as its issuer and ca's key
// verifies c's signature (ECDSA with SHA-256) over its TBSCertificate.
func (c *parsedCertificate) issuedBy(ca *parsedCertificate) bool {
	if !bytes.Equal(c.issuer, ca.subject) {
		return false
	}
	sig, err := ecdsa.ParseDERSignature(c.signature)
	if err != nil {
		return false
	}
	digest := sha256.Sum256(c.tbs)
	return sig.Verify(digest[:], ca.publicKey)
}

// issuedBySandboxCA reports whether c was issued by the sandbox CA whose certificate is caDER.
func issuedBySandboxCA(c *parsedCertificate, caDER []byte) bool {
	if caDER == nil {
		return false
	}
	ca, err := parseCertificate(caDER)
	return err == nil && c.issuedBy(ca)
}

// tbsView reads the parts of a TBSCertificate the validation uses, keeping the public key
// as its DER.
type tbsView struct {
	Version            int `asn1:"optional,explicit,default:0,tag:0"`
	SerialNumber       *big.Int
	SignatureAlgorithm pkix.AlgorithmIdentifier
	Issuer             asn1.RawValue
	Validity           asn1.RawValue
	Subject            asn1.RawValue
	PublicKey          asn1.RawValue
	Extensions         []pkix.Extension `asn1:"optional,explicit,tag:3"`
}

func parseCertificate(der []byte) (*parsedCertificate, error) {
	var c certificate
	if _, err := asn1.Unmarshal(der, &c); err != nil {
		return nil, err
	}
	var tbs tbsView
	if _, err := asn1.Unmarshal(c.TBSCertificate.FullBytes, &tbs); err != nil {
		return nil, err
	}
	var spki subjectPublicKeyInfo
	if _, err := asn1.Unmarshal(tbs.PublicKey.FullBytes, &spki); err != nil {
		return nil, err
	}
	var valid validity
	if _, err := asn1.Unmarshal(tbs.Validity.FullBytes, &valid); err != nil {
		return nil, err
	}
	var curve asn1.ObjectIdentifier
	if _, err := asn1.Unmarshal(spki.Algorithm.Parameters.FullBytes, &curve); err != nil || !curve.Equal(oidSecp256k1) {
		return nil, fmt.Errorf("the public key is not an EC key on secp256k1")
	}
	pub, err := secp256k1.ParsePubKey(spki.PublicKey.Bytes)
	if err != nil {
		return nil, err
	}
	out := &parsedCertificate{
		der: der, publicKeyDER: tbs.PublicKey.FullBytes, publicKey: pub, signature: c.SignatureValue.Bytes,
		tbs: c.TBSCertificate.FullBytes, issuer: tbs.Issuer.FullBytes, subject: tbs.Subject.FullBytes,
		notBefore: valid.NotBefore.UTC(), notAfter: valid.NotAfter.UTC(),
	}
	for _, ext := range tbs.Extensions {
		var template string
		if ext.Id.Equal(oidCertificateTemplateName) {
			_, _ = asn1.Unmarshal(ext.Value, &template)
			out.sandbox = template == SandboxTemplate
		}
	}
	return out, nil
}

// checkCertificate reads the stamp's certificate and says whose it is: the caller's sandbox
// certificate, the sandbox authority's (a cleared document), an EGS unit's issued by the
// sandbox CA (its chain verified), another sandbox certificate, or one this sandbox cannot
// trace to the authority's certification authority.
func checkCertificate(r *report, sig *etree.Element, trust Trust) *parsedCertificate {
	der, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(text(sig, "ds:KeyInfo/ds:X509Data/ds:X509Certificate")), ""))
	if err != nil || len(der) == 0 {
		r.add(ResultError, CategoryCertificate, "SBX-CERT-01", "The stamp has no readable certificate (ds:X509Certificate, base64 DER).")
		return nil
	}
	cert, err := parseCertificate(der)
	if err != nil {
		r.add(ResultError, CategoryCertificate, "SBX-CERT-01", "The stamp's certificate cannot be read: %s.", err)
		return nil
	}
	switch {
	case trust.Own != nil && bytes.Equal(der, trust.Own):
		r.add(ResultInfo, CategoryCertificate, "SBX-CERT-00", "The document is stamped with this organization's sandbox certificate: signature and QR were checked against it.")
	case trust.SandboxCA != nil && bytes.Equal(der, trust.SandboxCA):
		r.add(ResultInfo, CategoryCertificate, "SBX-CERT-05",
			"The document is stamped by the sandbox authority (the sandbox CA's certificate, not the tax authority's), as a cleared document is: signature and QR were checked against it.")
	case issuedBySandboxCA(cert, trust.SandboxCA):
		cert.unitOfSandboxCA = true
		r.add(ResultInfo, CategoryCertificate, "SBX-CERT-04",
			"The document is stamped with an EGS unit's certificate issued by this sandbox's CA (not the tax authority's): its chain to the sandbox CA was verified.")
	case cert.sandbox:
		r.add(ResultWarning, CategoryCertificate, "SBX-CERT-02",
			"The document is stamped with a sandbox certificate that is not this organization's: checked with the certificate it embeds.")
	default:
		r.add(ResultWarning, CategoryCertificate, "SBX-CERT-03",
			"Checked with the certificate the document embeds; its chain to the tax authority's certification authority is not verified (that needs the authority's real certificates, which this sandbox does not have).")
	}
	return cert
}

// checkCertificateAtSigning checks the certificate at the moment the document was signed (the
// XAdES signing time, else the document's issue date and time): within its validity
// (SBX-CERT-06), and, for an EGS unit's certificate, not revoked by then. A document signed
// before its certificate was revoked stays valid, as the authority's documents do, with a
// warning that the certificate has since been revoked (SBX-CERT-07); one signed at or after
// the revocation is an error (SBX-CERT-08). Signing times have no fraction of a second: one in
// the revocation's own second, before its fraction, is taken as before it, as the service
// stamps nothing once a unit is revoked (a signing time is the signer's own claim either way).
func checkCertificateAtSigning(r *report, inv xmlInvoice, sig *etree.Element, cert *parsedCertificate, trust Trust) {
	signedAt, ok := signingTime(inv, sig)
	if !ok {
		return
	}
	at := signedAt.Format(time.RFC3339)
	if signedAt.Before(cert.notBefore) || signedAt.After(cert.notAfter) {
		r.add(ResultError, CategoryCertificate, "SBX-CERT-06", "The document was signed at %s, outside its certificate's validity (%s to %s).",
			at, cert.notBefore.Format(time.RFC3339), cert.notAfter.Format(time.RFC3339))
	}
	if !cert.unitOfSandboxCA || trust.RevokedAt == nil {
		return
	}
	revokedAt, revoked, err := trust.RevokedAt(cert.der)
	switch {
	case err != nil:
		r.fail(err)
	case !revoked:
	case signedAt.Before(revokedAt):
		r.add(ResultWarning, CategoryCertificate, "SBX-CERT-07",
			"The certificate was revoked at %s, after the document was signed (%s): the document was stamped while it was valid and stays valid; its unit stamps nothing since.",
			revokedAt.UTC().Format(time.RFC3339), at)
	default:
		r.add(ResultError, CategoryCertificate, "SBX-CERT-08",
			"The document was signed at %s, at or after its certificate's revocation at %s: a revoked certificate stamps nothing.",
			at, revokedAt.UTC().Format(time.RFC3339))
	}
}

// signingTime is when the document was signed: its XAdES SigningTime (UTC, with or without
// the zone), else its issue date and time; ok is false when neither can be read.
func signingTime(inv xmlInvoice, sig *etree.Element) (time.Time, bool) {
	stated := text(sig, "ds:Object/xades:QualifyingProperties/xades:SignedProperties/xades:SignedSignatureProperties/xades:SigningTime")
	if stated == "" {
		stated = inv.issueDate + "T" + inv.issueTime
	}
	for _, layout := range []string{time.RFC3339, signingTimeLayout} {
		if t, err := time.Parse(layout, stated); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// checkSignature verifies the stamp's ECDSA signature of the invoice hash with the
// certificate's key, signed either as the authority's SDK signs (SHA-256 with ECDSA over the
// hash) or as this sandbox does (ECDSA over the hash itself). It returns the signature's
// DER for the QR check.
func checkSignature(r *report, s stamp, cert *parsedCertificate) []byte {
	value := strings.Join(strings.Fields(text(s.signature, "ds:SignatureValue")), "")
	der, err := base64.StdEncoding.DecodeString(value)
	if err != nil || len(der) == 0 {
		r.add(ResultError, CategorySignature, "SBX-SIG-01", "The stamp has no readable signature value (ds:SignatureValue, base64).")
		return nil
	}
	if cert == nil || s.digest == nil {
		return der
	}
	sig, err := ecdsa.ParseDERSignature(der)
	if err != nil {
		r.add(ResultError, CategorySignature, "SBX-SIG-01", "The signature value is not a DER ECDSA signature: %s.", err)
		return der
	}
	prehashed := sha256.Sum256(s.digest)
	if sig.Verify(s.digest, cert.publicKey) || sig.Verify(prehashed[:], cert.publicKey) {
		r.add(ResultInfo, CategorySignature, "SBX-SIG-00", "The signature of the invoice hash verifies with the certificate's public key.")
	} else {
		r.add(ResultError, CategorySignature, "SBX-SIG-02",
			"The signature does not verify with the certificate's public key over the document's invoice hash %s: the document or the signature was changed.", s.hash)
	}
	return der
}

// checkSignedProperties recomputes the XAdES digests as the authority's SDK does: the signed
// properties' (the SignedInfo reference to #xadesSignedProperties) and the signing
// certificate's (CertDigest), each base64 of the hexadecimal SHA-256.
func checkSignedProperties(r *report, sig *etree.Element) {
	signed := sig.FindElement("ds:Object/xades:QualifyingProperties/xades:SignedProperties")
	if signed == nil {
		r.add(ResultWarning, CategorySignature, "SBX-SIG-05", "The stamp has no XAdES signed properties (signing time, certificate digest), which the authority's stamp carries.")
		return
	}
	stated := text(sig, "ds:SignedInfo/ds:Reference[@URI='#xadesSignedProperties']/ds:DigestValue")
	if want := hexDigest([]byte(SignedPropertiesText(signed))); stated != want {
		r.add(ResultError, CategorySignature, "SBX-SIG-03",
			"The signed properties' digest in the signature is %q but the signed properties hash to %s: they were changed after stamping.", truncate(stated, 100), want)
	}
	certificate := strings.Join(strings.Fields(text(sig, "ds:KeyInfo/ds:X509Data/ds:X509Certificate")), "")
	if got := text(signed, "xades:SignedSignatureProperties/xades:SigningCertificate/xades:Cert/xades:CertDigest/ds:DigestValue"); got != hexDigest([]byte(certificate)) {
		r.add(ResultError, CategorySignature, "SBX-SIG-04",
			"The signed properties' certificate digest %q is not the digest of the stamp's certificate: the certificate was replaced.", truncate(got, 100))
	}
}

// qrTagNames names the QR tags in messages.
var qrTagNames = map[int]string{
	1: "seller name", 2: "VAT number", 3: "timestamp", 4: "total with VAT", 5: "VAT total",
	6: "invoice hash", 7: "signature", 8: "public key", 9: "certificate signature",
}

// checkQR decodes the QR payload and compares each tag with the document.
func checkQR(r *report, inv xmlInvoice, s stamp, cert *parsedCertificate, signature []byte) {
	if inv.qr == nil {
		return // BR-KSA-27 reported it
	}
	payload := strings.Join(strings.Fields(text(inv.qr, "cac:Attachment/cbc:EmbeddedDocumentBinaryObject")), "")
	tags, err := DecodeQR(payload)
	if err != nil {
		r.add(ResultError, CategoryQR, "SBX-QR-02", "The QR payload is not base64 TLV (tag, length, value): %s.", err)
		return
	}
	mismatches := 0
	expect := func(tag int, want []byte, same func(got, want []byte) bool) {
		got, ok := tags[tag]
		switch {
		case !ok:
			mismatches++
			r.add(ResultError, CategoryQR, fmt.Sprintf("SBX-QR-%02d", 10+tag), "The QR payload has no tag %d (%s).", tag, qrTagNames[tag])
		case !same(got, want):
			mismatches++
			r.add(ResultError, CategoryQR, fmt.Sprintf("SBX-QR-%02d", 10+tag), "QR tag %d (%s) is %q; the document has %q.",
				tag, qrTagNames[tag], printable(got), printable(want))
		}
	}
	// A seller name longer than a TLV value carries is cut as generation cuts it (SBX-QR-01),
	// from the element's text as written, surrounding spaces included.
	expect(1, []byte(inv.sellerName), func(got, want []byte) bool {
		if sameText(got, want) {
			return true
		}
		written := find(inv.root, sellerNamePath)
		if cut, ok := tlvValue([]byte(written.Text()), true); ok && bytes.Equal(got, cut) {
			r.add(ResultWarning, CategoryQR, "SBX-QR-01", "QR tag 1 holds the seller name's first %d bytes: a TLV value has at most %d.", len(cut), maxTLVValue)
			return true
		}
		return false
	})
	expect(2, []byte(inv.sellerVAT), sameText)
	expect(3, []byte(inv.issueDate+"T"+inv.issueTime), sameTimestamp)
	// The authority's samples write the amount due (BT-115) when it differs from the total
	// with VAT (BT-112): prepaid amounts, payable rounding. Either is accepted.
	total := text(inv.root, "cac:LegalMonetaryTotal/cbc:TaxInclusiveAmount")
	due := text(inv.root, "cac:LegalMonetaryTotal/cbc:PayableAmount")
	expect(4, []byte(total), func(got, want []byte) bool { return sameDecimal(got, want) || sameDecimal(got, []byte(due)) })
	expect(5, []byte(vatTotal(inv.root)), sameDecimal)
	if s.signature != nil {
		expect(6, []byte(s.hash), sameText)
		expect(7, []byte(base64.StdEncoding.EncodeToString(signature)), sameText)
		if cert != nil {
			expect(8, cert.publicKeyDER, bytes.Equal)
			if inv.simplified() {
				expect(9, cert.signature, bytes.Equal)
			}
		}
	}
	if mismatches == 0 {
		r.add(ResultInfo, CategoryQR, "SBX-QR-00", "The QR payload agrees with the document (%d tags).", len(tags))
	}
}

// vatTotal is the invoice's total VAT in the tax currency: the tax total without subtotals
// (BT-111) when there is one, else the one with.
func vatTotal(root *etree.Element) string {
	totals := root.SelectElements("cac:TaxTotal")
	for _, tt := range totals {
		if tt.SelectElement("cac:TaxSubtotal") == nil {
			return text(tt, "cbc:TaxAmount")
		}
	}
	if len(totals) > 0 {
		return text(totals[0], "cbc:TaxAmount")
	}
	return ""
}

func sameText(got, want []byte) bool { return bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) }

// sameTimestamp compares ISO 8601 timestamps with or without the UTC designator.
func sameTimestamp(got, want []byte) bool {
	return strings.TrimSuffix(string(got), "Z") == strings.TrimSuffix(string(want), "Z")
}

func sameDecimal(got, want []byte) bool {
	g, w := decimal(string(got)), decimal(string(want))
	return string(got) != "" && g.Cmp(w) == 0
}

// printable shows a QR value in a message: text as is (cut), binary as base64.
func printable(b []byte) string {
	s := string(b)
	if !isText(b) {
		s = base64.StdEncoding.EncodeToString(b)
	}
	return truncate(s, 120)
}

func isText(b []byte) bool {
	for _, c := range string(b) {
		if c == 0xFFFD || (c < 0x20 && c != '\t') {
			return false
		}
	}
	return true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
