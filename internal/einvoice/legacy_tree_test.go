package einvoice

// The etree renderer, kept only while the streaming one is compared with it (golden test).

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/beevik/etree"
)

// treeBuilder renders one invoice and records which request field became which element.
type treeBuilder struct {
	mapping []Mapping
}

// el appends a child element with text (when text is not empty) to parent.
func tel(parent *etree.Element, tag string, text ...string) *etree.Element {
	e := parent.CreateElement(tag)
	if len(text) > 0 {
		e.SetText(text[0])
	}
	return e
}

// amount appends an amount element in SAR.
func tamount(parent *etree.Element, tag string, minor int64) *etree.Element {
	e := tel(parent, tag, FormatAmount(minor))
	e.CreateAttr("currencyID", Currency)
	return e
}

// mapped appends a child element and notes that field (a JSON pointer) became it, at xpath
// (the path of the new element from /Invoice).
func (b *treeBuilder) mapped(parent *etree.Element, tag, text, field, xpath string) *etree.Element {
	e := tel(parent, tag, text)
	b.mapping = append(b.mapping, Mapping{Field: field, XPath: xpath})
	return e
}

// render builds the invoice without its stamp: no UBLExtensions, QR reference or Signature,
// exactly the content the invoice hash covers.
func renderTree(req Request, id Identity, t Totals) (*etree.Document, []Mapping) {
	b := &treeBuilder{}
	doc := etree.NewDocument()
	doc.CreateProcInst("xml", `version="1.0" encoding="UTF-8"`)
	inv := doc.CreateElement("Invoice")
	inv.CreateAttr("xmlns", nsInvoice)
	inv.CreateAttr("xmlns:cac", nsCAC)
	inv.CreateAttr("xmlns:cbc", nsCBC)
	inv.CreateAttr("xmlns:ext", nsEXT)

	tel(inv, "cbc:ProfileID", ProfileID)
	tel(inv, "cbc:ID", id.Number)
	tel(inv, "cbc:UUID", id.UUID)
	tel(inv, "cbc:IssueDate", id.IssueDate())
	// The time is UTC, so it carries the Z of BR-KSA-70's UTC form (hh:mm:ssZ): without it
	// the time reads as local (Saudi) time.
	tel(inv, "cbc:IssueTime", id.IssueTime()+"Z")
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
	tel(inv, "cbc:DocumentCurrencyCode", Currency)
	tel(inv, "cbc:TaxCurrencyCode", Currency)
	if s := req.Supply; s != nil && s.PurchaseOrderReference != nil {
		or := tel(inv, "cac:OrderReference")
		b.mapped(or, "cbc:ID", *s.PurchaseOrderReference, "/supply/purchase_order_reference", "/Invoice/cac:OrderReference/cbc:ID")
	}
	if ref := req.BillingReference; ref != nil && kind.Note() {
		// The invoice a note corrects (BG-3): its number (BT-25) and issue date (BT-26).
		const x = "/Invoice/cac:BillingReference/cac:InvoiceDocumentReference/"
		idr := tel(tel(inv, "cac:BillingReference"), "cac:InvoiceDocumentReference")
		b.mapped(idr, "cbc:ID", ref.Number, "/billing_reference", x+"cbc:ID")
		if ref.IssueDate != nil {
			b.mapped(idr, "cbc:IssueDate", *ref.IssueDate, "/billing_reference", x+"cbc:IssueDate")
		}
	}
	if s := req.Supply; s != nil {
		if s.DeliveryReference != nil {
			dr := tel(inv, "cac:DespatchDocumentReference")
			b.mapped(dr, "cbc:ID", *s.DeliveryReference, "/supply/delivery_reference", "/Invoice/cac:DespatchDocumentReference/cbc:ID")
		}
		if s.ContractReference != nil {
			cr := tel(inv, "cac:ContractDocumentReference")
			b.mapped(cr, "cbc:ID", *s.ContractReference, "/supply/contract_reference", "/Invoice/cac:ContractDocumentReference/cbc:ID")
		}
	}
	icv := tel(inv, "cac:AdditionalDocumentReference")
	tel(icv, "cbc:ID", "ICV")
	tel(icv, "cbc:UUID", strconv.FormatInt(id.ICV, 10))
	pih := tel(inv, "cac:AdditionalDocumentReference")
	tel(pih, "cbc:ID", "PIH")
	tel(tel(pih, "cac:Attachment"), "cbc:EmbeddedDocumentBinaryObject", id.PIH).CreateAttr("mimeCode", "text/plain")

	b.seller(inv, req.Seller)
	b.buyer(inv, req.Buyer)
	if s := req.Supply; s != nil {
		d := tel(inv, "cac:Delivery")
		b.mapped(d, "cbc:ActualDeliveryDate", s.SupplyDate, "/supply/supply_date", "/Invoice/cac:Delivery/cbc:ActualDeliveryDate")
		if s.EndDate != nil {
			b.mapped(d, "cbc:LatestDeliveryDate", *s.EndDate, "/supply/end_date", "/Invoice/cac:Delivery/cbc:LatestDeliveryDate")
		}
	}
	b.paymentMeans(inv, req, kind)
	if s := req.Supply; s != nil {
		if s.PaymentTerms != nil {
			pt := tel(inv, "cac:PaymentTerms")
			b.mapped(pt, "cbc:Note", *s.PaymentTerms, "/supply/payment_terms", "/Invoice/cac:PaymentTerms/cbc:Note")
		}
	}

	// Two tax totals: the first carries the VAT in the tax currency only (BT-111), the second
	// the VAT with its breakdown per category (BT-110, BG-23).
	tamount(tel(inv, "cac:TaxTotal"), "cbc:TaxAmount", t.VAT)
	tt := tel(inv, "cac:TaxTotal")
	tamount(tt, "cbc:TaxAmount", t.VAT)
	for _, s := range t.Subtotals {
		st := tel(tt, "cac:TaxSubtotal")
		tamount(st, "cbc:TaxableAmount", s.Taxable)
		tamount(st, "cbc:TaxAmount", s.Tax)
		ttaxCategory(st, "cac:TaxCategory", s.Category, s.Rate, s.ExemptionCode, s.ExemptionText)
	}
	lmt := tel(inv, "cac:LegalMonetaryTotal")
	tamount(lmt, "cbc:LineExtensionAmount", t.LineExtension)
	tamount(lmt, "cbc:TaxExclusiveAmount", t.TaxExclusive)
	tamount(lmt, "cbc:TaxInclusiveAmount", t.TaxInclusive)
	tamount(lmt, "cbc:AllowanceTotalAmount", t.AllowanceTotal)
	tamount(lmt, "cbc:ChargeTotalAmount", t.ChargeTotal)
	tamount(lmt, "cbc:PayableAmount", t.Payable)
	for i, l := range req.Lines {
		b.line(inv, i, l, t.Lines[i])
	}
	return doc, b.mapping
}

// taxCategory writes a VAT category; category O carries no rate (BR-KSA-11: if present it is 0;
// CEN BR-48 lets an O breakdown go without one).
func ttaxCategory(parent *etree.Element, tag, category string, rate float64, code, text *string) {
	c := tel(parent, tag)
	tel(c, "cbc:ID", category)
	if category != "O" {
		tel(c, "cbc:Percent", FormatRate(rate))
	}
	if category != "S" && code != nil {
		tel(c, "cbc:TaxExemptionReasonCode", *code)
		if text != nil {
			tel(c, "cbc:TaxExemptionReason", *text)
		}
	}
	tel(tel(c, "cac:TaxScheme"), "cbc:ID", "VAT")
}

func (b *treeBuilder) seller(inv *etree.Element, s Seller) {
	const party = "/Invoice/cac:AccountingSupplierParty/cac:Party"
	p := tel(tel(inv, "cac:AccountingSupplierParty"), "cac:Party")
	// One identification only (BR-KSA-08): the official rules cannot evaluate several.
	if id, ok := sellerIdentification(s); ok {
		pi := tel(p, "cac:PartyIdentification")
		field := id.path
		if field != "/seller/commercial_registration" {
			field = field[:len(field)-len("/value")]
		}
		b.mapped(pi, "cbc:ID", id.Value, field, party+"/cac:PartyIdentification/cbc:ID").CreateAttr("schemeID", id.Scheme)
	}
	if a := s.Address; a != nil {
		b.postalAddress(p, *a, "/seller/address/", party+"/cac:PostalAddress/")
	}
	pts := tel(p, "cac:PartyTaxScheme")
	b.mapped(pts, "cbc:CompanyID", s.VATNumber, "/seller/vat_number", party+"/cac:PartyTaxScheme/cbc:CompanyID")
	tel(tel(pts, "cac:TaxScheme"), "cbc:ID", "VAT")
	b.mapped(tel(p, "cac:PartyLegalEntity"), "cbc:RegistrationName", s.LegalName, "/seller/legal_name", party+"/cac:PartyLegalEntity/cbc:RegistrationName")
}

// postalAddress writes a structured postal address (BG-5 or BG-8) into party; field and
// xpath are the prefixes of its request fields and elements.
func (b *treeBuilder) postalAddress(party *etree.Element, a Address, field, xpath string) {
	pa := tel(party, "cac:PostalAddress")
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
	b.mapped(tel(pa, "cac:Country"), "cbc:IdentificationCode", a.CountryCode, field+"country_code", xpath+"cac:Country/cbc:IdentificationCode")
}

// paymentMeans writes the payment means (BG-16): the payment method, and on a note the reason
// it was issued (KSA-10, cbc:InstructionNote). A note without a payment method says its means
// are not defined (UNTDID 4461 code 1): BR-49 wants a code wherever the group exists.
func (b *treeBuilder) paymentMeans(inv *etree.Element, req Request, kind Kind) {
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
	pm := tel(inv, "cac:PaymentMeans")
	if method != nil {
		b.mapped(pm, "cbc:PaymentMeansCode", *method, "/supply/payment_method", x+"cbc:PaymentMeansCode")
	} else {
		tel(pm, "cbc:PaymentMeansCode", paymentMeansNotDefined)
	}
	if reason != nil {
		b.mapped(pm, "cbc:InstructionNote", *reason, "/note_reason", x+"cbc:InstructionNote")
	}
}


func (b *treeBuilder) buyer(inv *etree.Element, by *Buyer) {
	const party = "/Invoice/cac:AccountingCustomerParty/cac:Party"
	p := tel(tel(inv, "cac:AccountingCustomerParty"), "cac:Party")
	if by == nil {
		return
	}
	if by.CommercialRegistration != nil {
		b.mapped(tel(p, "cac:PartyIdentification"), "cbc:ID", *by.CommercialRegistration, "/buyer/commercial_registration",
			party+"/cac:PartyIdentification/cbc:ID").CreateAttr("schemeID", "CRN")
	}
	for i, id := range by.Identifiers {
		b.mapped(tel(p, "cac:PartyIdentification"), "cbc:ID", id.Value, fmt.Sprintf("/buyer/additional_identifiers/%d", i),
			party+"/cac:PartyIdentification/cbc:ID").CreateAttr("schemeID", id.Scheme)
	}
	switch {
	case by.PostalAddress != nil:
		b.postalAddress(p, *by.PostalAddress, "/buyer/postal_address/", party+"/cac:PostalAddress/")
	case by.Address != nil:
		b.mapped(tel(p, "cac:PostalAddress"), "cbc:StreetName", *by.Address, "/buyer/address", party+"/cac:PostalAddress/cbc:StreetName")
	}
	if by.VATNumber != nil {
		pts := tel(p, "cac:PartyTaxScheme")
		b.mapped(pts, "cbc:CompanyID", *by.VATNumber, "/buyer/vat_number", party+"/cac:PartyTaxScheme/cbc:CompanyID")
		tel(tel(pts, "cac:TaxScheme"), "cbc:ID", "VAT")
	}
	if by.LegalName != nil {
		b.mapped(tel(p, "cac:PartyLegalEntity"), "cbc:RegistrationName", *by.LegalName, "/buyer/legal_name", party+"/cac:PartyLegalEntity/cbc:RegistrationName")
	}
}

func (b *treeBuilder) line(inv *etree.Element, i int, l Line, lt LineTotals) {
	base := fmt.Sprintf("/line_items/%d", i)
	x := fmt.Sprintf("/Invoice/cac:InvoiceLine[%d]", i+1)
	il := tel(inv, "cac:InvoiceLine")
	b.mapped(il, "cbc:ID", l.ID, base+"/line_id", x+"/cbc:ID")
	b.mapped(il, "cbc:InvoicedQuantity", decimalString(l.Quantity), base+"/quantity", x+"/cbc:InvoicedQuantity").CreateAttr("unitCode", l.UnitCode)
	b.mapping = append(b.mapping, Mapping{Field: base + "/unit_code", XPath: x + "/cbc:InvoicedQuantity/@unitCode"})
	tamount(il, "cbc:LineExtensionAmount", lt.Net)
	for j, d := range l.Discounts {
		b.allowanceCharge(il, false, d, fmt.Sprintf("%s/discounts/%d", base, j), x)
	}
	for j, c := range l.Charges {
		b.allowanceCharge(il, true, c, fmt.Sprintf("%s/charges/%d", base, j), x)
	}
	tt := tel(il, "cac:TaxTotal")
	tamount(tt, "cbc:TaxAmount", lt.VAT)
	tamount(tt, "cbc:RoundingAmount", lt.WithVAT)
	item := tel(il, "cac:Item")
	if l.Description != nil {
		b.mapped(item, "cbc:Description", *l.Description, base+"/description", x+"/cac:Item/cbc:Description")
	}
	name := l.NameEn
	if l.NameAr != nil {
		name = *l.NameAr + " | " + l.NameEn
		b.mapping = append(b.mapping, Mapping{Field: base + "/name_ar", XPath: x + "/cac:Item/cbc:Name"})
	}
	b.mapped(item, "cbc:Name", name, base+"/name_en", x+"/cac:Item/cbc:Name")
	ttaxCategory(item, "cac:ClassifiedTaxCategory", l.TaxCategory, l.TaxRate, nil, nil)
	b.mapping = append(b.mapping,
		Mapping{Field: base + "/tax_category", XPath: x + "/cac:Item/cac:ClassifiedTaxCategory/cbc:ID"})
	if l.TaxCategory != "O" {
		b.mapping = append(b.mapping, Mapping{Field: base + "/tax_rate", XPath: x + "/cac:Item/cac:ClassifiedTaxCategory/cbc:Percent"})
	}
	if l.TaxExemptionReason != nil && l.TaxCategory != "S" {
		// The reason is written once per VAT breakdown (BT-120, BT-121), not per line.
		b.mapping = append(b.mapping, Mapping{Field: base + "/tax_exemption_reason", XPath: "/Invoice/cac:TaxTotal[2]/cac:TaxSubtotal/cac:TaxCategory/cbc:TaxExemptionReasonCode"})
	}
	price := tel(il, "cac:Price")
	b.mapped(price, "cbc:PriceAmount", FormatAmount(l.UnitPrice), base+"/unit_price", x+"/cac:Price/cbc:PriceAmount").CreateAttr("currencyID", Currency)
}

func (b *treeBuilder) allowanceCharge(il *etree.Element, charge bool, ac AllowanceCharge, field, x string) {
	e := tel(il, "cac:AllowanceCharge")
	tel(e, "cbc:ChargeIndicator", strconv.FormatBool(charge))
	if ac.ReasonCode != nil {
		b.mapped(e, "cbc:AllowanceChargeReasonCode", *ac.ReasonCode, field+"/reason_code", x+"/cac:AllowanceCharge/cbc:AllowanceChargeReasonCode")
	}
	if ac.Reason != nil {
		b.mapped(e, "cbc:AllowanceChargeReason", *ac.Reason, field+"/reason", x+"/cac:AllowanceCharge/cbc:AllowanceChargeReason")
	}
	tamount(e, "cbc:Amount", ac.Amount)
	b.mapping = append(b.mapping, Mapping{Field: field + "/amount", XPath: x + "/cac:AllowanceCharge/cbc:Amount"})
}

// Generate renders the invoice at its place in the chain and stamps it with key: the XML
// with its signature extension, QR reference and signature element, the invoice hash and
// the QR payload.
func (d *Draft) GenerateTree(id Identity, key *SandboxKey) (*Invoice, error) {
	doc, mapping := renderTree(d.Request, id, d.Totals)
	inv := doc.Root()

	// The stamp's parts go in as placeholders first, so the document is laid out (indented)
	// once and the hash covers exactly the whitespace the final document has.
	ext, slots := signatureExtension()
	inv.InsertChildAt(0, ext)
	qrRef := etree.NewElement("cac:AdditionalDocumentReference")
	tel(qrRef, "cbc:ID", "QR")
	qrValue := tel(tel(qrRef, "cac:Attachment"), "cbc:EmbeddedDocumentBinaryObject")
	qrValue.CreateAttr("mimeCode", "text/plain")
	sig := etree.NewElement("cac:Signature")
	tel(sig, "cbc:ID", signatureID)
	tel(sig, "cbc:SignatureMethod", signatureMethod)
	at := inv.SelectElement("cac:AccountingSupplierParty").Index()
	inv.InsertChildAt(at, qrRef)
	inv.InsertChildAt(at+1, sig)
	doc.Indent(4)

	digest, hash, err := InvoiceHash(doc)
	if err != nil {
		return nil, err
	}
	signature, err := sign(slots, key, id.IssuedAt, digest, hash)
	if err != nil {
		return nil, err
	}
	parts, err := key.stampingParts()
	if err != nil {
		return nil, err
	}
	qr, truncated := QRFields{
		SellerName:           d.Request.Seller.LegalName,
		VATNumber:            d.Request.Seller.VATNumber,
		Timestamp:            id.IssueDate() + "T" + id.IssueTime() + "Z",
		TotalWithVAT:         FormatAmount(d.Totals.TaxInclusive),
		VATTotal:             FormatAmount(d.Totals.VAT),
		InvoiceHash:          hash,
		Signature:            signature,
		PublicKey:            parts.publicKeyInfo,
		CertificateSignature: parts.certificateSignature,
	}.Encode()
	qrValue.SetText(qr)

	issues := append([]Issue{}, d.Issues...)
	if truncated {
		issues = append(issues, Issue{Code: "SBX-QR-01", Severity: SeverityWarning, Path: "/seller/legal_name",
			Message: "A QR value is longer than 255 bytes and was shortened in the QR payload."})
	}
	var xml strings.Builder
	xml.Grow(documentSizeHint(len(d.Request.Lines)))
	if _, err := doc.WriteTo(&xml); err != nil {
		return nil, err
	}
	return &Invoice{
		Type:          KindOfRequest(d.Request).Type,
		Totals:        d.Totals,
		Issues:        issues,
		Discrepancies: d.Discrepancies,
		XML:           xml.String(),
		Mapping:       mapping,
		Hash:          hash,
		QR:            qr,
	}, nil
}

func documentSizeHint(n int) int { return 13<<10 + 1400*n }
