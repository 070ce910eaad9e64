package einvoice

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/beevik/etree"
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

// builder renders one invoice and records which request field became which element.
type builder struct {
	mapping []Mapping
}

// el appends a child element with text (when text is not empty) to parent.
func el(parent *etree.Element, tag string, text ...string) *etree.Element {
	e := parent.CreateElement(tag)
	if len(text) > 0 {
		e.SetText(text[0])
	}
	return e
}

// amount appends an amount element in SAR.
func amount(parent *etree.Element, tag string, minor int64) *etree.Element {
	e := el(parent, tag, FormatAmount(minor))
	e.CreateAttr("currencyID", Currency)
	return e
}

// mapped appends a child element and notes that field (a JSON pointer) became it, at xpath
// (the path of the new element from /Invoice).
func (b *builder) mapped(parent *etree.Element, tag, text, field, xpath string) *etree.Element {
	e := el(parent, tag, text)
	b.mapping = append(b.mapping, Mapping{Field: field, XPath: xpath})
	return e
}

// render builds the invoice without its stamp: no UBLExtensions, QR reference or Signature,
// exactly the content the invoice hash covers.
func render(req Request, id Identity, t Totals) (*etree.Document, []Mapping) {
	b := &builder{}
	doc := etree.NewDocument()
	doc.CreateProcInst("xml", `version="1.0" encoding="UTF-8"`)
	inv := doc.CreateElement("Invoice")
	inv.CreateAttr("xmlns", nsInvoice)
	inv.CreateAttr("xmlns:cac", nsCAC)
	inv.CreateAttr("xmlns:cbc", nsCBC)
	inv.CreateAttr("xmlns:ext", nsEXT)

	el(inv, "cbc:ProfileID", ProfileID)
	el(inv, "cbc:ID", id.Number)
	el(inv, "cbc:UUID", id.UUID)
	el(inv, "cbc:IssueDate", id.IssueDate())
	// The time is UTC, so it carries the Z of BR-KSA-70's UTC form (hh:mm:ssZ): without it
	// the time reads as local (Saudi) time.
	el(inv, "cbc:IssueTime", id.IssueTime()+"Z")
	kind := KindOfRequest(req)
	b.mapped(inv, "cbc:InvoiceTypeCode", kind.Code, "/requested_invoice_type", "/Invoice/cbc:InvoiceTypeCode").CreateAttr("name", kind.Name)
	keys := make([]string, 0, len(req.Notes))
	for k := range req.Notes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		n := b.mapped(inv, "cbc:Note", req.Notes[k], "/notes/"+pointerEscape(k), fmt.Sprintf("/Invoice/cbc:Note[%d]", i+1))
		n.CreateAttr("languageID", k)
	}
	el(inv, "cbc:DocumentCurrencyCode", Currency)
	el(inv, "cbc:TaxCurrencyCode", Currency)
	if s := req.Supply; s != nil && s.PurchaseOrderReference != nil {
		or := el(inv, "cac:OrderReference")
		b.mapped(or, "cbc:ID", *s.PurchaseOrderReference, "/supply/purchase_order_reference", "/Invoice/cac:OrderReference/cbc:ID")
	}
	if ref := req.BillingReference; ref != nil && kind.Note() {
		// The invoice a note corrects (BG-3): its number (BT-25) and issue date (BT-26).
		const x = "/Invoice/cac:BillingReference/cac:InvoiceDocumentReference/"
		idr := el(el(inv, "cac:BillingReference"), "cac:InvoiceDocumentReference")
		b.mapped(idr, "cbc:ID", ref.Number, "/billing_reference", x+"cbc:ID")
		if ref.IssueDate != nil {
			b.mapped(idr, "cbc:IssueDate", *ref.IssueDate, "/billing_reference", x+"cbc:IssueDate")
		}
	}
	if s := req.Supply; s != nil {
		if s.DeliveryReference != nil {
			dr := el(inv, "cac:DespatchDocumentReference")
			b.mapped(dr, "cbc:ID", *s.DeliveryReference, "/supply/delivery_reference", "/Invoice/cac:DespatchDocumentReference/cbc:ID")
		}
		if s.ContractReference != nil {
			cr := el(inv, "cac:ContractDocumentReference")
			b.mapped(cr, "cbc:ID", *s.ContractReference, "/supply/contract_reference", "/Invoice/cac:ContractDocumentReference/cbc:ID")
		}
	}
	icv := el(inv, "cac:AdditionalDocumentReference")
	el(icv, "cbc:ID", "ICV")
	el(icv, "cbc:UUID", strconv.FormatInt(id.ICV, 10))
	pih := el(inv, "cac:AdditionalDocumentReference")
	el(pih, "cbc:ID", "PIH")
	el(el(pih, "cac:Attachment"), "cbc:EmbeddedDocumentBinaryObject", id.PIH).CreateAttr("mimeCode", "text/plain")

	b.seller(inv, req.Seller)
	b.buyer(inv, req.Buyer)
	if s := req.Supply; s != nil {
		d := el(inv, "cac:Delivery")
		b.mapped(d, "cbc:ActualDeliveryDate", s.SupplyDate, "/supply/supply_date", "/Invoice/cac:Delivery/cbc:ActualDeliveryDate")
		if s.EndDate != nil {
			b.mapped(d, "cbc:LatestDeliveryDate", *s.EndDate, "/supply/end_date", "/Invoice/cac:Delivery/cbc:LatestDeliveryDate")
		}
	}
	b.paymentMeans(inv, req, kind)
	if s := req.Supply; s != nil {
		if s.PaymentTerms != nil {
			pt := el(inv, "cac:PaymentTerms")
			b.mapped(pt, "cbc:Note", *s.PaymentTerms, "/supply/payment_terms", "/Invoice/cac:PaymentTerms/cbc:Note")
		}
	}

	// Two tax totals: the first carries the VAT in the tax currency only (BT-111), the second
	// the VAT with its breakdown per category (BT-110, BG-23).
	amount(el(inv, "cac:TaxTotal"), "cbc:TaxAmount", t.VAT)
	tt := el(inv, "cac:TaxTotal")
	amount(tt, "cbc:TaxAmount", t.VAT)
	for _, s := range t.Subtotals {
		st := el(tt, "cac:TaxSubtotal")
		amount(st, "cbc:TaxableAmount", s.Taxable)
		amount(st, "cbc:TaxAmount", s.Tax)
		taxCategory(st, "cac:TaxCategory", s.Category, s.Rate, s.ExemptionCode, s.ExemptionText)
	}
	lmt := el(inv, "cac:LegalMonetaryTotal")
	amount(lmt, "cbc:LineExtensionAmount", t.LineExtension)
	amount(lmt, "cbc:TaxExclusiveAmount", t.TaxExclusive)
	amount(lmt, "cbc:TaxInclusiveAmount", t.TaxInclusive)
	amount(lmt, "cbc:AllowanceTotalAmount", t.AllowanceTotal)
	amount(lmt, "cbc:ChargeTotalAmount", t.ChargeTotal)
	amount(lmt, "cbc:PayableAmount", t.Payable)
	for i, l := range req.Lines {
		b.line(inv, i, l, t.Lines[i])
	}
	return doc, b.mapping
}

// taxCategory writes a VAT category; category O carries no rate (BR-KSA-11: if present it is 0;
// CEN BR-48 lets an O breakdown go without one).
func taxCategory(parent *etree.Element, tag, category string, rate float64, code, text *string) {
	c := el(parent, tag)
	el(c, "cbc:ID", category)
	if category != "O" {
		el(c, "cbc:Percent", FormatRate(rate))
	}
	if category != "S" && code != nil {
		el(c, "cbc:TaxExemptionReasonCode", *code)
		if text != nil {
			el(c, "cbc:TaxExemptionReason", *text)
		}
	}
	el(el(c, "cac:TaxScheme"), "cbc:ID", "VAT")
}

func (b *builder) seller(inv *etree.Element, s Seller) {
	const party = "/Invoice/cac:AccountingSupplierParty/cac:Party"
	p := el(el(inv, "cac:AccountingSupplierParty"), "cac:Party")
	// One identification only (BR-KSA-08): the official rules cannot evaluate several.
	if id, ok := sellerIdentification(s); ok {
		pi := el(p, "cac:PartyIdentification")
		field := id.path
		if field != "/seller/commercial_registration" {
			field = field[:len(field)-len("/value")]
		}
		b.mapped(pi, "cbc:ID", id.Value, field, party+"/cac:PartyIdentification/cbc:ID").CreateAttr("schemeID", id.Scheme)
	}
	if a := s.Address; a != nil {
		b.postalAddress(p, *a, "/seller/address/", party+"/cac:PostalAddress/")
	}
	pts := el(p, "cac:PartyTaxScheme")
	b.mapped(pts, "cbc:CompanyID", s.VATNumber, "/seller/vat_number", party+"/cac:PartyTaxScheme/cbc:CompanyID")
	el(el(pts, "cac:TaxScheme"), "cbc:ID", "VAT")
	b.mapped(el(p, "cac:PartyLegalEntity"), "cbc:RegistrationName", s.LegalName, "/seller/legal_name", party+"/cac:PartyLegalEntity/cbc:RegistrationName")
}

// postalAddress writes a structured postal address (BG-5 or BG-8) into party; field and
// xpath are the prefixes of its request fields and elements.
func (b *builder) postalAddress(party *etree.Element, a Address, field, xpath string) {
	pa := el(party, "cac:PostalAddress")
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
			b.mapped(pa, f.tag, *f.v, field+f.fieldName, xpath+f.tag)
		}
	}
	b.mapped(el(pa, "cac:Country"), "cbc:IdentificationCode", a.CountryCode, field+"country_code", xpath+"cac:Country/cbc:IdentificationCode")
}

// paymentMeans writes the payment means (BG-16): the payment method, and on a note the reason
// it was issued (KSA-10, cbc:InstructionNote). A note without a payment method says its means
// are not defined (UNTDID 4461 code 1): BR-49 wants a code wherever the group exists.
func (b *builder) paymentMeans(inv *etree.Element, req Request, kind Kind) {
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
	pm := el(inv, "cac:PaymentMeans")
	if method != nil {
		b.mapped(pm, "cbc:PaymentMeansCode", *method, "/supply/payment_method", x+"cbc:PaymentMeansCode")
	} else {
		el(pm, "cbc:PaymentMeansCode", paymentMeansNotDefined)
	}
	if reason != nil {
		b.mapped(pm, "cbc:InstructionNote", *reason, "/note_reason", x+"cbc:InstructionNote")
	}
}

// paymentMeansNotDefined is UNTDID 4461 "instrument not defined".
const paymentMeansNotDefined = "1"

func (b *builder) buyer(inv *etree.Element, by *Buyer) {
	const party = "/Invoice/cac:AccountingCustomerParty/cac:Party"
	p := el(el(inv, "cac:AccountingCustomerParty"), "cac:Party")
	if by == nil {
		return
	}
	if by.CommercialRegistration != nil {
		b.mapped(el(p, "cac:PartyIdentification"), "cbc:ID", *by.CommercialRegistration, "/buyer/commercial_registration",
			party+"/cac:PartyIdentification/cbc:ID").CreateAttr("schemeID", "CRN")
	}
	for i, id := range by.Identifiers {
		b.mapped(el(p, "cac:PartyIdentification"), "cbc:ID", id.Value, fmt.Sprintf("/buyer/additional_identifiers/%d", i),
			party+"/cac:PartyIdentification/cbc:ID").CreateAttr("schemeID", id.Scheme)
	}
	switch {
	case by.PostalAddress != nil:
		b.postalAddress(p, *by.PostalAddress, "/buyer/postal_address/", party+"/cac:PostalAddress/")
	case by.Address != nil:
		b.mapped(el(p, "cac:PostalAddress"), "cbc:StreetName", *by.Address, "/buyer/address", party+"/cac:PostalAddress/cbc:StreetName")
	}
	if by.VATNumber != nil {
		pts := el(p, "cac:PartyTaxScheme")
		b.mapped(pts, "cbc:CompanyID", *by.VATNumber, "/buyer/vat_number", party+"/cac:PartyTaxScheme/cbc:CompanyID")
		el(el(pts, "cac:TaxScheme"), "cbc:ID", "VAT")
	}
	if by.LegalName != nil {
		b.mapped(el(p, "cac:PartyLegalEntity"), "cbc:RegistrationName", *by.LegalName, "/buyer/legal_name", party+"/cac:PartyLegalEntity/cbc:RegistrationName")
	}
}

func (b *builder) line(inv *etree.Element, i int, l Line, lt LineTotals) {
	base := fmt.Sprintf("/line_items/%d", i)
	x := fmt.Sprintf("/Invoice/cac:InvoiceLine[%d]", i+1)
	il := el(inv, "cac:InvoiceLine")
	b.mapped(il, "cbc:ID", l.ID, base+"/line_id", x+"/cbc:ID")
	b.mapped(il, "cbc:InvoicedQuantity", decimalString(l.Quantity), base+"/quantity", x+"/cbc:InvoicedQuantity").CreateAttr("unitCode", l.UnitCode)
	b.mapping = append(b.mapping, Mapping{Field: base + "/unit_code", XPath: x + "/cbc:InvoicedQuantity/@unitCode"})
	amount(il, "cbc:LineExtensionAmount", lt.Net)
	for j, d := range l.Discounts {
		b.allowanceCharge(il, false, d, fmt.Sprintf("%s/discounts/%d", base, j), x)
	}
	for j, c := range l.Charges {
		b.allowanceCharge(il, true, c, fmt.Sprintf("%s/charges/%d", base, j), x)
	}
	tt := el(il, "cac:TaxTotal")
	amount(tt, "cbc:TaxAmount", lt.VAT)
	amount(tt, "cbc:RoundingAmount", lt.WithVAT)
	item := el(il, "cac:Item")
	if l.Description != nil {
		b.mapped(item, "cbc:Description", *l.Description, base+"/description", x+"/cac:Item/cbc:Description")
	}
	name := l.NameEn
	if l.NameAr != nil {
		name = *l.NameAr + " | " + l.NameEn
		b.mapping = append(b.mapping, Mapping{Field: base + "/name_ar", XPath: x + "/cac:Item/cbc:Name"})
	}
	b.mapped(item, "cbc:Name", name, base+"/name_en", x+"/cac:Item/cbc:Name")
	taxCategory(item, "cac:ClassifiedTaxCategory", l.TaxCategory, l.TaxRate, nil, nil)
	b.mapping = append(b.mapping,
		Mapping{Field: base + "/tax_category", XPath: x + "/cac:Item/cac:ClassifiedTaxCategory/cbc:ID"})
	if l.TaxCategory != "O" {
		b.mapping = append(b.mapping, Mapping{Field: base + "/tax_rate", XPath: x + "/cac:Item/cac:ClassifiedTaxCategory/cbc:Percent"})
	}
	if l.TaxExemptionReason != nil && l.TaxCategory != "S" {
		// The reason is written once per VAT breakdown (BT-120, BT-121), not per line.
		b.mapping = append(b.mapping, Mapping{Field: base + "/tax_exemption_reason", XPath: "/Invoice/cac:TaxTotal[2]/cac:TaxSubtotal/cac:TaxCategory/cbc:TaxExemptionReasonCode"})
	}
	price := el(il, "cac:Price")
	b.mapped(price, "cbc:PriceAmount", FormatAmount(l.UnitPrice), base+"/unit_price", x+"/cac:Price/cbc:PriceAmount").CreateAttr("currencyID", Currency)
}

func (b *builder) allowanceCharge(il *etree.Element, charge bool, ac AllowanceCharge, field, x string) {
	e := el(il, "cac:AllowanceCharge")
	el(e, "cbc:ChargeIndicator", strconv.FormatBool(charge))
	if ac.ReasonCode != nil {
		b.mapped(e, "cbc:AllowanceChargeReasonCode", *ac.ReasonCode, field+"/reason_code", x+"/cac:AllowanceCharge/cbc:AllowanceChargeReasonCode")
	}
	if ac.Reason != nil {
		b.mapped(e, "cbc:AllowanceChargeReason", *ac.Reason, field+"/reason", x+"/cac:AllowanceCharge/cbc:AllowanceChargeReason")
	}
	amount(e, "cbc:Amount", ac.Amount)
	b.mapping = append(b.mapping, Mapping{Field: field + "/amount", XPath: x + "/cac:AllowanceCharge/cbc:Amount"})
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
