package core

import (
	"context"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/einvoice"
)

// What a tax invoice validation read.
const (
	ValidationInputJSON = "json"
	ValidationInputXML  = "xml"
)

// TaxInvoiceValidation is the outcome of validating an invoice request or document: nothing
// was issued, stored or reported.
type TaxInvoiceValidation struct {
	Input  string // ValidationInputJSON or ValidationInputXML
	Report einvoice.Report
}

// TaxInvoiceValidationService validates tax invoices without generating them. Validation is
// not usage: it is neither counted nor subject to spend controls, and changes nothing.
type TaxInvoiceValidationService interface {
	// ValidateTaxInvoiceRequest checks a request of any kind as generation would: the kind's
	// rules (a standard document's buyer, a note's reference and reason), and the invoice a
	// note names by id (original) resolved as generation resolves it, a reference generation
	// would refuse being an error result. Errors: EForbidden when an organization principal
	// names another organization; ENotFound when the operator names one that does not exist;
	// the entitlement refusals of the einvoice product.
	ValidateTaxInvoiceRequest(ctx context.Context, organizationID uuid.UUID, req einvoice.Request, original *uuid.UUID) (*TaxInvoiceValidation, error)
	// ValidateTaxInvoiceXML checks a UBL invoice document of any kind. An organization
	// principal's documents are compared with its sandbox certificate and gated by its
	// entitlements; the operator's are checked with the certificate they embed. Errors:
	// EValidation when doc is not a readable XML document (einvoice.ErrNotXML); the
	// entitlement refusals.
	ValidateTaxInvoiceXML(ctx context.Context, doc []byte) (*TaxInvoiceValidation, error)
}
