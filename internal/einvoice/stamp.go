package einvoice

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
)

// Object identifiers of the sandbox certificate.
var (
	oidECDSAWithSHA256 = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 3, 2}
	oidECPublicKey     = asn1.ObjectIdentifier{1, 2, 840, 10045, 2, 1}
	oidSecp256k1       = asn1.ObjectIdentifier{1, 3, 132, 0, 10}
	// oidCertificateTemplateName is where tax-authority stamping certificates name their
	// environment; the sandbox certificate names SandboxTemplate there.
	oidCertificateTemplateName = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 311, 20, 2}
	oidCommonName              = asn1.ObjectIdentifier{2, 5, 4, 3}
	oidOrganizationalUnit      = asn1.ObjectIdentifier{2, 5, 4, 11}
	oidOrganization            = asn1.ObjectIdentifier{2, 5, 4, 10}
	oidCountry                 = asn1.ObjectIdentifier{2, 5, 4, 6}
)

// Marks of a sandbox certificate: its template name and organizational unit say it was not
// issued by the tax authority.
const (
	SandboxTemplate = "SANDBOX-Code-Signing"
	SandboxUnit     = "SANDBOX - self-signed, not issued by the tax authority"
)

// SandboxKey is an organization's sandbox stamping identity: a secp256k1 private key and a
// self-signed X.509 certificate of its public key marked as sandbox.
type SandboxKey struct {
	private     *secp256k1.PrivateKey
	Certificate []byte // DER

	// What every stamp writes of the key and its certificate, derived once (a key loaded once
	// stamps many documents): the public key is a scalar multiplication, the certificate a
	// parse.
	once  sync.Once
	parts stampingParts
	err   error
}

// stampingParts are the parts of a key's certificate a stamp writes or checks.
type stampingParts struct {
	publicKeyInfo        []byte // DER SubjectPublicKeyInfo (QR tag 8)
	certificateSignature []byte // QR tag 9
	certificateText      string // the certificate's base64 (ds:X509Certificate)
	certificateDigest    string // XAdES CertDigest
	issuer, serial       string // XAdES IssuerSerial
	notBefore, notAfter  time.Time
}

// NewSandboxKey creates a key and its self-signed sandbox certificate for subject (e.g. the
// organization id), valid from SandboxKeysValidFrom (or now, if earlier) to ten years from now.
// It stamps documents of organizations without an EGS unit and the provider's own, whose
// issue dates a test clock may set in the past: the backdated validity keeps those documents
// inside it, where a certificate issued today would make each one SBX-CERT-06.
func NewSandboxKey(subject string, now time.Time) (*SandboxKey, error) {
	priv, err := secp256k1.GeneratePrivateKey()
	if err != nil {
		return nil, err
	}
	cert, err := selfSignedCertificate(priv, subject, now)
	if err != nil {
		return nil, err
	}
	return &SandboxKey{private: priv, Certificate: cert}, nil
}

// LoadSandboxKey restores a key from PrivateKeyBytes and its certificate.
func LoadSandboxKey(private, certificate []byte) (*SandboxKey, error) {
	if len(private) != 32 {
		return nil, errors.New("einvoice: a sandbox private key has 32 bytes")
	}
	return &SandboxKey{private: secp256k1.PrivKeyFromBytes(private), Certificate: certificate}, nil
}

// PrivateKeyBytes is the 32-byte private scalar, for storage.
func (k *SandboxKey) PrivateKeyBytes() []byte { return k.private.Serialize() }

// PublicKeyInfo is the DER SubjectPublicKeyInfo of the key (QR tag 8).
func (k *SandboxKey) PublicKeyInfo() []byte {
	b, _ := asn1.Marshal(publicKeyInfo(k.private.PubKey()))
	return b
}

// Sign signs a SHA-256 digest with ECDSA and returns the DER signature.
func (k *SandboxKey) Sign(digest []byte) []byte {
	return ecdsa.Sign(k.private, digest).Serialize()
}

// CertificateSignature is the signature value of the certificate (QR tag 9).
func (k *SandboxKey) CertificateSignature() ([]byte, error) {
	p, err := k.stampingParts()
	return p.certificateSignature, err
}

// Errors of a stamping certificate used outside its validity.
var (
	ErrCertificateNotYetValid = errors.New("einvoice: the stamping certificate is not yet valid")
	ErrCertificateExpired     = errors.New("einvoice: the stamping certificate has expired")
)

// CheckValidAt reports whether the key's certificate is valid at t (its notBefore and notAfter
// included): ErrCertificateNotYetValid before, ErrCertificateExpired after, wrapped with the
// validity.
func (k *SandboxKey) CheckValidAt(t time.Time) error {
	p, err := k.stampingParts()
	if err != nil {
		return err
	}
	switch {
	case t.Before(p.notBefore):
		return fmt.Errorf("%w: valid from %s", ErrCertificateNotYetValid, p.notBefore.Format(time.RFC3339))
	case t.After(p.notAfter):
		return fmt.Errorf("%w: valid until %s", ErrCertificateExpired, p.notAfter.Format(time.RFC3339))
	}
	return nil
}

// stampingParts derives the key's stamping parts once.
func (k *SandboxKey) stampingParts() (*stampingParts, error) {
	k.once.Do(func() {
		var c certificate
		var tbs tbsCertificate
		if _, k.err = asn1.Unmarshal(k.Certificate, &c); k.err == nil {
			_, k.err = asn1.Unmarshal(c.TBSCertificate.FullBytes, &tbs)
		}
		if k.err != nil {
			k.err = fmt.Errorf("einvoice: stamping certificate: %w", k.err)
			return
		}
		text := base64.StdEncoding.EncodeToString(k.Certificate)
		k.parts = stampingParts{
			publicKeyInfo:        k.PublicKeyInfo(),
			certificateSignature: c.SignatureValue.Bytes,
			certificateText:      text,
			certificateDigest:    hexDigest([]byte(text)),
			issuer:               tbs.Issuer.String(),
			serial:               tbs.SerialNumber.String(),
			notBefore:            tbs.Validity.NotBefore.UTC(),
			notAfter:             tbs.Validity.NotAfter.UTC(),
		}
	})
	return &k.parts, k.err
}

type certificate struct {
	TBSCertificate     asn1.RawValue
	SignatureAlgorithm pkix.AlgorithmIdentifier
	SignatureValue     asn1.BitString
}

type tbsCertificate struct {
	Version            int `asn1:"optional,explicit,default:0,tag:0"`
	SerialNumber       *big.Int
	SignatureAlgorithm pkix.AlgorithmIdentifier
	Issuer             pkix.RDNSequence
	Validity           validity
	Subject            pkix.RDNSequence
	PublicKey          subjectPublicKeyInfo
	Extensions         []pkix.Extension `asn1:"optional,explicit,tag:3"`
}

type validity struct {
	NotBefore, NotAfter time.Time
}

type subjectPublicKeyInfo struct {
	Algorithm pkix.AlgorithmIdentifier
	PublicKey asn1.BitString
}

func publicKeyInfo(pub *secp256k1.PublicKey) subjectPublicKeyInfo {
	curve, _ := asn1.Marshal(oidSecp256k1)
	point := pub.SerializeUncompressed()
	return subjectPublicKeyInfo{
		Algorithm: pkix.AlgorithmIdentifier{Algorithm: oidECPublicKey, Parameters: asn1.RawValue{FullBytes: curve}},
		PublicKey: asn1.BitString{Bytes: point, BitLength: 8 * len(point)},
	}
}

// selfSignedCertificate builds an X.509 v3 certificate by hand: crypto/x509 signs only with
// the NIST curves, and the stamp uses secp256k1.
func selfSignedCertificate(priv *secp256k1.PrivateKey, subject string, now time.Time) ([]byte, error) {
	name := sandboxName("SANDBOX-EGS-" + subject)
	from := SandboxKeysValidFrom
	if now.Before(from) {
		from = now
	}
	return signCertificate(priv, name, name, priv.PubKey(), from, now.AddDate(10, 0, 0), nil)
}

// SandboxKeysValidFrom is when the self-signed sandbox certificates begin to be valid: the
// day the authority's e-invoicing began (4 December 2021).
var SandboxKeysValidFrom = time.Date(2021, 12, 4, 0, 0, 0, 0, time.UTC)

// sandboxName is the distinguished name of a certificate the sandbox makes for itself.
func sandboxName(commonName string) pkix.RDNSequence {
	return pkix.RDNSequence{
		{{Type: oidCountry, Value: "SA"}},
		{{Type: oidOrganization, Value: "Provider Core API sandbox"}},
		{{Type: oidOrganizationalUnit, Value: SandboxUnit}},
		{{Type: oidCommonName, Value: commonName}},
	}
}

// signCertificate makes a certificate of pub for subject, signed by issuerKey in the name of
// issuer, valid from notBefore to notAfter (whole seconds), marked with SandboxTemplate, with
// extra extensions.
func signCertificate(issuerKey *secp256k1.PrivateKey, issuer, subject pkix.RDNSequence, pub *secp256k1.PublicKey, notBefore, notAfter time.Time, extra []pkix.Extension) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 63))
	if err != nil {
		return nil, err
	}
	template, err := asn1.Marshal(SandboxTemplate)
	if err != nil {
		return nil, err
	}
	sigAlg := pkix.AlgorithmIdentifier{Algorithm: oidECDSAWithSHA256}
	tbs, err := asn1.Marshal(tbsCertificate{
		Version:            2,
		SerialNumber:       serial,
		SignatureAlgorithm: sigAlg,
		Issuer:             issuer,
		Validity:           validity{NotBefore: notBefore.UTC().Truncate(time.Second), NotAfter: notAfter.UTC().Truncate(time.Second)},
		Subject:            subject,
		PublicKey:          publicKeyInfo(pub),
		Extensions:         append([]pkix.Extension{{Id: oidCertificateTemplateName, Value: template}}, extra...),
	})
	if err != nil {
		return nil, err
	}
	digest := sha256.Sum256(tbs)
	sig := ecdsa.Sign(issuerKey, digest[:]).Serialize()
	return asn1.Marshal(certificate{
		TBSCertificate:     asn1.RawValue{FullBytes: tbs},
		SignatureAlgorithm: sigAlg,
		SignatureValue:     asn1.BitString{Bytes: sig, BitLength: 8 * len(sig)},
	})
}
