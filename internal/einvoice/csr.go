package einvoice

import (
	"crypto/sha256"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
)

// Object identifiers of the tax authority's onboarding CSR: the subject names the unit
// (CN, O, OU, C) and the subject alternative name's directory name carries the onboarding
// fields (SN serial number, UID VAT number, title invoice types, registeredAddress location,
// businessCategory industry), as the authority's SDK writes them from its CSR config.
var (
	oidExtensionRequest = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 14}
	oidSubjectAltName   = asn1.ObjectIdentifier{2, 5, 29, 17}
	oidSurname          = asn1.ObjectIdentifier{2, 5, 4, 4} // the SDK's "SN": the EGS serial number
	oidUserID           = asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 1}
	oidTitle            = asn1.ObjectIdentifier{2, 5, 4, 12}
	oidRegisteredAddr   = asn1.ObjectIdentifier{2, 5, 4, 26}
	oidBusinessCategory = asn1.ObjectIdentifier{2, 5, 4, 15}
)

// EGSFields are the onboarding fields of an EGS unit's certificate signing request.
type EGSFields struct {
	CommonName       string // CN
	SerialNumber     string // SN: 1-solution name|2-model|3-serial
	VATNumber        string // UID: the organization identifier
	OrganizationUnit string // OU: branch, or the member's TIN in a VAT group
	OrganizationName string // O
	Country          string // C
	InvoiceTypes     string // title: four flags, standard then simplified, then two reserved
	Location         string // registeredAddress
	Industry         string // businessCategory
}

// Standard and Simplified report whether the unit's flags declare that family.
func (f EGSFields) Standard() bool   { return len(f.InvoiceTypes) == 4 && f.InvoiceTypes[0] == '1' }
func (f EGSFields) Simplified() bool { return len(f.InvoiceTypes) == 4 && f.InvoiceTypes[1] == '1' }

// CSRProblem is one field of a CSR that is missing or wrong.
type CSRProblem struct {
	Field   string // e.g. "serial_number", named as in the API's EgsUnit
	Message string
}

// CSR is a checked certificate signing request: its fields, its public key and its DER.
type CSR struct {
	Fields    EGSFields
	PublicKey *secp256k1.PublicKey
	DER       []byte
}

// maxCSRSize bounds the PEM a caller may send; a CSR of the authority's shape is about 1 kB.
const maxCSRSize = 16 << 10

// ParseCSR reads a PEM CSR and checks it field by field. It returns every problem found (nil
// CSR then), never panics on any input, and accepts only secp256k1 keys and a valid
// ECDSA-with-SHA-256 self-signature.
func ParseCSR(text string) (*CSR, []CSRProblem) {
	if len(text) > maxCSRSize {
		return nil, []CSRProblem{{"csr", fmt.Sprintf("The CSR is longer than %d bytes.", maxCSRSize)}}
	}
	block, _ := pem.Decode([]byte(strings.TrimSpace(text)))
	if block == nil || (block.Type != "CERTIFICATE REQUEST" && block.Type != "NEW CERTIFICATE REQUEST") {
		return nil, []CSRProblem{{"csr", "The CSR is not PEM with a \"CERTIFICATE REQUEST\" block."}}
	}
	var req certificationRequest
	if rest, err := asn1.Unmarshal(block.Bytes, &req); err != nil || len(rest) > 0 {
		return nil, []CSRProblem{{"csr", "The CSR's DER is not a PKCS #10 certification request."}}
	}
	var info certificationRequestInfo
	if rest, err := asn1.Unmarshal(req.Info.FullBytes, &info); err != nil || len(rest) > 0 {
		return nil, []CSRProblem{{"csr", "The CSR's request info cannot be read."}}
	}
	var problems []CSRProblem
	pub, problem := csrPublicKey(info.PublicKey)
	if problem != "" {
		problems = append(problems, CSRProblem{"public_key", problem})
	} else if !verifiesCSR(req, pub) {
		problems = append(problems, CSRProblem{"signature", "The CSR's signature does not verify with its public key (ECDSA with SHA-256)."})
	}
	var subject pkix.RDNSequence
	if rest, err := asn1.Unmarshal(info.Subject.FullBytes, &subject); err != nil || len(rest) > 0 {
		return nil, append(problems, CSRProblem{"subject", "The CSR's subject is not an X.501 name."})
	}
	alt, problem := csrAltName(info.Attributes)
	if problem != "" {
		problems = append(problems, CSRProblem{"subject_alternative_name", problem})
	}
	fields := EGSFields{
		CommonName:       nameValue(subject, oidCommonName),
		OrganizationName: nameValue(subject, oidOrganization),
		OrganizationUnit: nameValue(subject, oidOrganizationalUnit),
		Country:          nameValue(subject, oidCountry),
		SerialNumber:     nameValue(alt, oidSurname),
		VATNumber:        nameValue(alt, oidUserID),
		InvoiceTypes:     nameValue(alt, oidTitle),
		Location:         nameValue(alt, oidRegisteredAddr),
		Industry:         nameValue(alt, oidBusinessCategory),
	}
	if problems = append(problems, CheckEGSFields(fields)...); len(problems) > 0 {
		return nil, problems
	}
	return &CSR{Fields: fields, PublicKey: pub, DER: block.Bytes}, nil
}

type certificationRequest struct {
	Info               asn1.RawValue
	SignatureAlgorithm pkix.AlgorithmIdentifier
	Signature          asn1.BitString
}

type certificationRequestInfo struct {
	Version    int
	Subject    asn1.RawValue
	PublicKey  asn1.RawValue
	Attributes []asn1.RawValue `asn1:"optional,tag:0"`
}

type csrAttribute struct {
	Type   asn1.ObjectIdentifier
	Values []asn1.RawValue `asn1:"set"`
}

func csrPublicKey(raw asn1.RawValue) (*secp256k1.PublicKey, string) {
	var spki subjectPublicKeyInfo
	var curve asn1.ObjectIdentifier
	if _, err := asn1.Unmarshal(raw.FullBytes, &spki); err != nil || !spki.Algorithm.Algorithm.Equal(oidECPublicKey) {
		return nil, "The public key is not an EC key; the authority requires secp256k1."
	}
	if _, err := asn1.Unmarshal(spki.Algorithm.Parameters.FullBytes, &curve); err != nil || !curve.Equal(oidSecp256k1) {
		return nil, "The public key is not on the secp256k1 curve, which the authority requires."
	}
	pub, err := secp256k1.ParsePubKey(spki.PublicKey.Bytes)
	if err != nil {
		return nil, "The public key is not a point on secp256k1."
	}
	return pub, ""
}

func verifiesCSR(req certificationRequest, pub *secp256k1.PublicKey) bool {
	if !req.SignatureAlgorithm.Algorithm.Equal(oidECDSAWithSHA256) {
		return false
	}
	sig, err := ecdsa.ParseDERSignature(req.Signature.Bytes)
	if err != nil {
		return false
	}
	digest := sha256.Sum256(req.Info.FullBytes)
	return sig.Verify(digest[:], pub)
}

// csrAltName finds the directory name of the subject alternative name the CSR requests.
func csrAltName(attributes []asn1.RawValue) (pkix.RDNSequence, string) {
	for _, raw := range attributes {
		var attr csrAttribute
		if _, err := asn1.Unmarshal(raw.FullBytes, &attr); err != nil || !attr.Type.Equal(oidExtensionRequest) || len(attr.Values) == 0 {
			continue
		}
		var exts []pkix.Extension
		if _, err := asn1.Unmarshal(attr.Values[0].FullBytes, &exts); err != nil {
			return nil, "The CSR's extension request cannot be read."
		}
		for _, ext := range exts {
			if ext.Id.Equal(oidSubjectAltName) {
				return directoryName(ext.Value)
			}
		}
	}
	return nil, "The CSR has no subject alternative name: it carries the serial number, VAT number, invoice types, location and industry."
}

func directoryName(value []byte) (pkix.RDNSequence, string) {
	var names []asn1.RawValue
	if _, err := asn1.Unmarshal(value, &names); err != nil {
		return nil, "The subject alternative name cannot be read."
	}
	for _, n := range names {
		if n.Class != asn1.ClassContextSpecific || n.Tag != 4 {
			continue
		}
		var dn pkix.RDNSequence
		if _, err := asn1.Unmarshal(n.Bytes, &dn); err != nil {
			return nil, "The subject alternative name's directory name cannot be read."
		}
		return dn, ""
	}
	return nil, "The subject alternative name has no directory name with the onboarding fields."
}

// nameValue is the first string value of the attribute oid in name ("" if none).
func nameValue(name pkix.RDNSequence, oid asn1.ObjectIdentifier) string {
	for _, rdn := range name {
		for _, atv := range rdn {
			if s, ok := atv.Value.(string); ok && atv.Type.Equal(oid) {
				return s
			}
		}
	}
	return ""
}

var (
	egsSerialPattern  = regexp.MustCompile(`^1-[^|]{1,80}\|2-[^|]{1,80}\|3-[^|]{1,80}$`)
	tinPattern        = regexp.MustCompile(`^[0-9]{10}$`)
	invoiceTypesFlags = regexp.MustCompile(`^[01]{2}00$`)
	countryPattern    = regexp.MustCompile(`^[A-Z]{2}$`)
)

// maxEGSField bounds every text field of the CSR.
const maxEGSField = 200

// CheckEGSFields checks the onboarding fields as the authority's onboarding does and returns
// one problem per wrong field.
func CheckEGSFields(f EGSFields) []CSRProblem {
	var problems []CSRProblem
	check := func(field, value string, ok bool, message string) {
		switch {
		case value == "":
			problems = append(problems, CSRProblem{field, "The CSR has no " + strings.ReplaceAll(field, "_", " ") + "."})
		case !utf8.ValidString(value) || utf8.RuneCountInString(value) > maxEGSField:
			problems = append(problems, CSRProblem{field, fmt.Sprintf("The %s must be text of at most %d characters.", strings.ReplaceAll(field, "_", " "), maxEGSField)})
		case !ok:
			problems = append(problems, CSRProblem{field, message})
		}
	}
	check("common_name", f.CommonName, true, "")
	check("serial_number", f.SerialNumber, egsSerialPattern.MatchString(f.SerialNumber),
		"The serial number (SN) must read 1-<solution name>|2-<model or version>|3-<device serial>, e.g. 1-TST|2-TST|3-ed22f1d8-e6a2-1118-9b58-d9a8f11e445f.")
	check("vat_number", f.VATNumber, vatNumberPattern.MatchString(f.VATNumber),
		"The organization identifier (UID) must be the 15-digit VAT number, starting and ending with 3.")
	// In a VAT group (the VAT number's 11th digit is 1) the unit names the member's TIN.
	groupMember := len(f.VATNumber) == 15 && f.VATNumber[10] == '1'
	check("organization_unit_name", f.OrganizationUnit, !groupMember || tinPattern.MatchString(f.OrganizationUnit),
		"A VAT group's unit (OU) must be the member's 10-digit tax identification number.")
	check("organization_name", f.OrganizationName, true, "")
	check("country", f.Country, countryPattern.MatchString(f.Country), "The country (C) must be a two-letter ISO 3166 code such as SA.")
	check("invoice_types", f.InvoiceTypes, invoiceTypesFlags.MatchString(f.InvoiceTypes) && f.InvoiceTypes != "0000",
		"The invoice types (title) are four flags: standard, simplified, then two reserved zeros, e.g. 1100; at least one family must be 1.")
	check("location", f.Location, true, "")
	check("industry", f.Industry, true, "")
	return problems
}
