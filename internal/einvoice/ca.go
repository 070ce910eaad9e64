package einvoice

import (
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"strings"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
)

// SandboxCA is the sandbox's own certification authority: it issues the compliance and
// production certificates of EGS units in place of the tax authority, and every certificate
// it issues is marked as sandbox (SandboxTemplate).
type SandboxCA struct {
	key         *secp256k1.PrivateKey
	Certificate []byte // DER, self-signed
}

// SandboxCAName is the common name of the sandbox CA, its issuer name on unit certificates.
const SandboxCAName = "SANDBOX-EINVOICE-CA (not the tax authority)"

// NewSandboxCA creates the CA's key and self-signed certificate, valid for 20 years.
func NewSandboxCA(now time.Time) (*SandboxCA, error) {
	key, err := secp256k1.GeneratePrivateKey()
	if err != nil {
		return nil, err
	}
	name := sandboxName(SandboxCAName)
	isCA, err := asn1.Marshal(struct{ CA bool }{true})
	if err != nil {
		return nil, err
	}
	basicConstraints := pkix.Extension{Id: asn1.ObjectIdentifier{2, 5, 29, 19}, Critical: true, Value: isCA}
	cert, err := signCertificate(key, name, name, key.PubKey(), now, now.AddDate(20, 0, 0), []pkix.Extension{basicConstraints})
	if err != nil {
		return nil, err
	}
	return &SandboxCA{key: key, Certificate: cert}, nil
}

// LoadSandboxCA restores the CA from its 32-byte private key and its certificate.
func LoadSandboxCA(private, certificate []byte) (*SandboxCA, error) {
	if len(private) != 32 {
		return nil, errors.New("einvoice: the sandbox CA's private key has 32 bytes")
	}
	return &SandboxCA{key: secp256k1.PrivKeyFromBytes(private), Certificate: certificate}, nil
}

// StampingKey is the sandbox authority's stamp: the CA's key with its own certificate, with
// which clearance stamps a cleared document.
func (ca *SandboxCA) StampingKey() *SandboxKey {
	return &SandboxKey{private: ca.key, Certificate: ca.Certificate}
}

// PrivateKeyBytes is the CA's 32-byte private scalar, for sealed storage.
func (ca *SandboxCA) PrivateKeyBytes() []byte { return ca.key.Serialize() }

// Issue signs a certificate for the unit of csr: its subject (CN, O, OU, C) and the
// onboarding fields in the subject alternative name, as the authority's certificates carry
// them, valid for years from now.
func (ca *SandboxCA) Issue(csr *CSR, now time.Time, years int) ([]byte, error) {
	f := csr.Fields
	subject := pkix.RDNSequence{
		{{Type: oidCountry, Value: f.Country}},
		{{Type: oidOrganization, Value: f.OrganizationName}},
		{{Type: oidOrganizationalUnit, Value: f.OrganizationUnit}},
		{{Type: oidCommonName, Value: f.CommonName}},
	}
	dirName, err := asn1.Marshal(pkix.RDNSequence{
		{{Type: oidSurname, Value: f.SerialNumber}},
		{{Type: oidUserID, Value: f.VATNumber}},
		{{Type: oidTitle, Value: f.InvoiceTypes}},
		{{Type: oidRegisteredAddr, Value: f.Location}},
		{{Type: oidBusinessCategory, Value: f.Industry}},
	})
	if err != nil {
		return nil, err
	}
	san, err := asn1.Marshal([]asn1.RawValue{{Class: asn1.ClassContextSpecific, Tag: 4, IsCompound: true, Bytes: dirName}})
	if err != nil {
		return nil, err
	}
	issuer := sandboxName(SandboxCAName)
	return signCertificate(ca.key, issuer, subject, csr.PublicKey, now, now.AddDate(years, 0, 0), []pkix.Extension{{Id: oidSubjectAltName, Value: san}})
}

// ParsePrivateKey reads a secp256k1 private key from PEM: SEC 1 ("EC PRIVATE KEY", as the
// authority's SDK and openssl ecparam write it) or PKCS #8 ("PRIVATE KEY").
func ParsePrivateKey(text string) (*secp256k1.PrivateKey, error) {
	block, _ := pem.Decode([]byte(strings.TrimSpace(text)))
	if block == nil {
		return nil, errors.New("the private key is not PEM (\"EC PRIVATE KEY\" or \"PRIVATE KEY\")")
	}
	der := block.Bytes
	switch block.Type {
	case "EC PRIVATE KEY":
	case "PRIVATE KEY":
		var p8 struct {
			Version    int
			Algorithm  pkix.AlgorithmIdentifier
			PrivateKey []byte
		}
		if _, err := asn1.Unmarshal(der, &p8); err != nil || !p8.Algorithm.Algorithm.Equal(oidECPublicKey) {
			return nil, errors.New("the PKCS #8 private key is not an EC key")
		}
		if !curveOf(p8.Algorithm.Parameters).Equal(oidSecp256k1) {
			return nil, errors.New("the private key is not on secp256k1")
		}
		der = p8.PrivateKey
	default:
		return nil, errors.New("the private key is not PEM (\"EC PRIVATE KEY\" or \"PRIVATE KEY\")")
	}
	var sec1 struct {
		Version    int
		PrivateKey []byte
		Curve      asn1.RawValue `asn1:"optional,explicit,tag:0"`
		PublicKey  asn1.RawValue `asn1:"optional,explicit,tag:1"`
	}
	if _, err := asn1.Unmarshal(der, &sec1); err != nil || sec1.Version != 1 || len(sec1.PrivateKey) == 0 || len(sec1.PrivateKey) > 32 {
		return nil, errors.New("the private key is not an SEC 1 EC private key")
	}
	if len(sec1.Curve.FullBytes) > 0 && !curveOf(asn1.RawValue{FullBytes: sec1.Curve.Bytes}).Equal(oidSecp256k1) {
		return nil, errors.New("the private key is not on secp256k1")
	}
	key := secp256k1.PrivKeyFromBytes(sec1.PrivateKey)
	if key.Key.IsZero() {
		return nil, errors.New("the private key is zero")
	}
	return key, nil
}

func curveOf(params asn1.RawValue) asn1.ObjectIdentifier {
	var curve asn1.ObjectIdentifier
	_, _ = asn1.Unmarshal(params.FullBytes, &curve)
	return curve
}

// RequiredKinds are the document kinds a unit must generate to pass its compliance checks:
// every kind of each family its invoice types declare.
func (f EGSFields) RequiredKinds() []string {
	var kinds []string
	for _, k := range Kinds {
		if (k.Standard && f.Standard()) || (!k.Standard && f.Simplified()) {
			kinds = append(kinds, k.Type)
		}
	}
	return kinds
}

// CertificateInfo is what the API shows of a certificate.
type CertificateInfo struct {
	PEM, SerialNumber, Issuer string
	NotBefore, NotAfter       time.Time
}

// DescribeCertificate reads a DER certificate this package made.
func DescribeCertificate(der []byte) (CertificateInfo, error) {
	var c certificate
	var tbs tbsCertificate
	if _, err := asn1.Unmarshal(der, &c); err != nil {
		return CertificateInfo{}, err
	}
	if _, err := asn1.Unmarshal(c.TBSCertificate.FullBytes, &tbs); err != nil {
		return CertificateInfo{}, err
	}
	return CertificateInfo{
		PEM:          string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		SerialNumber: tbs.SerialNumber.String(),
		Issuer:       tbs.Issuer.String(),
		NotBefore:    tbs.Validity.NotBefore.UTC(),
		NotAfter:     tbs.Validity.NotAfter.UTC(),
	}, nil
}
