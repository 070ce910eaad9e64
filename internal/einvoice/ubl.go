package einvoice

import (
	"fmt"
	"sort"
	"strconv"
)

// XML namespaces of a UBL 2.1 invoice and its signature extension.
const (
	nsInvoice = "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
	nsCAC     = "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
	nsCBC     = "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"
	nsEXT     = "urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2"
	nsSIG     = "urn:oasis:names:specification:ubl:schema:xsd:CommonSignatureComponents-2"
	nsSAC     = "urn:oasis:names:specification:ubl:schema:xsd:SignatureAggregateComponents-2"
	nsSBC     = "urn:oasis:names:specification:ubl:schema:xsd:SignatureBasicComponents-2"
	nsDS      = "http://www.w3.org/2000/09/xmldsig#"

	signatureID     = "urn:oasis:names:specification:ubl:signature:Invoice"
	signatureMethod = "urn:oasis:names:specification:ubl:dsig:enveloped:xades"
)

// builder renders one invoice into w and records which request field became which element.
type builder struct {
	w       *xmlWriter
	mapping []Mapping
}

// amount writes an amount element in SAR.
func (b *builder) amount(tag string, minor int64) {
	b.w.leaf(tag, FormatAmount(minor), "currencyID", Currency)
}

// mapped writes a child element with text and attributes and notes that field (a JSON
// pointer) became it, at xpath (the path of the new element from /Invoice).
func (b *builder) mapped(tag, text, field, xpath string, attrs ...string) {
	b.w.leaf(tag, text, attrs...)
	b.mapping = append(b.mapping, Mapping{Field: field, XPath: xpath})
}

// render writes the invoice into w with holes for its stamp (see xmlWriter.hole): the
// ext:UBLExtensions first, then the QR reference and the cac:Signature before the seller. The
// canonical form w writes beside it is exactly the content the invoice hash covers.
func render(w *xmlWriter, req Request, id Identity, t Totals) []Mapping {
	b := &builder{w: w, mapping: make([]Mapping, 0, mappingSizeHint(req))}
	w.doc.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	w.start("Invoice", "xmlns", nsInvoice, "xmlns:cac", nsCAC, "xmlns:cbc", nsCBC, "xmlns:ext", nsEXT)
	w.hole() // ext:UBLExtensions

	w.leaf("cbc:ProfileID", ProfileID)
	w.leaf("cbc:ID", id.Number)
	w.leaf("cbc:UUID", id.UUID)
	w.leaf("cbc:IssueDate", id.IssueDate())
	// The time is UTC, so it carries the Z of BR-KSA-70's UTC form (hh:mm:ssZ): without it
	// the time reads as local (Saudi) time.
	w.leaf("cbc:IssueTime", id.IssueTime()+"Z")
	kind := KindOfRequest(req)
	b.mapped("cbc:InvoiceTypeCode", kind.Code, "/requested_invoice_type", "/Invoice/cbc:InvoiceTypeCode", "name", kind.Name)
	keys := make([]string, 0, len(req.Notes))
	for k := range req.Notes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		b.mapped("cbc:Note", req.Notes[k], "/notes/"+pointerEscape(k), fmt.Sprintf("/Invoice/cbc:Note[%d]", i+1), "languageID", k)
	}
	w.leaf("cbc:DocumentCurrencyCode", Currency)
	w.leaf("cbc:TaxCurrencyCode", Currency)
	if s := req.Supply; s != nil && s.PurchaseOrderReference != nil {
		w.start("cac:OrderReference")
		b.mapped("cbc:ID", *s.PurchaseOrderReference, "/supply/purchase_order_reference", "/Invoice/cac:OrderReference/cbc:ID")
		w.end()
	}
	if ref := req.BillingReference; ref != nil && kind.Note() {
		// The invoice a note corrects (BG-3): its number (BT-25) and issue date (BT-26).
		const x = "/Invoice/cac:BillingReference/cac:InvoiceDocumentReference/"
		w.start("cac:BillingReference")
		w.start("cac:InvoiceDocumentReference")
		b.mapped("cbc:ID", ref.Number, "/billing_reference", x+"cbc:ID")
		if ref.IssueDate != nil {
			b.mapped("cbc:IssueDate", *ref.IssueDate, "/billing_reference", x+"cbc:IssueDate")
		}
		w.end()
		w.end()
	}
	if s := req.Supply; s != nil {
		if s.DeliveryReference != nil {
			w.start("cac:DespatchDocumentReference")
			b.mapped("cbc:ID", *s.DeliveryReference, "/supply/delivery_reference", "/Invoice/cac:DespatchDocumentReference/cbc:ID")
			w.end()
		}
		if s.ContractReference != nil {
			w.start("cac:ContractDocumentReference")
			b.mapped("cbc:ID", *s.ContractReference, "/supply/contract_reference", "/Invoice/cac:ContractDocumentReference/cbc:ID")
			w.end()
		}
	}
	w.start("cac:AdditionalDocumentReference")
	w.leaf("cbc:ID", "ICV")
	w.leaf("cbc:UUID", strconv.FormatInt(id.ICV, 10))
	w.end()
	w.start("cac:AdditionalDocumentReference")
	w.leaf("cbc:ID", "PIH")
	w.start("cac:Attachment")
	w.leaf("cbc:EmbeddedDocumentBinaryObject", id.PIH, "mimeCode", "text/plain")
	w.end()
	w.end()
	w.hole() // the QR reference
	w.hole() // cac:Signature

	b.seller(req.Seller)
	b.buyer(req.Buyer)
	if s := req.Supply; s != nil {
		w.start("cac:Delivery")
		b.mapped("cbc:ActualDeliveryDate", s.SupplyDate, "/supply/supply_date", "/Invoice/cac:Delivery/cbc:ActualDeliveryDate")
		if s.EndDate != nil {
			b.mapped("cbc:LatestDeliveryDate", *s.EndDate, "/supply/end_date", "/Invoice/cac:Delivery/cbc:LatestDeliveryDate")
		}
		w.end()
	}
	b.paymentMeans(req, kind)
	if s := req.Supply; s != nil && s.PaymentTerms != nil {
		w.start("cac:PaymentTerms")
		b.mapped("cbc:Note", *s.PaymentTerms, "/supply/payment_terms", "/Invoice/cac:PaymentTerms/cbc:Note")
		w.end()
	}

	// Two tax totals: the first carries the VAT in the tax currency only (BT-111), the second
	// the VAT with its breakdown per category (BT-110, BG-23).
	w.start("cac:TaxTotal")
	b.amount("cbc:TaxAmount", t.VAT)
	w.end()
	w.start("cac:TaxTotal")
	b.amount("cbc:TaxAmount", t.VAT)
	for _, s := range t.Subtotals {
		w.start("cac:TaxSubtotal")
		b.amount("cbc:TaxableAmount", s.Taxable)
		b.amount("cbc:TaxAmount", s.Tax)
		b.taxCategory("cac:TaxCategory", s.Category, s.Rate, s.ExemptionCode, s.ExemptionText)
		w.end()
	}
	w.end()
	w.start("cac:LegalMonetaryTotal")
	b.amount("cbc:LineExtensionAmount", t.LineExtension)
	b.amount("cbc:TaxExclusiveAmount", t.TaxExclusive)
	b.amount("cbc:TaxInclusiveAmount", t.TaxInclusive)
	b.amount("cbc:AllowanceTotalAmount", t.AllowanceTotal)
	b.amount("cbc:ChargeTotalAmount", t.ChargeTotal)
	b.amount("cbc:PayableAmount", t.Payable)
	w.end()
	for i, l := range req.Lines {
		b.line(i, l, t.Lines[i])
	}
	w.end()
	w.doc.WriteByte('\n')
	return b.mapping
}

// mappingSizeHint is about the number of mapping entries of req: a dozen for the document,
// eight for each line.
func mappingSizeHint(req Request) int { return 16 + 8*len(req.Lines) }

// taxCategory writes a VAT category; category O carries no rate (BR-KSA-11: if present it is 0;
// CEN BR-48 lets an O breakdown go without one).
func (b *builder) taxCategory(tag, category string, rate float64, code, text *string) {
	w := b.w
	w.start(tag)
	w.leaf("cbc:ID", category)
	if category != "O" {
		w.leaf("cbc:Percent", FormatRate(rate))
	}
	if category != "S" && code != nil {
		w.leaf("cbc:TaxExemptionReasonCode", *code)
		if text != nil {
			w.leaf("cbc:TaxExemptionReason", *text)
		}
	}
	b.vatScheme()
	w.end()
}

// vatScheme writes the cac:TaxScheme of VAT.
func (b *builder) vatScheme() {
	b.w.start("cac:TaxScheme")
	b.w.leaf("cbc:ID", "VAT")
	b.w.end()
}

func (b *builder) seller(s Seller) {
	const party = "/Invoice/cac:AccountingSupplierParty/cac:Party"
	w := b.w
	w.start("cac:AccountingSupplierParty")
	w.start("cac:Party")
	// One identification only (BR-KSA-08): the official rules cannot evaluate several.
	if id, ok := sellerIdentification(s); ok {
		w.start("cac:PartyIdentification")
		field := id.path
		if field != "/seller/commercial_registration" {
			field = field[:len(field)-len("/value")]
		}
		b.mapped("cbc:ID", id.Value, field, party+"/cac:PartyIdentification/cbc:ID", "schemeID", id.Scheme)
		w.end()
	}
	if a := s.Address; a != nil {
		b.postalAddress(*a, "/seller/address/", party+"/cac:PostalAddress/")
	}
	w.start("cac:PartyTaxScheme")
	b.mapped("cbc:CompanyID", s.VATNumber, "/seller/vat_number", party+"/cac:PartyTaxScheme/cbc:CompanyID")
	b.vatScheme()
	w.end()
	w.start("cac:PartyLegalEntity")
	b.mapped("cbc:RegistrationName", s.LegalName, "/seller/legal_name", party+"/cac:PartyLegalEntity/cbc:RegistrationName")
	w.end()
	w.end()
	w.end()
}

// postalAddress writes a structured postal address (BG-5 or BG-8); field and xpath are the
// prefixes of its request fields and elements.
func (b *builder) postalAddress(a Address, field, xpath string) {
	b.w.start("cac:PostalAddress")
	for _, f := range []struct {
		v              *string
		tag, fieldName string
	}{
		{a.StreetName, "cbc:StreetName", "street_name"},
		{a.AdditionalStreetName, "cbc:AdditionalStreetName", "additional_street_name"},
		{a.BuildingNumber, "cbc:BuildingNumber", "building_number"},
		{a.AdditionalNumber, "cbc:PlotIdentification", "additional_number"},
		{a.District, "cbc:CitySubdivisionName", "district"},
		{a.City, "cbc:CityName", "city"},
		{a.PostalCode, "cbc:PostalZone", "postal_code"},
		{a.Province, "cbc:CountrySubentity", "province"},
	} {
		if f.v != nil {
			b.mapped(f.tag, *f.v, field+f.fieldName, xpath+f.tag)
		}
	}
	b.w.start("cac:Country")
	b.mapped("cbc:IdentificationCode", a.CountryCode, field+"country_code", xpath+"cac:Country/cbc:IdentificationCode")
	b.w.end()
	b.w.end()
}

// paymentMeans writes the payment means (BG-16): the payment method, and on a note the reason
// it was issued (KSA-10, cbc:InstructionNote). A note without a payment method says its means
// are not defined (UNTDID 4461 code 1): BR-49 wants a code wherever the group exists.
func (b *builder) paymentMeans(req Request, kind Kind) {
	const x = "/Invoice/cac:PaymentMeans/"
	var method *string
	if req.Supply != nil {
		method = req.Supply.PaymentMethod
	}
	reason := req.NoteReason
	if !kind.Note() {
		reason = nil
	}
	if method == nil && reason == nil {
		return
	}
	b.w.start("cac:PaymentMeans")
	if method != nil {
		b.mapped("cbc:PaymentMeansCode", *method, "/supply/payment_method", x+"cbc:PaymentMeansCode")
	} else {
		b.w.leaf("cbc:PaymentMeansCode", paymentMeansNotDefined)
	}
	if reason != nil {
		b.mapped("cbc:InstructionNote", *reason, "/note_reason", x+"cbc:InstructionNote")
	}
	b.w.end()
}

// paymentMeansNotDefined is UNTDID 4461 "instrument not defined".
const paymentMeansNotDefined = "1"

func (b *builder) buyer(by *Buyer) {
	const party = "/Invoice/cac:AccountingCustomerParty/cac:Party"
	w := b.w
	w.start("cac:AccountingCustomerParty")
	w.start("cac:Party")
	if by != nil {
		b.buyerParty(by, party)
	}
	w.end()
	w.end()
}

func (b *builder) buyerParty(by *Buyer, party string) {
	w := b.w
	if by.CommercialRegistration != nil {
		w.start("cac:PartyIdentification")
		b.mapped("cbc:ID", *by.CommercialRegistration, "/buyer/commercial_registration", party+"/cac:PartyIdentification/cbc:ID", "schemeID", "CRN")
		w.end()
	}
	for i, id := range by.Identifiers {
		w.start("cac:PartyIdentification")
		b.mapped("cbc:ID", id.Value, fmt.Sprintf("/buyer/additional_identifiers/%d", i), party+"/cac:PartyIdentification/cbc:ID", "schemeID", id.Scheme)
		w.end()
	}
	switch {
	case by.PostalAddress != nil:
		b.postalAddress(*by.PostalAddress, "/buyer/postal_address/", party+"/cac:PostalAddress/")
	case by.Address != nil:
		w.start("cac:PostalAddress")
		b.mapped("cbc:StreetName", *by.Address, "/buyer/address", party+"/cac:PostalAddress/cbc:StreetName")
		w.end()
	}
	if by.VATNumber != nil {
		w.start("cac:PartyTaxScheme")
		b.mapped("cbc:CompanyID", *by.VATNumber, "/buyer/vat_number", party+"/cac:PartyTaxScheme/cbc:CompanyID")
		b.vatScheme()
		w.end()
	}
	if by.LegalName != nil {
		w.start("cac:PartyLegalEntity")
		b.mapped("cbc:RegistrationName", *by.LegalName, "/buyer/legal_name", party+"/cac:PartyLegalEntity/cbc:RegistrationName")
		w.end()
	}
}

func (b *builder) line(i int, l Line, lt LineTotals) {
	base := fmt.Sprintf("/line_items/%d", i)
	x := fmt.Sprintf("/Invoice/cac:InvoiceLine[%d]", i+1)
	w := b.w
	w.start("cac:InvoiceLine")
	b.mapped("cbc:ID", l.ID, base+"/line_id", x+"/cbc:ID")
	b.mapped("cbc:InvoicedQuantity", decimalString(l.Quantity), base+"/quantity", x+"/cbc:InvoicedQuantity", "unitCode", l.UnitCode)
	b.mapping = append(b.mapping, Mapping{Field: base + "/unit_code", XPath: x + "/cbc:InvoicedQuantity/@unitCode"})
	b.amount("cbc:LineExtensionAmount", lt.Net)
	for j, d := range l.Discounts {
		b.allowanceCharge(false, d, fmt.Sprintf("%s/discounts/%d", base, j), x)
	}
	for j, c := range l.Charges {
		b.allowanceCharge(true, c, fmt.Sprintf("%s/charges/%d", base, j), x)
	}
	w.start("cac:TaxTotal")
	b.amount("cbc:TaxAmount", lt.VAT)
	b.amount("cbc:RoundingAmount", lt.WithVAT)
	w.end()
	w.start("cac:Item")
	if l.Description != nil {
		b.mapped("cbc:Description", *l.Description, base+"/description", x+"/cac:Item/cbc:Description")
	}
	name := l.NameEn
	if l.NameAr != nil {
		name = *l.NameAr + " | " + l.NameEn
		b.mapping = append(b.mapping, Mapping{Field: base + "/name_ar", XPath: x + "/cac:Item/cbc:Name"})
	}
	b.mapped("cbc:Name", name, base+"/name_en", x+"/cac:Item/cbc:Name")
	b.taxCategory("cac:ClassifiedTaxCategory", l.TaxCategory, l.TaxRate, nil, nil)
	b.mapping = append(b.mapping,
		Mapping{Field: base + "/tax_category", XPath: x + "/cac:Item/cac:ClassifiedTaxCategory/cbc:ID"})
	if l.TaxCategory != "O" {
		b.mapping = append(b.mapping, Mapping{Field: base + "/tax_rate", XPath: x + "/cac:Item/cac:ClassifiedTaxCategory/cbc:Percent"})
	}
	if l.TaxExemptionReason != nil && l.TaxCategory != "S" {
		// The reason is written once per VAT breakdown (BT-120, BT-121), not per line.
		b.mapping = append(b.mapping, Mapping{Field: base + "/tax_exemption_reason", XPath: "/Invoice/cac:TaxTotal[2]/cac:TaxSubtotal/cac:TaxCategory/cbc:TaxExemptionReasonCode"})
	}
	w.end()
	w.start("cac:Price")
	b.mapped("cbc:PriceAmount", FormatAmount(l.UnitPrice), base+"/unit_price", x+"/cac:Price/cbc:PriceAmount", "currencyID", Currency)
	w.end()
	w.end()
}

func (b *builder) allowanceCharge(charge bool, ac AllowanceCharge, field, x string) {
	w := b.w
	w.start("cac:AllowanceCharge")
	w.leaf("cbc:ChargeIndicator", strconv.FormatBool(charge))
	if ac.ReasonCode != nil {
		b.mapped("cbc:AllowanceChargeReasonCode", *ac.ReasonCode, field+"/reason_code", x+"/cac:AllowanceCharge/cbc:AllowanceChargeReasonCode")
	}
	if ac.Reason != nil {
		b.mapped("cbc:AllowanceChargeReason", *ac.Reason, field+"/reason", x+"/cac:AllowanceCharge/cbc:AllowanceChargeReason")
	}
	b.amount("cbc:Amount", ac.Amount)
	b.mapping = append(b.mapping, Mapping{Field: field + "/amount", XPath: x + "/cac:AllowanceCharge/cbc:Amount"})
	w.end()
}

// pointerEscape escapes a JSON pointer reference token (RFC 6901).
func pointerEscape(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '~':
			out = append(out, '~', '0')
		case '/':
			out = append(out, '~', '1')
		default:
			out = append(out, s[i])
		}
	}
	return string(out)
}
