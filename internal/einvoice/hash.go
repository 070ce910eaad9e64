package einvoice

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"

	"github.com/beevik/etree"
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
	root := doc.Root()
	if root == nil {
		return nil, "", errNoRoot
	}
	buf := canonicalBuffers.Get().(*bytes.Buffer)
	defer canonicalBuffers.Put(buf)
	buf.Reset()
	canonical(buf, root, isStampElement)
	sum := sha256.Sum256(buf.Bytes())
	return sum[:], base64.StdEncoding.EncodeToString(sum[:]), nil
}

var errNoRoot = errors.New("einvoice: the document has no root element")

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
