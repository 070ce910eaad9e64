package einvoice

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"

	"github.com/beevik/etree"
	dsig "github.com/russellhaering/goxmldsig"
)

// FirstPIH is the previous-invoice hash of the first invoice of a chain: by convention the
// base64 of the hexadecimal SHA-256 of the text "0".
var FirstPIH = func() string {
	sum := sha256.Sum256([]byte("0"))
	return base64.StdEncoding.EncodeToString([]byte(hex.EncodeToString(sum[:])))
}()

// InvoiceHash returns the SHA-256 digest of the C14N 1.1 canonical form of the invoice
// without ext:UBLExtensions, cac:Signature and the QR additional document reference, and its
// base64 form. doc is not changed.
func InvoiceHash(doc *etree.Document) ([]byte, string, error) {
	// A shallow copy of the root without the stamp's children: the canonicalizer copies
	// what it reads, so the children are shared, not duplicated.
	orig := doc.Root()
	root := &etree.Element{Space: orig.Space, Tag: orig.Tag, Attr: orig.Attr}
	for _, tok := range orig.Child {
		if e, ok := tok.(*etree.Element); ok && isStampElement(e) {
			continue
		}
		root.Child = append(root.Child, tok)
	}
	canonical, err := dsig.MakeC14N11Canonicalizer().Canonicalize(root)
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(canonical)
	return sum[:], base64.StdEncoding.EncodeToString(sum[:]), nil
}

// isStampElement reports whether e is one of the parts the invoice hash leaves out.
func isStampElement(e *etree.Element) bool {
	switch e.FullTag() {
	case "ext:UBLExtensions", "cac:Signature":
		return true
	case "cac:AdditionalDocumentReference":
		id := e.SelectElement("cbc:ID")
		return id != nil && id.Text() == "QR"
	}
	return false
}
