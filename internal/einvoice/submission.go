package einvoice

import (
	"errors"
	"fmt"
	"time"

	"github.com/beevik/etree"
)

// Where a document stands with the (simulated) authority: not submitted yet, then reported or
// not (simplified documents), cleared or not (standard ones). The authority's words.
const (
	SubmissionNotSubmitted = "NOT_SUBMITTED"
	SubmissionReported     = "REPORTED"
	SubmissionNotReported  = "NOT_REPORTED"
	SubmissionCleared      = "CLEARED"
	SubmissionNotCleared   = "NOT_CLEARED"
)

// How a document is submitted: simplified documents are reported, standard ones cleared.
const (
	ModeReporting = "reporting"
	ModeClearance = "clearance"
)

// CategoryReporting is the category of the reporting deadline's finding.
const CategoryReporting = "reporting"

// RuleLateReporting is the warning of a simplified document reported after ReportingDeadline.
const RuleLateReporting = "SBX-RPT-01"

// ReportingDeadline is how long after its issue the authority expects a simplified document
// to be reported.
const ReportingDeadline = 24 * time.Hour

// SubmissionMode is how a document of kind k is submitted.
func SubmissionMode(k Kind) string {
	if k.Standard {
		return ModeClearance
	}
	return ModeReporting
}

// SubmissionOutcome is the authority's verdict on a document of kind k whose validation gave
// r: any error rejects it.
func SubmissionOutcome(k Kind, r Report) string {
	rejected := r.Verdict() == VerdictError
	switch {
	case k.Standard && rejected:
		return SubmissionNotCleared
	case k.Standard:
		return SubmissionCleared
	case rejected:
		return SubmissionNotReported
	}
	return SubmissionReported
}

// LateReporting is the warning of a simplified document submitted more than
// ReportingDeadline after its issue; ok is false when there is none (in time, or a standard
// document, which is cleared before it is shared rather than reported after).
func LateReporting(k Kind, issuedAt, submittedAt time.Time) (r Result, ok bool) {
	late := submittedAt.Sub(issuedAt)
	if k.Standard || late <= ReportingDeadline {
		return Result{}, false
	}
	return Result{
		Type: ResultWarning, Code: RuleLateReporting, Category: CategoryReporting,
		Message: fmt.Sprintf("The document was issued at %s and reported %d hours later; simplified documents are reported within %d hours of their issue.",
			issuedAt.UTC().Format(time.RFC3339), int(late.Hours()), int(ReportingDeadline.Hours())),
	}, true
}

// Restamp signs the stamped document doc again with key, as signed at signedAt: the XAdES
// signature (signed properties, signature value, certificate) and the QR payload's
// signature, public key and certificate signature (tags 7 to 9) are renewed; everything the
// invoice hash covers is unchanged. A stamp without the XAdES structure (a document stored
// before it) is replaced by one that has it. It returns the document and its QR payload.
func Restamp(doc string, key *SandboxKey, signedAt time.Time) (xml, qr string, err error) {
	tree := etree.NewDocument()
	if err := tree.ReadFromString(doc); err != nil {
		return "", "", err
	}
	digest, hash, err := InvoiceHash(tree)
	if err != nil {
		return "", "", err
	}
	root := tree.Root()
	ext := root.SelectElement("ext:UBLExtensions")
	qrValue := root.FindElement("./cac:AdditionalDocumentReference[cbc:ID='QR']/cac:Attachment/cbc:EmbeddedDocumentBinaryObject")
	if ext == nil || ext.FindElement(".//ds:Signature") == nil || qrValue == nil {
		return "", "", errors.New("einvoice: the document has no stamp to renew")
	}
	slots, ok := findSignatureSlots(ext)
	if !ok {
		fresh, freshSlots := signatureExtension()
		root.InsertChildAt(ext.Index(), fresh)
		root.RemoveChild(ext)
		slots = freshSlots
	}
	tags, err := DecodeQR(qrValue.Text())
	if err != nil {
		return "", "", fmt.Errorf("einvoice: the document's QR payload: %w", err)
	}
	signature, err := sign(slots, key, signedAt, digest, hash)
	if err != nil {
		return "", "", err
	}
	parts, err := key.stampingParts()
	if err != nil {
		return "", "", err
	}
	qr, _ = QRFields{
		SellerName: string(tags[1]), VATNumber: string(tags[2]), Timestamp: string(tags[3]), TotalWithVAT: string(tags[4]),
		VATTotal: string(tags[5]), InvoiceHash: string(tags[6]),
		Signature: signature, PublicKey: parts.publicKeyInfo, CertificateSignature: parts.certificateSignature,
	}.Encode()
	qrValue.SetText(qr)
	xml, err = tree.WriteToString()
	return xml, qr, err
}
