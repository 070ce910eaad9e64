package core

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/einvoice"
)

// TaxInvoice is a stored simplified tax invoice (sandbox): its place in the chain of its
// organization and EGS unit, the generated document and the request it came from.
type TaxInvoice struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	EGSUnitID      string
	Status         string // einvoice.StatusGenerated
	RequestedType  string
	Number         string
	UUID           uuid.UUID
	ICV            int64
	PIH            string
	IssuedAt       time.Time
	CreatedAt      time.Time
	Invoice        einvoice.Invoice
	// Request is the request body as received (JSON), returned when the invoice is read back.
	Request []byte
}

// TaxInvoiceGenerate is the input of TaxInvoiceService.GenerateSimplifiedInvoice.
type TaxInvoiceGenerate struct {
	// OrganizationID is the organization_id of the request, not yet checked.
	OrganizationID string
	Request        einvoice.Request
	// RequestJSON is the request body to store with the invoice.
	RequestJSON []byte
}

// TaxInvoiceService generates and reads simplified tax invoices.
type TaxInvoiceService interface {
	// GenerateSimplifiedInvoice checks, computes, renders, chains, stamps and stores an
	// invoice, and records one einvoice usage unit. Business-rule findings are part of the
	// result, not errors. Errors: EForbidden when an organization principal names another
	// organization; ENotFound when the operator names one that does not exist;
	// EUnprocessable when an amount exceeds the supported range.
	GenerateSimplifiedInvoice(ctx context.Context, in TaxInvoiceGenerate) (*TaxInvoice, error)
	// FindTaxInvoiceByID returns an invoice, or ENotFound when it does not exist or belongs
	// to another organization than the principal's.
	FindTaxInvoiceByID(ctx context.Context, id uuid.UUID) (*TaxInvoice, error)
}
