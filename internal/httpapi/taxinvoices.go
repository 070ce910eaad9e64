package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/einvoice"
)

// GenerateSimplifiedInvoice implements POST /v1/taxauth/invoices/generate/simplified.
func (s *Server) GenerateSimplifiedInvoice(ctx context.Context, req api.GenerateSimplifiedInvoiceRequestObject) (api.GenerateSimplifiedInvoiceResponseObject, error) {
	r, err := s.generateTaxInvoice(ctx, req.Body, false)
	if err != nil {
		return nil, err
	}
	return generatedTaxDocument(r), nil
}

// GenerateStandardInvoice implements POST /v1/taxauth/invoices/generate/standard.
func (s *Server) GenerateStandardInvoice(ctx context.Context, req api.GenerateStandardInvoiceRequestObject) (api.GenerateStandardInvoiceResponseObject, error) {
	r, err := s.generateTaxInvoice(ctx, req.Body, true)
	if err != nil {
		return nil, err
	}
	return generatedTaxDocument(r), nil
}

// generatedTaxDocument is the 201 response of a generation. It is encoded as the generated
// responses encode theirs except in two ways (and is sent with its Content-Length): into a buffer kept between responses (theirs
// grows a new one by doubling, to about 40 kB for a five-line invoice), and without escaping
// <, > and & as \u003c, \u003e and \u0026, which for the document's XML in the result made
// the body half again as long as the XML itself. The JSON means the same either way.
type generatedTaxDocument api.SimplifiedInvoiceResult

// VisitGenerateSimplifiedInvoiceResponse implements api.GenerateSimplifiedInvoiceResponseObject.
func (r generatedTaxDocument) VisitGenerateSimplifiedInvoiceResponse(w http.ResponseWriter) error {
	return r.write(w)
}

// VisitGenerateStandardInvoiceResponse implements api.GenerateStandardInvoiceResponseObject.
func (r generatedTaxDocument) VisitGenerateStandardInvoiceResponse(w http.ResponseWriter) error {
	return r.write(w)
}

func (r generatedTaxDocument) write(w http.ResponseWriter) error {
	buf := responseBuffers.Get().(*bytes.Buffer)
	defer releaseResponseBuffer(buf)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(api.SimplifiedInvoiceResult(r)); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	// Its length, known, spares the body the chunked encoding and its closing write.
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(http.StatusCreated)
	_, err := w.Write(buf.Bytes())
	return err
}

// responseBuffers keep the buffers large responses are encoded into.
var responseBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// releaseResponseBuffer returns buf to responseBuffers, unless it grew beyond what a
// response usually needs (the pool would keep it alive).
func releaseResponseBuffer(buf *bytes.Buffer) {
	if buf.Cap() > 1<<20 {
		return
	}
	buf.Reset()
	responseBuffers.Put(buf)
}

// generateTaxInvoice generates the document body asks for, of the standard family or the
// simplified one, and returns the generation result.
func (s *Server) generateTaxInvoice(ctx context.Context, b *api.SimplifiedInvoiceRequest, standard bool) (api.SimplifiedInvoiceResult, error) {
	body, err := json.Marshal(b)
	if err != nil {
		return api.SimplifiedInvoiceResult{}, err
	}
	org, err := organizationNamed(ctx, b.OrganizationId, "/organization_id")
	if err != nil {
		return api.SimplifiedInvoiceResult{}, err
	}
	in := core.TaxInvoiceGenerate{OrganizationID: org, Standard: standard, Request: einvoiceRequest(b), RequestJSON: body, Original: originalInvoiceID(b)}
	inv, err := s.cfg.Services.TaxInvoices.GenerateTaxInvoice(ctx, in)
	if err != nil {
		return api.SimplifiedInvoiceResult{}, err
	}
	r := toAPITaxInvoice(inv)
	return api.SimplifiedInvoiceResult{
		Invoice: r.Invoice, Classification: r.Classification, Validation: r.Validation, TaxDiscrepancies: r.TaxDiscrepancies,
		Xml: r.Xml, Qr: r.Qr, Sandbox: r.Sandbox, ReportedToAuthority: r.ReportedToAuthority, Notice: r.Notice,
	}, nil
}

// ListTaxInvoices implements GET /v1/taxauth/invoices.
func (s *Server) ListTaxInvoices(ctx context.Context, req api.ListTaxInvoicesRequestObject) (api.ListTaxInvoicesResponseObject, error) {
	org, err := core.OrganizationIn(ctx, req.Params.OrganizationId, "organization_id")
	if err != nil {
		return nil, err
	}
	f := core.TaxInvoiceFilter{
		OrganizationID:   org,
		Kind:             enumString(req.Params.Kind),
		ICVFrom:          req.Params.IcvFrom,
		ICVTo:            req.Params.IcvTo,
		SubmissionStatus: enumString(req.Params.SubmissionStatus),
		Cursor:           req.Params.Cursor,
		Limit:            valueOr(req.Params.Limit, defaultLimit),
	}
	if d := req.Params.IssuedFrom; d != nil {
		f.IssuedFrom = &d.Time
	}
	if d := req.Params.IssuedTo; d != nil {
		f.IssuedTo = &d.Time
	}
	invoices, next, err := s.cfg.Services.TaxInvoices.ListTaxInvoices(ctx, f)
	if err != nil {
		return nil, err
	}
	items := make([]api.TaxInvoiceSummary, len(invoices))
	for i, t := range invoices {
		items[i] = toAPITaxInvoiceSummary(t)
	}
	return api.ListTaxInvoices200JSONResponse{Body: api.TaxInvoiceSummaryList{Items: items, NextCursor: nullableFrom(next)}}, nil
}

// GetTaxInvoiceXml implements GET /v1/taxauth/invoices/{id}/xml: the stored XML as it is.
func (s *Server) GetTaxInvoiceXml(ctx context.Context, req api.GetTaxInvoiceXmlRequestObject) (api.GetTaxInvoiceXmlResponseObject, error) {
	inv, err := s.cfg.Services.TaxInvoices.FindTaxInvoiceByID(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	xml := inv.Invoice.XML
	return api.GetTaxInvoiceXml200ApplicationxmlResponse{Body: strings.NewReader(xml), ContentLength: int64(len(xml))}, nil
}

func toAPITaxInvoiceSummary(t *core.TaxInvoice) api.TaxInvoiceSummary {
	kind, _ := einvoice.KindOf(t.Invoice.Type)
	out := api.TaxInvoiceSummary{
		Id:                     t.ID,
		OrganizationId:         t.OrganizationID,
		ConnectedBusinessId:    nullableFrom(t.ConnectedBusinessID),
		EgsUnitId:              t.EGSUnitID,
		Kind:                   api.RequestedInvoiceType(kind.Type),
		TypeCode:               kind.Code,
		TypeName:               kind.Name,
		Number:                 t.Number,
		Uuid:                   t.UUID,
		Icv:                    t.ICV,
		InvoiceHash:            t.Invoice.Hash,
		IssueTime:              t.IssuedAt.UTC().Format(time.TimeOnly),
		PayableAmount:          t.Invoice.Totals.Payable,
		Currency:               einvoice.Currency,
		BillingReferenceNumber: nullableFrom(t.BillingReferenceNumber),
		Status:                 t.Status,
		CreatedAt:              t.CreatedAt,
	}
	out.IssueDate.Time = t.IssuedAt.UTC()
	return out
}

// GetTaxInvoice implements GET /v1/taxauth/invoices/{id}.
func (s *Server) GetTaxInvoice(ctx context.Context, req api.GetTaxInvoiceRequestObject) (api.GetTaxInvoiceResponseObject, error) {
	inv, err := s.cfg.Services.TaxInvoices.FindTaxInvoiceByID(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	out := toAPITaxInvoice(inv)
	if len(inv.Request) > 0 {
		// The stored request was validated by the contract when it arrived.
		_ = json.Unmarshal(inv.Request, &out.Request)
	}
	return api.GetTaxInvoice200JSONResponse{Body: out}, nil
}

// originalInvoiceID is the invoice a request names by id in its billing reference, nil if
// none: the service resolves it (einvoiceRequest keeps a reference by number).
func originalInvoiceID(b *api.SimplifiedInvoiceRequest) *uuid.UUID {
	if ref := valueOf(b.BillingReference); ref != nil {
		return ref.InvoiceId
	}
	return nil
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
	r.NoteReason = valueOf(b.NoteReason)
	if ref := valueOf(b.BillingReference); ref != nil && (ref.Number != nil || ref.IssueDate != nil) {
		// An original issued elsewhere, by number; one named by invoice_id is resolved by the
		// service (TaxInvoiceGenerate.Original).
		r.BillingReference = &einvoice.BillingReference{Number: valueOr(ref.Number, "")}
		if ref.IssueDate != nil {
			d := ref.IssueDate.String()
			r.BillingReference.IssueDate = &d
		}
	}
	r.Seller.Address = einvoiceAddress(valueOf(b.Seller.Address))
	if ids := b.Seller.AdditionalIdentifiers; ids != nil {
		for _, id := range *ids {
			r.Seller.Identifiers = append(r.Seller.Identifiers, einvoice.Identifier{Scheme: string(id.Scheme), Value: id.Value})
		}
	}
	if by := b.Buyer; by != nil {
		r.Buyer = &einvoice.Buyer{
			LegalName: valueOf(by.LegalName), VATNumber: valueOf(by.VatNumber),
			CommercialRegistration: valueOf(by.CommercialRegistration), Address: valueOf(by.Address),
			BuyerType: string(by.BuyerType), PostalAddress: einvoiceAddress(valueOf(by.PostalAddress)),
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

// einvoiceAddress converts a postal address; nil stays nil.
func einvoiceAddress(a *api.InvoiceAddress) *einvoice.Address {
	if a == nil {
		return nil
	}
	return &einvoice.Address{
		StreetName: a.StreetName, AdditionalStreetName: valueOf(a.AdditionalStreetName),
		BuildingNumber: a.BuildingNumber, AdditionalNumber: valueOf(a.AdditionalNumber),
		District: a.District, City: a.City, PostalCode: a.PostalCode, Province: valueOf(a.Province),
		CountryCode: a.CountryCode,
	}
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

// toAPITaxInvoice is the stored document t as the API shows it, without its request (which
// a generation's result does not repeat and a read decodes).
func toAPITaxInvoice(t *core.TaxInvoice) api.TaxInvoice {
	inv := t.Invoice
	totals := inv.Totals
	kind, _ := einvoice.KindOf(inv.Type)
	out := api.TaxInvoice{
		Invoice: api.GeneratedInvoice{
			Id:             t.ID,
			OrganizationId: t.OrganizationID.String(),
			EgsUnitId:      nullableFrom(&t.EGSUnitID),
			Status:         t.Status,
			Identity: api.InvoiceIdentity{
				InvoiceType: inv.Type,
				TypeCode:    kind.Code,
				TypeName:    kind.Name,
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
	return out
}
