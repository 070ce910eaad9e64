package core

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/einvoice"
)

// TaxInvoice is a stored tax document (sandbox) of any kind (einvoice.Kinds): its place in the chain of its
// seller and EGS unit, the generated document and the request it came from. The seller is
// the organization, or the connected business whose credential generated it.
type TaxInvoice struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	// ConnectedBusinessID is the seller when a connected business generated the invoice; nil
	// for the organization's own.
	ConnectedBusinessID *uuid.UUID
	EGSUnitID           string
	Status              string // einvoice.StatusGenerated
	RequestedType       string
	Number              string
	UUID                uuid.UUID
	ICV                 int64
	PIH                 string
	IssuedAt            time.Time
	CreatedAt           time.Time
	Invoice             einvoice.Invoice
	// BillingReferenceNumber is the number of the invoice a credit or debit note corrects.
	BillingReferenceNumber *string
	// Request is the request body as received (JSON), returned when the invoice is read back.
	Request []byte
}

// TaxInvoiceGenerate is the input of TaxInvoiceService.GenerateTaxInvoice.
type TaxInvoiceGenerate struct {
	// OrganizationID is the organization_id of the request: one the caller may act for
	// (Principal.ActsFor).
	OrganizationID uuid.UUID
	// Standard is the family the operation generates: standard (B2B) kinds, or simplified.
	// A request naming a kind of the other family is EUnprocessable.
	Standard bool
	Request  einvoice.Request
	// Original is the invoice a credit or debit note names by id (billing_reference.invoice_id);
	// the service resolves it into Request.BillingReference. Nil when the request gives the
	// original's number instead, or names none.
	Original *uuid.UUID
	// RequestJSON is the request body to store with the invoice.
	RequestJSON []byte
}

// TaxInvoiceFilter selects documents for TaxInvoiceService.ListTaxInvoices; nil fields do
// not filter. Issue dates are UTC calendar dates, both ends inclusive.
type TaxInvoiceFilter struct {
	OrganizationID       uuid.UUID // required; one the caller may act for
	Kind                 *string   // an einvoice kind (requested_invoice_type)
	IssuedFrom, IssuedTo *time.Time
	ICVFrom, ICVTo       *int64
	SubmissionStatus     *string // an einvoice.Submission… status
	Cursor               *string // the next_cursor of the previous page
	Limit                int
}

// TaxInvoiceService generates and reads tax documents of every kind.
type TaxInvoiceService interface {
	// GenerateTaxInvoice checks, computes, renders, chains, stamps and stores an
	// invoice, and records one einvoice usage unit. The seller is the organization, or the
	// connected business of the principal's credential, each with its own chain per EGS
	// unit. Business-rule warnings are part of the result. Errors: EForbidden when an
	// organization principal names another organization; ENotFound when the operator names
	// one that does not exist; EUnprocessable when an amount exceeds the supported range or
	// the document has an error-severity issue (each one a field error; nothing is stored
	// and no counter value is used), when the kind is of the other family, or when a note
	// names an original that is not an invoice of the same family and seller visible to the
	// principal (an unknown id and another organization's invoice answer alike).
	GenerateTaxInvoice(ctx context.Context, in TaxInvoiceGenerate) (*TaxInvoice, error)
	// ListTaxInvoices returns a page of the archive, newest first, and the cursor of the next
	// page: the organization's documents, only a connected business's own for its credential.
	// EForbidden when an organization principal names another organization.
	ListTaxInvoices(ctx context.Context, f TaxInvoiceFilter) ([]*TaxInvoice, *string, error)
	// SubmitTaxInvoice reports (simplified) or clears (standard) one of the principal
	// organization's documents with the sandbox authority: the stored XML is validated as
	// TaxInvoiceValidationService validates XML, a simplified document submitted late gets the
	// reporting warning, any error rejects it, and a cleared document is stamped again. The
	// outcome, whatever it is, is stored, audited, published and counted as einvoice usage.
	// Errors: EForbidden for the operator (submission is the taxpayer's); the entitlement
	// refusals and the spend limit (429), before anything is read; ENotFound for an unknown id or
	// another organization's document; EInvalidTransition when the document was submitted
	// already.
	SubmitTaxInvoice(ctx context.Context, id uuid.UUID) (*TaxInvoiceSubmission, error)
	// FindTaxInvoiceSubmission returns the submission of a document, ENotFound when the
	// document is not submitted or not visible to the principal (as FindTaxInvoiceByID).
	FindTaxInvoiceSubmission(ctx context.Context, id uuid.UUID) (*TaxInvoiceSubmission, error)
	// FindTaxInvoiceByID returns an invoice, or ENotFound when it does not exist, belongs
	// to another organization than the principal's, or the principal is a connected
	// business and the invoice is not that business's.
	FindTaxInvoiceByID(ctx context.Context, id uuid.UUID) (*TaxInvoice, error)
}

// TaxInvoiceSubmission is the sandbox authority's answer to the submission of a document.
type TaxInvoiceSubmission struct {
	InvoiceID      uuid.UUID
	OrganizationID uuid.UUID
	Kind           einvoice.Kind
	Status         string // einvoice.SubmissionReported, …NotReported, …Cleared, …NotCleared
	Results        []einvoice.Result
	// ClearedXML is the document stamped by the sandbox authority and ClearedQR its QR
	// payload; nil unless cleared.
	ClearedXML  *string
	ClearedQR   *string
	SubmittedAt time.Time
}
