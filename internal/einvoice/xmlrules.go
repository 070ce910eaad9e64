package einvoice

import (
	"encoding/base64"
	"math/big"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/beevik/etree"
)

// xmlInvoice is what the rules read from a UBL invoice document. Elements are found by the
// prefixes UBL and the authority's samples use (cbc:, cac:, ext:, ds:), as the official rule
// files' XPath expressions do.
type xmlInvoice struct {
	root                                  *etree.Element
	profileID, uuid, issueDate, issueTime string
	typeCode, typeName                    string
	documentCurrency, taxCurrency         string
	icv, pih, qr                          *etree.Element
	sellerName, sellerVAT                 string
	buyerName, buyerVAT                   *etree.Element
	lines                                 []*etree.Element
}

// sellerNamePath is where the seller name (BT-27) is.
const sellerNamePath = "cac:AccountingSupplierParty/cac:Party/cac:PartyLegalEntity/cbc:RegistrationName"

// standard reports whether the document is a tax invoice or a note of one (KSA-2 "01"),
// simplified whether it is a simplified one ("02").
func (inv xmlInvoice) standard() bool   { return strings.HasPrefix(inv.typeName, "01") }
func (inv xmlInvoice) simplified() bool { return strings.HasPrefix(inv.typeName, "02") }

// note reports whether the document is a credit (381) or debit (383) note.
func (inv xmlInvoice) note() bool { return inv.typeCode == "381" || inv.typeCode == "383" }

func readInvoice(root *etree.Element) xmlInvoice {
	inv := xmlInvoice{
		root:             root,
		profileID:        text(root, "cbc:ProfileID"),
		uuid:             text(root, "cbc:UUID"),
		issueDate:        text(root, "cbc:IssueDate"),
		issueTime:        text(root, "cbc:IssueTime"),
		typeCode:         text(root, "cbc:InvoiceTypeCode"),
		documentCurrency: text(root, "cbc:DocumentCurrencyCode"),
		taxCurrency:      text(root, "cbc:TaxCurrencyCode"),
		icv:              additionalReference(root, "ICV"),
		pih:              additionalReference(root, "PIH"),
		qr:               additionalReference(root, "QR"),
		sellerName:       text(root, sellerNamePath),
		sellerVAT:        text(root, "cac:AccountingSupplierParty/cac:Party/cac:PartyTaxScheme/cbc:CompanyID"),
		buyerName:        find(root, "cac:AccountingCustomerParty/cac:Party/cac:PartyLegalEntity/cbc:RegistrationName"),
		buyerVAT:         find(root, "cac:AccountingCustomerParty/cac:Party/cac:PartyTaxScheme/cbc:CompanyID"),
		lines:            root.SelectElements("cac:InvoiceLine"),
	}
	if tc := root.SelectElement("cbc:InvoiceTypeCode"); tc != nil {
		inv.typeName = tc.SelectAttrValue("name", "")
	}
	return inv
}

// text is the trimmed text of the element at path below e, "" when there is none.
func text(e *etree.Element, path string) string {
	if c := find(e, path); c != nil {
		return strings.TrimSpace(c.Text())
	}
	return ""
}

// compiledPaths caches the paths the rules use: a few dozen fixed strings, each compiled
// once per process instead of once per lookup.
var compiledPaths sync.Map // string -> etree.Path

// find is e.FindElement(path) with the path compiled once.
func find(e *etree.Element, path string) *etree.Element {
	p, ok := compiledPaths.Load(path)
	if !ok {
		p, _ = compiledPaths.LoadOrStore(path, etree.MustCompilePath(path))
	}
	return e.FindElementPath(p.(etree.Path))
}

// additionalReference is the cac:AdditionalDocumentReference whose cbc:ID is id.
func additionalReference(root *etree.Element, id string) *etree.Element {
	for _, ref := range root.SelectElements("cac:AdditionalDocumentReference") {
		if text(ref, "cbc:ID") == id {
			return ref
		}
	}
	return nil
}

var (
	uuidPattern     = regexp.MustCompile(`^[a-fA-F0-9-]+$`)
	typeNamePattern = regexp.MustCompile(`^0[12][01]{5}$`)
	timePattern     = regexp.MustCompile(`^[0-9]{2}:[0-9]{2}:[0-9]{2}Z?$`)
	digitsPattern   = regexp.MustCompile(`^[0-9]+$`)
	invoiceTypes    = map[string]bool{"388": true, "381": true, "383": true, "386": true}
)

// checkRules evaluates the KSA (BR-KSA-…) and EN 16931 (BR-…) rules this package implements
// over the document, each with the id and severity of the official rule files
// (docs/einvoice-rules.md lists them).
func checkRules(r *report, inv xmlInvoice, now time.Time) {
	rule := func(ok bool, severity, id, format string, args ...any) {
		if !ok {
			r.add(severity, CategoryRules, id, format, args...)
		}
	}
	rule(inv.profileID == ProfileID, ResultError, "BR-KSA-EN16931-01", "The business process (BT-23, cbc:ProfileID) must be %q, not %q.", ProfileID, inv.profileID)
	rule(inv.uuid != "" && uuidPattern.MatchString(inv.uuid), ResultError, "BR-KSA-03", "The invoice must contain a UUID (KSA-1) of letters, digits and dashes.")
	if d, err := time.Parse(time.DateOnly, inv.issueDate); err == nil {
		rule(!d.After(saudiDate(now)), ResultError, "BR-KSA-04", "The issue date (BT-2) %s must not be after the current date in Saudi time.", inv.issueDate)
	} else {
		r.add(ResultError, CategoryRules, "BR-03", "An invoice shall have an issue date (BT-2) as YYYY-MM-DD.")
	}
	rule(timePattern.MatchString(inv.issueTime), ResultError, "BR-KSA-70", "The invoice must contain the issue time (KSA-25) as hh:mm:ss or hh:mm:ssZ.")
	rule(invoiceTypes[inv.typeCode], ResultError, "BR-KSA-05", "The invoice type code (BT-3) must be 388, 381, 383 or 386, not %q.", inv.typeCode)
	rule(typeNamePattern.MatchString(inv.typeName), ResultError, "BR-KSA-06", "The invoice transaction code (KSA-2, @name) must have the structure NNPNESB (01 or 02, then five 0 or 1), not %q.", inv.typeName)
	rule(inv.documentCurrency != "", ResultError, "BR-05", "An invoice shall have a currency code (BT-5).")
	rule(inv.taxCurrency != "", ResultError, "BR-KSA-68", "The tax currency code (BT-6) must exist.")
	rule(inv.taxCurrency == "" || inv.taxCurrency == Currency, ResultError, "BR-KSA-EN16931-02", "The VAT accounting currency code (BT-6) must be SAR, not %q.", inv.taxCurrency)
	rule(inv.icv != nil && digitsPattern.MatchString(text(inv.icv, "cbc:UUID")), ResultError, "BR-KSA-33", "Each invoice must have an invoice counter value (KSA-16) of digits.")
	if inv.pih != nil {
		rule(isBase64SHA256(text(inv.pih, "cac:Attachment/cbc:EmbeddedDocumentBinaryObject")), ResultWarning, "BR-KSA-26",
			"The previous invoice hash (KSA-13) must be a base64-encoded SHA-256 hash.")
	}
	rule(inv.qr != nil, ResultWarning, "BR-KSA-27", "The document must contain a QR code (KSA-14).")
	rule(inv.sellerName != "", ResultWarning, "BR-06", "An invoice shall contain the seller name (BT-27).")
	rule(vatNumberPattern.MatchString(inv.sellerVAT), ResultError, "BR-KSA-40", "The seller VAT number (BT-31) must contain 15 digits, the first and the last being 3, not %q.", inv.sellerVAT)
	if inv.buyerVAT != nil {
		v := strings.TrimSpace(inv.buyerVAT.Text())
		rule(vatNumberPattern.MatchString(v), ResultError, "BR-KSA-44", "The buyer VAT number (BT-48) must contain 15 digits, the first and the last being 3, not %q.", v)
	}
	if inv.standard() {
		rule(inv.buyerName != nil && strings.TrimSpace(inv.buyerName.Text()) != "", ResultWarning, "BR-KSA-42",
			"The buyer name (BT-44) must be present in a tax invoice and its credit and debit notes.")
		if inv.typeCode == "388" {
			rule(text(inv.root, "cac:Delivery/cbc:ActualDeliveryDate") != "", ResultWarning, "BR-KSA-15", "A tax invoice must contain the supply date (KSA-5).")
		}
	}
	if inv.note() {
		rule(text(inv.root, "cac:PaymentMeans/cbc:InstructionNote") != "", ResultError, "BR-KSA-17",
			"A credit or debit note (381, 383) must contain the reason for its issuing (KSA-10, cac:PaymentMeans/cbc:InstructionNote).")
		rule(text(inv.root, "cac:BillingReference/cac:InvoiceDocumentReference/cbc:ID") != "", ResultWarning, "BR-KSA-56",
			"A credit or debit note must contain the billing reference id (BT-25) of the invoice it corrects.")
	}
	rule(len(inv.lines) > 0, ResultError, "BR-16", "An invoice shall have at least one invoice line (BG-25).")
	checkTotals(r, inv)
}

// saudiTime is the authority's time zone, Arabia Standard Time (UTC+3, no daylight saving).
var saudiTime = time.FixedZone("AST", 3*60*60)

// saudiDate is the calendar date in Saudi Arabia at t, as midnight UTC of that date: the
// current date the authority compares issue dates with. A document dated in Saudi time (as
// the authority's SDK writes it) is from the next UTC day from 21:00 UTC; one dated in UTC
// never is after it.
func saudiDate(t time.Time) time.Time {
	y, m, d := t.In(saudiTime).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// isBase64SHA256 reports whether s is the base64 of a SHA-256 hash, raw (32 bytes) or as
// its hexadecimal text (64 bytes, as the first invoice's "0" hash is written).
func isBase64SHA256(s string) bool {
	b, err := base64.StdEncoding.DecodeString(s)
	return err == nil && (len(b) == 32 || len(b) == 64)
}

// checkTotals evaluates the arithmetic rules of the document totals and of each line.
func checkTotals(r *report, inv xmlInvoice) {
	root := inv.root
	var withSubtotals, withoutSubtotals []*etree.Element
	for _, tt := range root.SelectElements("cac:TaxTotal") {
		if tt.SelectElement("cac:TaxSubtotal") != nil {
			withSubtotals = append(withSubtotals, tt)
		} else {
			withoutSubtotals = append(withoutSubtotals, tt)
		}
	}
	if len(withSubtotals) != 1 {
		r.add(ResultError, CategoryRules, "BR-KSA-EN16931-08", "Only one tax total (BG-22) with tax subtotals must be provided; there are %d.", len(withSubtotals))
	}
	if len(withoutSubtotals) != 1 {
		r.add(ResultWarning, CategoryRules, "BR-KSA-EN16931-09", "One tax total (BG-22) without tax subtotals must be provided when the tax currency code is; there are %d.", len(withoutSubtotals))
	}

	lmt := root.SelectElement("cac:LegalMonetaryTotal")
	if lmt == nil {
		r.add(ResultError, CategoryRules, "BR-12", "An invoice shall have the sum of invoice line net amounts (cac:LegalMonetaryTotal).")
		return
	}
	total := func(tag string) *big.Rat { return decimal(text(lmt, tag)) }
	lineSum := new(big.Rat)
	for _, l := range inv.lines {
		lineSum.Add(lineSum, decimal(text(l, "cbc:LineExtensionAmount")))
		checkLine(r, l)
	}
	allowances, charges := documentAllowanceCharges(root)
	equal := func(a, b *big.Rat) bool { return a.Cmp(b) == 0 }
	if !equal(total("cbc:LineExtensionAmount"), lineSum) {
		r.add(ResultWarning, CategoryRules, "BR-CO-10", "The sum of line net amounts (BT-106) %s must equal the sum of the lines' net amounts (BT-131) %s.",
			text(lmt, "cbc:LineExtensionAmount"), lineSum.FloatString(2))
	}
	exclusive := new(big.Rat).Sub(lineSum, allowances)
	exclusive.Add(exclusive, charges)
	if !equal(total("cbc:TaxExclusiveAmount"), exclusive) {
		r.add(ResultWarning, CategoryRules, "BR-CO-13", "The total without VAT (BT-109) %s must equal the line net amounts minus document allowances plus charges, %s.",
			text(lmt, "cbc:TaxExclusiveAmount"), exclusive.FloatString(2))
	}
	if len(withSubtotals) == 1 {
		tt := withSubtotals[0]
		vat := decimal(text(tt, "cbc:TaxAmount"))
		subtotalSum := new(big.Rat)
		for _, st := range tt.SelectElements("cac:TaxSubtotal") {
			tax := decimal(text(st, "cbc:TaxAmount"))
			if text(st, "cac:TaxCategory/cbc:ID") == "S" {
				checkStandardRate(r, "VAT breakdown", text(st, "cac:TaxCategory/cbc:Percent"))
			}
			subtotalSum.Add(subtotalSum, tax)
			expected := new(big.Rat).Mul(decimal(text(st, "cbc:TaxableAmount")), decimal(text(st, "cac:TaxCategory/cbc:Percent")))
			expected.Quo(expected, big.NewRat(100, 1))
			if !equal(tax, roundCents(expected)) {
				r.add(ResultWarning, CategoryRules, "BR-CO-17", "The VAT of category %s (BT-117) %s must be its taxable amount x rate / 100 rounded to two decimals, %s.",
					text(st, "cac:TaxCategory/cbc:ID"), text(st, "cbc:TaxAmount"), roundCents(expected).FloatString(2))
			}
		}
		if !equal(vat, subtotalSum) {
			r.add(ResultError, CategoryRules, "BR-CO-14", "The total VAT (BT-110) %s must equal the sum of the category VAT amounts (BT-117) %s.",
				text(tt, "cbc:TaxAmount"), subtotalSum.FloatString(2))
		}
		inclusive := new(big.Rat).Add(total("cbc:TaxExclusiveAmount"), vat)
		if !equal(total("cbc:TaxInclusiveAmount"), inclusive) {
			r.add(ResultError, CategoryRules, "BR-CO-15", "The total with VAT (BT-112) %s must equal the total without VAT plus the total VAT, %s.",
				text(lmt, "cbc:TaxInclusiveAmount"), inclusive.FloatString(2))
		}
	}
	payable := new(big.Rat).Sub(total("cbc:TaxInclusiveAmount"), total("cbc:PrepaidAmount"))
	payable.Add(payable, total("cbc:PayableRoundingAmount"))
	if !equal(total("cbc:PayableAmount"), payable) {
		r.add(ResultWarning, CategoryRules, "BR-CO-16", "The amount due (BT-115) %s must equal the total with VAT minus the prepaid amount plus rounding, %s.",
			text(lmt, "cbc:PayableAmount"), payable.FloatString(2))
	}
}

// checkLine evaluates a line's VAT category and rate, its amount with VAT (BR-KSA-51) and
// its net amount (BR-KSA-EN16931-11).
func checkLine(r *report, l *etree.Element) {
	id := text(l, "cbc:ID")
	checkLineCategory(r, id, l)
	net := decimal(text(l, "cbc:LineExtensionAmount"))
	if tt := l.SelectElement("cac:TaxTotal"); tt != nil && tt.SelectElement("cbc:RoundingAmount") != nil {
		withVAT := new(big.Rat).Add(net, decimal(text(tt, "cbc:TaxAmount")))
		if decimal(text(tt, "cbc:RoundingAmount")).Cmp(withVAT) != 0 {
			r.add(ResultWarning, CategoryRules, "BR-KSA-51", "Line %s: the amount with VAT (KSA-12) %s must be the net amount plus the line VAT, %s.",
				id, text(tt, "cbc:RoundingAmount"), withVAT.FloatString(2))
		}
	}
	price := decimal(text(l, "cac:Price/cbc:PriceAmount"))
	if base := text(l, "cac:Price/cbc:BaseQuantity"); base != "" && decimal(base).Sign() != 0 {
		price.Quo(price, decimal(base))
	}
	expected := new(big.Rat).Mul(decimal(text(l, "cbc:InvoicedQuantity")), price)
	for _, ac := range l.SelectElements("cac:AllowanceCharge") {
		amount := decimal(text(ac, "cbc:Amount"))
		if text(ac, "cbc:ChargeIndicator") == "true" {
			expected.Add(expected, amount)
		} else {
			expected.Sub(expected, amount)
		}
	}
	if roundCents(expected).Cmp(net) != 0 {
		r.add(ResultWarning, CategoryRules, "BR-KSA-EN16931-11", "Line %s: the net amount (BT-131) %s must be quantity x net price + charges - allowances, %s.",
			id, text(l, "cbc:LineExtensionAmount"), roundCents(expected).FloatString(2))
	}
}

// lineRateRules are the rules on the rate of a line of category Z, E and O.
var lineRateRules = map[string]string{"Z": "BR-Z-05", "E": "BR-E-05", "O": "BR-KSA-11"}

// checkLineCategory checks that the line has a VAT category (BR-CO-04) and the rate that
// category allows.
func checkLineCategory(r *report, id string, l *etree.Element) {
	var category *etree.Element
	for _, c := range l.FindElements("cac:Item/cac:ClassifiedTaxCategory") {
		if strings.EqualFold(text(c, "cac:TaxScheme/cbc:ID"), "VAT") {
			category = c
		}
	}
	if category == nil {
		r.add(ResultError, CategoryRules, "BR-CO-04", "Line %s must have an item VAT category code (BT-151) in a tax category of the VAT scheme.", id)
		return
	}
	code, percent := text(category, "cbc:ID"), text(category, "cbc:Percent")
	rate := decimal(percent)
	switch code {
	case "S":
		checkStandardRate(r, "Line "+id, percent)
		if rate.Sign() <= 0 {
			r.add(ResultWarning, CategoryRules, "BR-S-05", "Line %s of category S must have a VAT rate above zero.", id)
		}
	case "Z", "E", "O":
		if percent != "" && rate.Sign() != 0 {
			r.add(ResultError, CategoryRules, lineRateRules[code], "Line %s of category %s must have the VAT rate 0, not %s.", id, code, percent)
		}
	}
}

// checkStandardRate applies BR-KSA-84 as the KSA file reads it: a category S rate whose
// integer part is 15, or exactly 5.
func checkStandardRate(r *report, where, percent string) {
	if percent == "" {
		return
	}
	rate := decimal(percent)
	if floor := new(big.Int).Div(rate.Num(), rate.Denom()); floor.Cmp(big.NewInt(15)) == 0 || rate.Cmp(big.NewRat(5, 1)) == 0 {
		return
	}
	r.add(ResultError, CategoryRules, "BR-KSA-84", "%s: a VAT rate of category S must be 15 or 5 %%, not %s.", where, percent)
}

// documentAllowanceCharges sums the document-level allowances and charges.
func documentAllowanceCharges(root *etree.Element) (allowances, charges *big.Rat) {
	allowances, charges = new(big.Rat), new(big.Rat)
	for _, ac := range root.SelectElements("cac:AllowanceCharge") {
		if text(ac, "cbc:ChargeIndicator") == "true" {
			charges.Add(charges, decimal(text(ac, "cbc:Amount")))
		} else {
			allowances.Add(allowances, decimal(text(ac, "cbc:Amount")))
		}
	}
	return allowances, charges
}

// maxDecimalLength bounds the text read as a decimal: big.Rat would accept an exponent that
// costs unbounded time and memory ("1e99999999").
const maxDecimalLength = 40

// decimal reads an xs:decimal (digits, a sign and a point; no exponent); anything else,
// including an absent value, is 0: the schema check reports malformed decimals.
func decimal(s string) *big.Rat {
	if s == "" || len(s) > maxDecimalLength || strings.ContainsAny(s, "eE/") {
		return new(big.Rat)
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return new(big.Rat)
	}
	return r
}

// roundCents rounds r half away from zero to two decimals.
func roundCents(r *big.Rat) *big.Rat {
	return new(big.Rat).SetFrac(halfUp(new(big.Rat).Mul(r, big.NewRat(100, 1))), big.NewInt(100))
}
