package httpapi

import (
	"context"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/einvoice"
)

// ListInvoiceTaxDocuments implements GET /v1/invoices/{id}/tax-documents.
func (s *Server) ListInvoiceTaxDocuments(ctx context.Context, req api.ListInvoiceTaxDocumentsRequestObject) (api.ListInvoiceTaxDocumentsResponseObject, error) {
	docs, err := s.cfg.Services.Invoices.ListInvoiceTaxDocuments(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.ListInvoiceTaxDocuments200JSONResponse{Body: toAPIInvoiceTaxDocuments(docs)}, nil
}

// toAPIInvoiceTaxDocuments renders a billing invoice's tax documents: the read's answer and
// the data of its events.
func toAPIInvoiceTaxDocuments(d *core.InvoiceTaxDocuments) api.InvoiceTaxDocumentList {
	out := api.InvoiceTaxDocumentList{
		InvoiceId:         d.InvoiceID,
		TaxDocumentStatus: api.TaxDocumentStatus(d.TaxDocumentStatus),
		Failure:           null[api.TaxDocumentFailure](),
		Items:             make([]api.TaxInvoiceSummary, len(d.Documents)),
	}
	for i, t := range d.Documents {
		out.Items[i] = toAPITaxInvoiceSummary(t)
	}
	if f := d.Failure; f != nil {
		failure := api.TaxDocumentFailure{Message: f.Message, Issues: make([]api.ValidationIssue, len(f.Issues))}
		for i, is := range f.Issues {
			failure.Issues[i] = api.ValidationIssue{Code: is.Code, Severity: api.ValidationSeverity(is.Severity), Path: is.Path, Message: is.Message}
		}
		out.Failure.Set(failure)
	}
	return out
}

// toAPITaxInvoiceRequest renders the engine's request of a platform document in the
// contract's request shape, the reverse of einvoiceRequest for what the platform's requests
// use (no supplied amounts, charges or identifiers).
func toAPITaxInvoiceRequest(p *core.PlatformTaxRequest) api.SimplifiedInvoiceRequest {
	r := p.Request
	out := api.SimplifiedInvoiceRequest{
		OrganizationId:       p.OrganizationID.String(),
		TaxCalculationMode:   api.TaxCalculationMode(r.TaxCalculationMode),
		RequestedInvoiceType: api.RequestedInvoiceType(r.RequestedType),
		EgsUnitId:            nullableFrom(r.EGSUnitID),
		NoteReason:           nullableFrom(r.NoteReason),
		Seller: api.InvoiceSeller{
			LegalName: r.Seller.LegalName, VatNumber: r.Seller.VATNumber,
			CommercialRegistration: nullableFrom(r.Seller.CommercialRegistration), Address: nullableFrom(apiInvoiceAddress(r.Seller.Address)),
		},
		LineItems: make([]api.InvoiceLineItem, len(r.Lines)),
	}
	if len(r.Notes) > 0 {
		out.Notes = &r.Notes
	}
	if ref := r.BillingReference; ref != nil {
		apiRef := api.InvoiceBillingReference{Number: &ref.Number}
		if ref.IssueDate != nil {
			if d, err := time.Parse(time.DateOnly, *ref.IssueDate); err == nil {
				apiRef.IssueDate = &openapi_types.Date{Time: d}
			}
		}
		out.BillingReference.Set(apiRef)
	}
	if b := r.Buyer; b != nil {
		out.Buyer = &api.InvoiceBuyer{
			BuyerType: api.BuyerType(b.BuyerType), LegalName: nullableFrom(b.LegalName), VatNumber: nullableFrom(b.VATNumber),
			CommercialRegistration: nullableFrom(b.CommercialRegistration), Address: nullableFrom(b.Address),
			PostalAddress: nullableFrom(apiInvoiceAddress(b.PostalAddress)),
		}
	}
	if sp := r.Supply; sp != nil {
		out.Supply = &api.InvoiceSupply{}
		if d, err := time.Parse(time.DateOnly, sp.SupplyDate); err == nil {
			out.Supply.SupplyDate = openapi_types.Date{Time: d}
		}
		if sp.EndDate != nil {
			if d, err := time.Parse(time.DateOnly, *sp.EndDate); err == nil {
				out.Supply.EndDate.Set(openapi_types.Date{Time: d})
			}
		}
	}
	for i, l := range r.Lines {
		out.LineItems[i] = api.InvoiceLineItem{
			LineId: l.ID, NameEn: l.NameEn, Quantity: l.Quantity, UnitCode: api.UnitCode(l.UnitCode), UnitPrice: l.UnitPrice,
			TaxCategory: api.TaxCategory(l.TaxCategory), TaxRate: l.TaxRate,
		}
		if len(l.Discounts) > 0 {
			discounts := make([]api.InvoiceAllowanceCharge, len(l.Discounts))
			for j, d := range l.Discounts {
				discounts[j] = api.InvoiceAllowanceCharge{Amount: d.Amount, Reason: d.Reason, ReasonCode: d.ReasonCode}
			}
			out.LineItems[i].Discounts = &discounts
		}
	}
	return out
}

// apiInvoiceAddress renders a postal address; nil stays nil.
func apiInvoiceAddress(a *einvoice.Address) *api.InvoiceAddress {
	if a == nil {
		return nil
	}
	return &api.InvoiceAddress{
		StreetName: a.StreetName, AdditionalStreetName: nullableFrom(a.AdditionalStreetName),
		BuildingNumber: a.BuildingNumber, AdditionalNumber: nullableFrom(a.AdditionalNumber),
		District: a.District, City: a.City, PostalCode: a.PostalCode, Province: nullableFrom(a.Province),
		CountryCode: a.CountryCode,
	}
}

// RetryInvoiceTaxDocuments implements POST /v1/invoices/{id}/tax-documents/retry.
func (s *Server) RetryInvoiceTaxDocuments(ctx context.Context, req api.RetryInvoiceTaxDocumentsRequestObject) (api.RetryInvoiceTaxDocumentsResponseObject, error) {
	docs, err := s.cfg.Services.Invoices.RetryInvoiceTaxDocuments(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.RetryInvoiceTaxDocuments200JSONResponse{Body: toAPIInvoiceTaxDocuments(docs)}, nil
}
