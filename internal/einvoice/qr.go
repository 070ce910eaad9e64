package einvoice

import (
	"encoding/base64"
	"errors"
	"unicode/utf8"
)

// QRFields are the values of the QR payload, tags 1 to 9.
type QRFields struct {
	SellerName           string // 1
	VATNumber            string // 2
	Timestamp            string // 3, ISO 8601 in UTC
	TotalWithVAT         string // 4, decimal
	VATTotal             string // 5, decimal
	InvoiceHash          string // 6, base64
	Signature            string // 7, base64 of the DER ECDSA signature of the invoice hash
	PublicKey            []byte // 8, DER SubjectPublicKeyInfo
	CertificateSignature []byte // 9, the certificate's signature value
}

// maxTLVValue is the longest value one TLV entry can carry: its length is a single byte.
const maxTLVValue = 255

// Encode returns the base64 TLV payload (tag byte, length byte, value) and whether a value
// had to be shortened to 255 bytes (text is cut on a character boundary).
func (f QRFields) Encode() (payload string, truncated bool) {
	values := [][]byte{
		[]byte(f.SellerName), []byte(f.VATNumber), []byte(f.Timestamp), []byte(f.TotalWithVAT),
		[]byte(f.VATTotal), []byte(f.InvoiceHash), []byte(f.Signature), f.PublicKey, f.CertificateSignature,
	}
	var out []byte
	for i, v := range values {
		v, cut := tlvValue(v, i <= 6) // tags 1 to 7 are text
		truncated = truncated || cut
		out = append(out, byte(i+1), byte(len(v)))
		out = append(out, v...)
	}
	return base64.StdEncoding.EncodeToString(out), truncated
}

// tlvValue is v as one TLV entry carries it: at most maxTLVValue bytes, text cut on a
// character boundary; cut says whether it was shortened.
func tlvValue(v []byte, text bool) (value []byte, cut bool) {
	if len(v) <= maxTLVValue {
		return v, false
	}
	v = v[:maxTLVValue]
	for text && len(v) > 0 && !utf8.Valid(v) {
		v = v[:len(v)-1]
	}
	return v, true
}

// DecodeQR splits a base64 TLV payload into its values by tag.
func DecodeQR(payload string) (map[int][]byte, error) {
	b, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return nil, err
	}
	tags := map[int][]byte{}
	for len(b) >= 2 {
		tag, n := int(b[0]), int(b[1])
		if len(b) < 2+n {
			return nil, errTruncatedTLV
		}
		tags[tag] = b[2 : 2+n]
		b = b[2+n:]
	}
	if len(b) != 0 {
		return nil, errTruncatedTLV
	}
	return tags, nil
}

var errTruncatedTLV = errors.New("einvoice: truncated TLV payload")
