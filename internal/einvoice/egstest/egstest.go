// Package egstest makes what an integrator sends to onboard an EGS unit — a secp256k1 key
// and a certificate signing request of the tax authority's shape — for tests. It builds the
// ASN.1 itself, apart from the package it tests.
package egstest

import (
	"crypto/sha256"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
)

// Fields are the onboarding fields of a CSR, as in the authority's CSR config.
type Fields struct {
	CommonName, SerialNumber, VATNumber, OrganizationUnit, OrganizationName, Country,
	InvoiceTypes, Location, Industry string
}

// Example are the fields of the authority's English CSR config example.
var Example = Fields{
	CommonName:       "TST-886431145-399999999900003",
	SerialNumber:     "1-TST|2-TST|3-ed22f1d8-e6a2-1118-9b58-d9a8f11e445f",
	VATNumber:        "399999999900003",
	OrganizationUnit: "Riyadh Branch",
	OrganizationName: "Maximum Speed Tech Supply LTD",
	Country:          "SA",
	InvoiceTypes:     "1100",
	Location:         "RRRD2929",
	Industry:         "Supply activities",
}

var (
	oidSecp256k1  = asn1.ObjectIdentifier{1, 3, 132, 0, 10}
	oidECKey      = asn1.ObjectIdentifier{1, 2, 840, 10045, 2, 1}
	oidECDSA256   = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 3, 2}
	oidExtRequest = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 14}
)

// NewKey returns a fresh secp256k1 key and its SEC 1 PEM ("EC PRIVATE KEY").
func NewKey() (*secp256k1.PrivateKey, string) {
	key, err := secp256k1.GeneratePrivateKey()
	if err != nil {
		panic(err)
	}
	curve, _ := asn1.Marshal(oidSecp256k1)
	der, err := asn1.Marshal(struct {
		Version    int
		PrivateKey []byte
		Curve      asn1.RawValue `asn1:"explicit,tag:0"`
	}{1, key.Serialize(), asn1.RawValue{FullBytes: curve}})
	if err != nil {
		panic(err)
	}
	return key, string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}))
}

// CSR returns the PEM certificate signing request of key for f: the subject C, O, OU, CN and
// the subject alternative name's directory name SN, UID, title, registeredAddress,
// businessCategory; empty fields are left out.
func CSR(key *secp256k1.PrivateKey, f Fields) string {
	subject := rdns([][2]any{
		{asn1.ObjectIdentifier{2, 5, 4, 6}, f.Country},
		{asn1.ObjectIdentifier{2, 5, 4, 10}, f.OrganizationName},
		{asn1.ObjectIdentifier{2, 5, 4, 11}, f.OrganizationUnit},
		{asn1.ObjectIdentifier{2, 5, 4, 3}, f.CommonName},
	})
	dirName := must(asn1.Marshal(rdns([][2]any{
		{asn1.ObjectIdentifier{2, 5, 4, 4}, f.SerialNumber},
		{asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 1}, f.VATNumber},
		{asn1.ObjectIdentifier{2, 5, 4, 12}, f.InvoiceTypes},
		{asn1.ObjectIdentifier{2, 5, 4, 26}, f.Location},
		{asn1.ObjectIdentifier{2, 5, 4, 15}, f.Industry},
	})))
	san := must(asn1.Marshal([]asn1.RawValue{{Class: asn1.ClassContextSpecific, Tag: 4, IsCompound: true, Bytes: dirName}}))
	exts := must(asn1.Marshal([]pkix.Extension{{Id: asn1.ObjectIdentifier{2, 5, 29, 17}, Value: san}}))
	attr := must(asn1.Marshal(struct {
		Type   asn1.ObjectIdentifier
		Values []asn1.RawValue `asn1:"set"`
	}{oidExtRequest, []asn1.RawValue{{FullBytes: exts}}}))
	curve := must(asn1.Marshal(oidSecp256k1))
	point := key.PubKey().SerializeUncompressed()
	info := must(asn1.Marshal(struct {
		Version   int
		Subject   pkix.RDNSequence
		PublicKey struct {
			Algorithm pkix.AlgorithmIdentifier
			Key       asn1.BitString
		}
		Attributes []asn1.RawValue `asn1:"tag:0"`
	}{
		Subject: subject,
		PublicKey: struct {
			Algorithm pkix.AlgorithmIdentifier
			Key       asn1.BitString
		}{pkix.AlgorithmIdentifier{Algorithm: oidECKey, Parameters: asn1.RawValue{FullBytes: curve}}, asn1.BitString{Bytes: point, BitLength: 8 * len(point)}},
		Attributes: []asn1.RawValue{{FullBytes: attr}},
	}))
	digest := sha256.Sum256(info)
	sig := ecdsa.Sign(key, digest[:]).Serialize()
	der := must(asn1.Marshal(struct {
		Info      asn1.RawValue
		Algorithm pkix.AlgorithmIdentifier
		Signature asn1.BitString
	}{asn1.RawValue{FullBytes: info}, pkix.AlgorithmIdentifier{Algorithm: oidECDSA256}, asn1.BitString{Bytes: sig, BitLength: 8 * len(sig)}}))
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
}

func rdns(pairs [][2]any) pkix.RDNSequence {
	var out pkix.RDNSequence
	for _, p := range pairs {
		if p[1].(string) != "" {
			out = append(out, []pkix.AttributeTypeAndValue{{Type: p[0].(asn1.ObjectIdentifier), Value: p[1]}})
		}
	}
	return out
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
