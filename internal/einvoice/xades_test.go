package einvoice_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"math/big"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/beevik/etree"

	"github.com/provider/coreapi/internal/einvoice"
)

// TestGenerate_XAdES stamps every kind with a unit certificate of the sandbox CA (key and
// CSR made by openssl) and verifies each signature apart from the code that made it: the
// invoice hash by libxml2's C14N 1.1, the signed properties and certificate digests by the
// authority's formula over the document's own bytes, the ECDSA signature and the
// certificate's public key by openssl, and the validator finds no error.
func TestGenerate_XAdES(t *testing.T) {
	t.Parallel()
	keyPEM, csrPEM := opensslCSR(t)
	csr, problems := einvoice.ParseCSR(csrPEM)
	if problems != nil {
		t.Fatal(problems)
	}
	ca, err := einvoice.NewSandboxCA(certificatesIssuedAt)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.Issue(csr, certificatesIssuedAt, 1)
	if err != nil {
		t.Fatal(err)
	}
	private, err := einvoice.ParsePrivateKey(keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	key, err := einvoice.LoadSandboxKey(private.Serialize(), cert)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := writeTemp(t, "key.pem", []byte(keyPEM))
	pubFile := writeTemp(t, "pub.pem", run(t, "openssl", "ec", "-in", keyFile, "-pubout"))
	certPEM := run(t, "openssl", "x509", "-inform", "DER", "-in", writeTemp(t, "cert.der", cert))
	if certPub := run(t, "openssl", "x509", "-in", writeTemp(t, "cert.pem", certPEM), "-noout", "-pubkey"); !bytes.Equal(certPub, []byte(readFile(t, pubFile))) {
		t.Fatal("the certificate's public key is not the unit's")
	}
	serialHex := strings.TrimPrefix(strings.TrimSpace(string(run(t, "openssl", "x509", "-in", writeTemp(t, "c.pem", certPEM), "-noout", "-serial"))), "serial=")
	for _, kind := range einvoice.Kinds {
		req := requestOf(kind, sampleRequest())
		d, err := einvoice.Prepare(req)
		if err != nil {
			t.Fatal(err)
		}
		signedAt := time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC)
		inv, err := d.Generate(einvoice.Identity{Number: "X-1", UUID: "6f0b8a3e-2c1d-4e5f-9a8b-7c6d5e4f3a2b", ICV: 1, PIH: einvoice.FirstPIH, IssuedAt: signedAt}, key)
		if err != nil {
			t.Fatal(err)
		}
		doc := etree.NewDocument()
		if err := doc.ReadFromString(inv.XML); err != nil {
			t.Fatal(err)
		}
		sig := doc.FindElement("//ext:UBLExtensions//ds:Signature")
		value := func(path string) string {
			t.Helper()
			e := sig.FindElement(path)
			if e == nil {
				t.Fatalf("%s: no %s in the signature", kind.Type, path)
			}
			return strings.TrimSpace(e.Text())
		}
		// The invoice reference: C14N 1.1 of the document without the stamp's parts.
		if got, want := value("ds:SignedInfo/ds:Reference[@Id='invoiceSignedData']/ds:DigestValue"), c14nHash(t, inv.XML); got != want {
			t.Errorf("%s: invoice digest %s, libxml2 gives %s", kind.Type, got, want)
		}
		// The signed properties reference and the certificate digest, as the SDK computes them.
		certText := value("ds:KeyInfo/ds:X509Data/ds:X509Certificate")
		if got := value("ds:Object/xades:QualifyingProperties/xades:SignedProperties//xades:CertDigest/ds:DigestValue"); got != authorityDigest(certText) {
			t.Errorf("%s: certificate digest %s, want %s", kind.Type, got, authorityDigest(certText))
		}
		if got, want := value("ds:SignedInfo/ds:Reference[@URI='#xadesSignedProperties']/ds:DigestValue"), authorityDigest(signedPropertiesAsSDK(t, inv.XML)); got != want {
			t.Errorf("%s: signed properties digest %s, want %s", kind.Type, got, want)
		}
		if got := value(".//xades:SigningTime"); got != "2025-03-01T09:30:00" {
			t.Errorf("%s: signing time %s", kind.Type, got)
		}
		serial, _ := new(big.Int).SetString(serialHex, 16)
		if got := value(".//xades:IssuerSerial/ds:X509SerialNumber"); got != serial.String() {
			t.Errorf("%s: serial %s, openssl says %s", kind.Type, got, serial)
		}
		if got := value(".//xades:IssuerSerial/ds:X509IssuerName"); !strings.Contains(got, "CN="+einvoice.SandboxCAName) {
			t.Errorf("%s: issuer %s", kind.Type, got)
		}
		// The signature: SHA-256 with ECDSA over the invoice hash's bytes, checked by openssl
		// with the certificate's key.
		digest, _ := base64.StdEncoding.DecodeString(inv.Hash)
		sigDER, _ := base64.StdEncoding.DecodeString(value("ds:SignatureValue"))
		out := run(t, "openssl", "dgst", "-sha256", "-verify", pubFile, "-signature", writeTemp(t, "sig.der", sigDER), writeTemp(t, "hash.bin", digest))
		if !strings.Contains(string(out), "Verified OK") {
			t.Errorf("%s: openssl: %s", kind.Type, out)
		}
		// QR tags 8 and 9 come from the certificate.
		tags, err := einvoice.DecodeQR(inv.QR)
		if err != nil {
			t.Fatal(err)
		}
		pubDER := run(t, "openssl", "ec", "-pubin", "-in", pubFile, "-outform", "DER")
		if !bytes.Equal(tags[8], pubDER) {
			t.Errorf("%s: QR tag 8 is not the certificate's public key", kind.Type)
		}
		if !bytes.Contains(cert, tags[9]) || len(tags[9]) < 64 || !bytes.HasSuffix(cert, tags[9]) {
			t.Errorf("%s: QR tag 9 is not the certificate's signature", kind.Type)
		}
		validator, err := einvoice.SharedValidator()
		if err != nil {
			t.Fatal(err)
		}
		report, err := validator.ValidateXML([]byte(inv.XML), einvoice.Trust{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range report.Results {
			if r.Type == einvoice.ResultError {
				t.Errorf("%s: validator: %s %s", kind.Type, r.Code, r.Message)
			}
		}
	}
}

// c14nHash is base64(SHA-256(C14N 1.1)) of the document without ext:UBLExtensions,
// cac:Signature and the QR reference, canonicalized by xmllint.
func c14nHash(t *testing.T, xml string) string {
	t.Helper()
	doc := etree.NewDocument()
	if err := doc.ReadFromString(xml); err != nil {
		t.Fatal(err)
	}
	root := doc.Root()
	for _, path := range []string{"ext:UBLExtensions", "cac:Signature", "cac:AdditionalDocumentReference[cbc:ID='QR']"} {
		root.RemoveChild(root.FindElement(path))
	}
	stripped, err := doc.WriteToBytes()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(xmllint(t, "--c14n11", writeTemp(t, "stripped.xml", stripped)))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// authorityDigest is base64 of the hexadecimal SHA-256, the authority's encoding.
func authorityDigest(text string) string {
	sum := sha256.Sum256([]byte(text))
	return base64.StdEncoding.EncodeToString([]byte(hex.EncodeToString(sum[:])))
}

var signedPropertiesBytes = regexp.MustCompile(`(?s)<xades:SignedProperties .*?</xades:SignedProperties>`)

// signedPropertiesAsSDK cuts the signed properties out of the document's bytes and declares
// their namespaces as the SDK's serializer of the detached element does.
func signedPropertiesAsSDK(t *testing.T, xml string) string {
	t.Helper()
	text := signedPropertiesBytes.FindString(xml)
	if text == "" {
		t.Fatal("no xades:SignedProperties")
	}
	text = strings.Replace(text, "<xades:SignedProperties ", `<xades:SignedProperties xmlns:xades="http://uri.etsi.org/01903/v1.3.2#" `, 1)
	for _, tag := range []string{"DigestMethod", "DigestValue", "X509IssuerName", "X509SerialNumber"} {
		text = strings.ReplaceAll(text, "<ds:"+tag, "<ds:"+tag+` xmlns:ds="http://www.w3.org/2000/09/xmldsig#"`)
	}
	return text
}
