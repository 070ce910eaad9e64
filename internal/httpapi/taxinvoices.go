package httpapi

import (
	"context"
	"encoding/json"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/einvoice"
)

// GenerateSimplifiedInvoice implements POST /v1/taxauth/invoices/generate/simplified.
func (s *Server) GenerateSimplifiedInvoice(ctx context.Context, req api.GenerateSimplifiedInvoiceRequestObject) (api.GenerateSimplifiedInvoiceResponseObject, error) {
	body, err := json.Marshal(req.Body)
	if err != nil {
		return nil, err
	}
	org, err := organizationNamed(ctx, req.Body.OrganizationId, "/organization_id")
	if err != nil {
		return nil, err
	}
	inv, err := s.cfg.Services.TaxInvoices.GenerateSimplifiedInvoice(ctx, core.TaxInvoiceGenerate{
		OrganizationID: org,
		Request:        einvoiceRequest(req.Body),
		RequestJSON:    body,
	})
	if err != nil {
		return nil, err
	}
	r := toAPITaxInvoice(inv)
	return api.GenerateSimplifiedInvoice201JSONResponse{Body: api.SimplifiedInvoiceResult{
		Invoice: r.Invoice, Classification: r.Classification, Validation: r.Validation, TaxDiscrepancies: r.TaxDiscrepancies,
		Xml: r.Xml, Qr: r.Qr, Sandbox: r.Sandbox, ReportedToAuthority: r.ReportedToAuthority, Notice: r.Notice,
	}}, nil
}

// GetTaxInvoice implements GET /v1/taxauth/invoices/{id}.
func (s *Server) GetTaxInvoice(ctx context.Context, req api.GetTaxInvoiceRequestObject) (api.GetTaxInvoiceResponseObject, error) {
	inv, err := s.cfg.Services.TaxInvoices.FindTaxInvoiceByID(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.GetTaxInvoice200JSONResponse{Body: toAPITaxInvoice(inv)}, nil
}

// einvoiceRequest converts the contract's request; absent and null optional fields both
// become nil.
func einvoiceRequest(b *api.SimplifiedInvoiceRequest) einvoice.Request {
	r := einvoice.Request{
		TaxCalculationMode: string(b.TaxCalculationMode),
		RequestedType:      string(b.RequestedInvoiceType),
		EGSUnitID:          valueOf(b.EgsUnitId),
		Seller: einvoice.Seller{
			LegalName:              b.Seller.LegalName,
			VATNumber:              b.Seller.VatNumber,
			CommercialRegistration: valueOf(b.Seller.CommercialRegistration),
			Branch:                 b.Seller.Branch,
		},
		Lines: make([]einvoice.Line, len(b.LineItems)),
	}
	if b.Notes != nil {
		r.Notes = *b.Notes
	}
	if a := valueOf(b.Seller.Address); a != nil {
		r.Seller.Address = &einvoice.Address{
			StreetName: a.StreetName, AdditionalStreetName: valueOf(a.AdditionalStreetName),
			BuildingNumber: a.BuildingNumber, AdditionalNumber: valueOf(a.AdditionalNumber),
			District: a.District, City: a.City, PostalCode: a.PostalCode, Province: valueOf(a.Province),
			CountryCode: a.CountryCode,
		}
	}
	if ids := b.Seller.AdditionalIdentifiers; ids != nil {
		for _, id := range *ids {
			r.Seller.Identifiers = append(r.Seller.Identifiers, einvoice.Identifier{Scheme: string(id.Scheme), Value: id.Value})
		}
	}
	if by := b.Buyer; by != nil {
		r.Buyer = &einvoice.Buyer{
			LegalName: valueOf(by.LegalName), VATNumber: valueOf(by.VatNumber),
			CommercialRegistration: valueOf(by.CommercialRegistration), Address: valueOf(by.Address),
			BuyerType: string(by.BuyerType),
		}
		if ids := by.AdditionalIdentifiers; ids != nil {
			for _, id := range *ids {
				r.Buyer.Identifiers = append(r.Buyer.Identifiers, einvoice.Identifier{Scheme: string(id.Scheme), Value: id.Value})
			}
		}
	}
	if sp := b.Supply; sp != nil {
		r.Supply = &einvoice.Supply{
			SupplyDate:             sp.SupplyDate.String(),
			PurchaseOrderReference: valueOf(sp.PurchaseOrderReference),
			ContractReference:      valueOf(sp.ContractReference),
			DeliveryReference:      valueOf(sp.DeliveryReference),
			PaymentTerms:           valueOf(sp.PaymentTerms),
		}
		if end := valueOf(sp.EndDate); end != nil {
			e := end.String()
			r.Supply.EndDate = &e
		}
		if sp.PaymentMethod != nil {
			m := string(*sp.PaymentMethod)
			r.Supply.PaymentMethod = &m
		}
	}
	for i, l := range b.LineItems {
		r.Lines[i] = einvoice.Line{
			ID: l.LineId, NameAr: l.NameAr, NameEn: l.NameEn, Description: l.Description,
			Quantity: l.Quantity, UnitCode: string(l.UnitCode), UnitPrice: l.UnitPrice,
			Discounts: allowanceCharges(l.Discounts), Charges: allowanceCharges(l.Charges),
			TaxCategory: string(l.TaxCategory), TaxRate: l.TaxRate, TaxExemptionReason: valueOf(l.TaxExemptionReason),
		}
		if sa := l.SuppliedAmounts; sa != nil {
			r.Lines[i].Supplied = &einvoice.SuppliedLine{NetAmount: sa.NetAmount, VATAmount: sa.VatAmount, AmountWithVAT: sa.AmountWithVat}
		}
	}
	if st := b.SuppliedTotals; st != nil {
		r.SuppliedTotals = &einvoice.SuppliedTotals{
			LineExtensionAmount: st.LineExtensionAmount, TaxExclusiveAmount: st.TaxExclusiveAmount, VATAmount: st.VatAmount,
			TaxInclusiveAmount: st.TaxInclusiveAmount, PayableAmount: st.PayableAmount,
		}
	}
	return r
}

func allowanceCharges(in *[]api.InvoiceAllowanceCharge) []einvoice.AllowanceCharge {
	if in == nil {
		return nil
	}
	out := make([]einvoice.AllowanceCharge, len(*in))
	for i, a := range *in {
		out[i] = einvoice.AllowanceCharge{Amount: a.Amount, Reason: a.Reason, ReasonCode: a.ReasonCode}
	}
	return out
}

func toAPITaxInvoice(t *core.TaxInvoice) api.TaxInvoice {
	inv := t.Invoice
	totals := inv.Totals
	out := api.TaxInvoice{
		Invoice: api.GeneratedInvoice{
			Id:             t.ID,
			OrganizationId: t.OrganizationID.String(),
			EgsUnitId:      nullableFrom(&t.EGSUnitID),
			Status:         t.Status,
			Identity: api.InvoiceIdentity{
				InvoiceType: inv.Type,
				TypeCode:    einvoice.TypeCode,
				TypeName:    einvoice.TypeName,
				Number:      t.Number,
				Uuid:        t.UUID,
				Icv:         t.ICV,
				Pih:         t.PIH,
				InvoiceHash: inv.Hash,
				IssueTime:   t.IssuedAt.UTC().Format("15:04:05"),
			},
			Totals: api.InvoiceTotals{
				Currency:             totals.Currency,
				LineExtensionAmount:  totals.LineExtension,
				AllowanceTotalAmount: totals.AllowanceTotal,
				ChargeTotalAmount:    totals.ChargeTotal,
				TaxExclusiveAmount:   totals.TaxExclusive,
				VatAmount:            totals.VAT,
				TaxInclusiveAmount:   totals.TaxInclusive,
				PayableAmount:        totals.Payable,
				TaxSubtotals:         make([]api.InvoiceTaxSubtotal, len(totals.Subtotals)),
				Lines:                make([]api.InvoiceLineTotals, len(totals.Lines)),
			},
			CreatedAt: t.CreatedAt,
		},
		Classification: api.InvoiceClassification{
			RequestedType: api.RequestedInvoiceType(t.RequestedType),
			SelectedType:  inv.Type,
		},
		Validation: api.InvoiceValidation{InternalValidation: api.InternalValidation{
			Valid:  inv.Valid(),
			Issues: make([]api.ValidationIssue, len(inv.Issues)),
		}},
		TaxDiscrepancies:    make([]api.TaxDiscrepancy, len(inv.Discrepancies)),
		Xml:                 api.InvoiceXml{Content: inv.XML, MappingReport: make([]api.XmlMapping, len(inv.Mapping))},
		Qr:                  api.InvoiceQr{Payload: inv.QR},
		Sandbox:             true,
		ReportedToAuthority: false,
		Notice:              einvoice.Notice,
	}
	out.Invoice.Identity.IssueDate.Time = t.IssuedAt.UTC()
	for i, s := range totals.Subtotals {
		out.Invoice.Totals.TaxSubtotals[i] = api.InvoiceTaxSubtotal{
			TaxCategory: api.TaxCategory(s.Category), TaxRate: s.Rate, TaxableAmount: s.Taxable, TaxAmount: s.Tax,
			ExemptionReasonCode: nullableFrom(s.ExemptionCode), ExemptionReason: nullableFrom(s.ExemptionText),
		}
	}
	for i, l := range totals.Lines {
		out.Invoice.Totals.Lines[i] = api.InvoiceLineTotals{LineId: l.LineID, NetAmount: l.Net, VatAmount: l.VAT, AmountWithVat: l.WithVAT}
	}
	for i, is := range inv.Issues {
		out.Validation.InternalValidation.Issues[i] = api.ValidationIssue{
			Code: is.Code, Severity: api.ValidationSeverity(is.Severity), Path: is.Path, Message: is.Message,
		}
	}
	for i, d := range inv.Discrepancies {
		out.TaxDiscrepancies[i] = api.TaxDiscrepancy{Path: d.Path, Field: d.Field, Supplied: d.Supplied, Computed: d.Computed}
	}
	for i, m := range inv.Mapping {
		out.Xml.MappingReport[i] = api.XmlMapping{Field: m.Field, Xpath: m.XPath}
	}
	if len(t.Request) > 0 {
		// The stored request was validated by the contract when it arrived.
		_ = json.Unmarshal(t.Request, &out.Request)
	}
	return out
}
