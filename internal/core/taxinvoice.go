package core

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/einvoice"
)

// TaxInvoice is a stored simplified tax invoice (sandbox): its place in the chain of its
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
	// Request is the request body as received (JSON), returned when the invoice is read back.
	Request []byte
}

// TaxInvoiceGenerate is the input of TaxInvoiceService.GenerateSimplifiedInvoice.
type TaxInvoiceGenerate struct {
	// OrganizationID is the organization_id of the request: one the caller may act for
	// (Principal.ActsFor).
	OrganizationID uuid.UUID
	Request        einvoice.Request
	// RequestJSON is the request body to store with the invoice.
	RequestJSON []byte
}

// TaxInvoiceService generates and reads simplified tax invoices.
type TaxInvoiceService interface {
	// GenerateSimplifiedInvoice checks, computes, renders, chains, stamps and stores an
	// invoice, and records one einvoice usage unit. The seller is the organization, or the
	// connected business of the principal's credential, each with its own chain per EGS
	// unit. Business-rule warnings are part of the result. Errors: EForbidden when an
	// organization principal names another organization; ENotFound when the operator names
	// one that does not exist; EUnprocessable when an amount exceeds the supported range or
	// the document has an error-severity issue (each one a field error; nothing is stored
	// and no counter value is used).
	GenerateSimplifiedInvoice(ctx context.Context, in TaxInvoiceGenerate) (*TaxInvoice, error)
	// FindTaxInvoiceByID returns an invoice, or ENotFound when it does not exist, belongs
	// to another organization than the principal's, or the principal is a connected
	// business and the invoice is not that business's.
	FindTaxInvoiceByID(ctx context.Context, id uuid.UUID) (*TaxInvoice, error)
}
