package einvoice

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"unicode/utf8"
)

var (
	vatNumberPattern = regexp.MustCompile(`^3[0-9]{13}3$`)
	alphanumeric     = regexp.MustCompile(`^[A-Za-z0-9]+$`)
	fourDigits       = regexp.MustCompile(`^[0-9]{4}$`)
	fiveDigits       = regexp.MustCompile(`^[0-9]{5}$`)
	// sellerIDRank is the order in which BR-KSA-08 asks for the seller identification when
	// several exist: CRN, MOM, MLS, 700, SAG, OTH.
	sellerIDRank       = map[string]int{"CRN": 1, "MOM": 2, "MLS": 3, "700": 4, "SAG": 5, "OTH": 6}
	businessBuyerTypes = map[string]bool{"business": true, "government": true}
	// Official rule of each Z, E, O check: the line rate (BR-Z-05, BR-E-05 in the CEN file,
	// BR-KSA-11 in the KSA file for O) and the exemption reason code of the VAT breakdown
	// (BR-KSA-69, BR-KSA-23, BR-KSA-24 in the KSA file, all warnings there).
	zeroRateRuleByCate  = map[string]string{"Z": "BR-Z-05", "E": "BR-E-05", "O": "BR-KSA-11"}
	exemptionRuleByCate = map[string]string{"Z": "BR-KSA-69", "E": "BR-KSA-23", "O": "BR-KSA-24"}
	// citizenExemptions need the buyer's national id (BR-KSA-49) and name (BR-KSA-25).
	citizenExemptions = map[string]bool{"VATEX-SA-EDU": true, "VATEX-SA-HEA": true}
)

// The rules below mirror the official ZATCA SDK rule files (Data/Rules/schematrons:
// 20210819_ZATCA_E-invoice_Validation_Rules.xsl, "KSA file", and CEN-EN16931-UBL.xsl, "CEN
// file"): each check names the rule id and uses the severity (flag) those files give it. Checks
// with an SBX- code are this sandbox's own; no official rule of those files covers them.
// make check-schematron runs the official files over generated invoices (docs/einvoice-rules.md).

// issues collects findings in request order.
type issues []Issue

func (is *issues) add(code, severity, path, format string, args ...any) {
	*is = append(*is, Issue{Code: code, Severity: severity, Path: path, Message: fmt.Sprintf(format, args...)})
}

// Validate checks req against the business rules listed in Rules, given its computed totals.
// Findings are issues, never errors: a request that breaks a rule still yields an invoice,
// marked invalid when a finding has severity error.
func Validate(req Request, totals Totals) []Issue {
	is := issues{}
	kind := KindOfRequest(req)
	validateSeller(&is, req.Seller)
	validateBuyer(&is, req.Buyer, req.Seller, kind)
	validateReference(&is, req, kind)
	if kind.Standard && !kind.Note() && req.Supply == nil {
		// KSA file BR-KSA-15 (warning).
		is.add("BR-KSA-15", SeverityWarning, "/supply", "A standard tax invoice should contain the supply date (supply.supply_date).")
	}
	if s := req.Supply; s != nil && s.EndDate != nil && *s.EndDate < s.SupplyDate {
		// KSA file BR-KSA-36 (warning).
		is.add("BR-KSA-36", SeverityWarning, "/supply/end_date",
			"The supply end date %s must not be before the supply date %s.", *s.EndDate, s.SupplyDate)
	}
	seen := map[string]int{}
	for i, l := range req.Lines {
		base := fmt.Sprintf("/line_items/%d", i)
		if first, dup := seen[l.ID]; dup {
			is.add("SBX-LINE-01", SeverityError, base+"/line_id", "Line id %q is already used by line %d.", l.ID, first)
		} else {
			seen[l.ID] = i
		}
		if utf8.RuneCountInString(l.ID) > maxLineIDLength {
			// CEN file BR-KSA-F-06-C17 (error): the line identifier (BT-126) has 1 to 6 characters.
			is.add("BR-KSA-F-06-C17", SeverityError, base+"/line_id",
				"The line identifier has at most %d characters; %q has %d.", maxLineIDLength, l.ID, utf8.RuneCountInString(l.ID))
		}
		validateLine(&is, base, l, req.Buyer, kind)
		if i < len(totals.Lines) && totals.Lines[i].Net < 0 {
			is.add("SBX-LINE-02", SeverityError, base, "The line's net amount is negative (%s SAR): discounts exceed quantity x unit price plus charges.",
				FormatAmount(totals.Lines[i].Net))
		}
	}
	if req.TaxCalculationMode == ModeClientSupplied && !anySupplied(req) {
		is.add("SBX-CALC-02", SeverityWarning, "/tax_calculation_mode",
			"client_supplied mode without supplied_amounts or supplied_totals: there is nothing to compare.")
	}
	return is
}

// maxDecimalDigits is the most digits libxml2 reads of an xs:decimal.
const maxDecimalDigits = 24

// decimalDigits counts the digits of a plain decimal as libxml2 does: every digit but the
// leading zeros of its integer part.
func decimalDigits(s string) int {
	integer, fraction, _ := strings.Cut(strings.TrimLeft(s, "+-"), ".")
	return len(strings.TrimLeft(integer, "0")) + len(fraction)
}

// maxLineIDLength is the longest line identifier BR-KSA-F-06-C17 accepts.
const maxLineIDLength = 6

func validateSeller(is *issues, s Seller) {
	if !vatNumberPattern.MatchString(s.VATNumber) {
		// KSA file BR-KSA-40 (error).
		is.add("BR-KSA-40", SeverityError, "/seller/vat_number",
			"The seller VAT number must have 15 digits, the first and the last being 3.")
	}
	// KSA file BR-KSA-08 (warning): one seller identification with scheme CRN, MOM, MLS, SAG,
	// OTH or 700, alphanumeric. Only one is ever written (sellerIdentification): the official
	// rule cannot evaluate an invoice with several.
	ids := sellerIdentifiers(s)
	switch {
	case len(ids) == 0:
		is.add("BR-KSA-08", SeverityWarning, "/seller/additional_identifiers",
			"The seller should have one identification (commercial_registration, or an additional identifier with scheme CRN, MOM, MLS, 700, SAG or OTH).")
	case len(ids) > 1:
		chosen, _ := sellerIdentification(s)
		is.add("BR-KSA-08", SeverityWarning, "/seller/additional_identifiers",
			"The seller identification exists only once in the invoice: of the %d given, only %s %s was written (order CRN, MOM, MLS, 700, SAG, OTH).",
			len(ids), chosen.Scheme, chosen.Value)
	}
	for _, id := range ids {
		if sellerIDRank[id.Scheme] == 0 || !alphanumeric.MatchString(id.Value) {
			is.add("BR-KSA-08", SeverityWarning, id.path,
				"The seller identification must use scheme CRN, MOM, MLS, 700, SAG or OTH and contain only letters and digits.")
		}
	}
	a := s.Address
	if a == nil {
		// CEN file BR-08 (warning).
		is.add("BR-08", SeverityWarning, "/seller/address", "The invoice should contain the seller postal address.")
		return
	}
	var missing []string
	for _, f := range []struct {
		name string
		v    *string
	}{{"street_name", a.StreetName}, {"building_number", a.BuildingNumber}, {"postal_code", a.PostalCode}, {"city", a.City}, {"district", a.District}} {
		if f.v == nil {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		// KSA file BR-KSA-09 (warning); the country code, also required, is always written.
		is.add("BR-KSA-09", SeverityWarning, "/seller/address",
			"The seller address should contain street name, building number, postal code, city, district and country code; missing: %s.", strings.Join(missing, ", "))
	}
	if a.BuildingNumber == nil || !fourDigits.MatchString(*a.BuildingNumber) {
		// KSA file BR-KSA-37 (warning): it also fails when the building number is missing.
		is.add("BR-KSA-37", SeverityWarning, "/seller/address/building_number", "The seller building number must contain 4 digits.")
	}
	if a.PostalCode == nil || !fiveDigits.MatchString(*a.PostalCode) {
		// KSA file BR-KSA-66 (warning): it also fails when the postal code is missing.
		is.add("BR-KSA-66", SeverityWarning, "/seller/address/postal_code", "The seller postal code must be 5 digits.")
	}
}

// sellerIdentifier is one seller identification and where the request gave it.
type sellerIdentifier struct {
	Identifier
	path string
}

// sellerIdentifiers merges commercial_registration (scheme CRN) with the additional
// identifiers; an identical scheme and value given both ways counts once.
func sellerIdentifiers(s Seller) []sellerIdentifier {
	var ids []sellerIdentifier
	seen := map[Identifier]bool{}
	if s.CommercialRegistration != nil {
		id := Identifier{Scheme: "CRN", Value: *s.CommercialRegistration}
		ids = append(ids, sellerIdentifier{id, "/seller/commercial_registration"})
		seen[id] = true
	}
	for i, id := range s.Identifiers {
		if seen[id] {
			continue
		}
		seen[id] = true
		ids = append(ids, sellerIdentifier{id, fmt.Sprintf("/seller/additional_identifiers/%d/value", i)})
	}
	return ids
}

// sellerIdentification is the one seller identification the invoice carries (BT-29): the
// first in the order BR-KSA-08 gives (CRN, MOM, MLS, 700, SAG, OTH; unknown schemes last),
// the earliest given within a scheme.
func sellerIdentification(s Seller) (sellerIdentifier, bool) {
	ids := sellerIdentifiers(s)
	if len(ids) == 0 {
		return sellerIdentifier{}, false
	}
	rank := func(id sellerIdentifier) int {
		if r := sellerIDRank[id.Scheme]; r > 0 {
			return r
		}
		return len(sellerIDRank) + 1
	}
	best := ids[0]
	for _, id := range ids[1:] {
		if rank(id) < rank(best) {
			best = id
		}
	}
	return best, true
}

func validateBuyer(is *issues, b *Buyer, s Seller, kind Kind) {
	if kind.Standard {
		validateStandardBuyer(is, b)
	} else if b == nil || (b.LegalName == nil && b.VATNumber == nil && b.CommercialRegistration == nil && b.Address == nil &&
		b.PostalAddress == nil && len(b.Identifiers) == 0) {
		is.add("SBX-NOTE-01", SeverityWarning, "/buyer", "No buyer details: allowed on a simplified invoice.")
	}
	if b == nil {
		return
	}
	if b.VATNumber != nil {
		switch {
		case !vatNumberPattern.MatchString(*b.VATNumber):
			// KSA file BR-KSA-44 (error).
			is.add("BR-KSA-44", SeverityError, "/buyer/vat_number", "The buyer VAT number must have 15 digits, the first and the last being 3.")
		case *b.VATNumber == s.VATNumber:
			// KSA file BR-CUSTOM-VALIDATION-01 (error).
			is.add("BR-CUSTOM-VALIDATION-01", SeverityError, "/buyer/vat_number", "The buyer VAT number must not be the seller's VAT number.")
		case businessBuyerTypes[b.BuyerType] && !kind.Standard:
			is.add("SBX-TYPE-01", SeverityWarning, "/buyer/buyer_type",
				"A VAT-registered %s buyer normally gets a standard tax invoice; a simplified invoice was generated as requested.", b.BuyerType)
		}
	}
	// KSA file BR-KSA-14 (error): the scheme is one of the contract's enumeration already.
	if b.CommercialRegistration != nil && !alphanumeric.MatchString(*b.CommercialRegistration) {
		is.add("BR-KSA-14", SeverityError, "/buyer/commercial_registration", "The buyer identification must contain only letters and digits.")
	}
	for i, id := range b.Identifiers {
		if !alphanumeric.MatchString(id.Value) {
			is.add("BR-KSA-14", SeverityError, fmt.Sprintf("/buyer/additional_identifiers/%d/value", i),
				"The buyer identification must contain only letters and digits.")
		}
	}
}

// validateStandardBuyer checks what a standard (B2B) document needs of its buyer: a name, a
// VAT number or another identification (BR-KSA-81) and a postal address with street, city and
// country (BR-10, BR-KSA-10), complete as BR-KSA-63 and BR-KSA-67 read a Saudi one. The KSA
// and CEN files flag the first three as warnings; a B2B document without them identifies no
// buyer, so this sandbox refuses it (SBX-STD-01 to 03, errors).
func validateStandardBuyer(is *issues, b *Buyer) {
	if b == nil {
		b = &Buyer{}
	}
	if b.LegalName == nil {
		is.add("SBX-STD-01", SeverityError, "/buyer/legal_name", "A standard tax document needs the buyer's name (BT-44).")
	}
	if b.VATNumber == nil && b.CommercialRegistration == nil && len(b.Identifiers) == 0 {
		is.add("SBX-STD-02", SeverityError, "/buyer/vat_number",
			"A standard tax document needs the buyer's VAT number or another identification (commercial_registration or additional_identifiers; BR-KSA-81).")
	}
	a := b.PostalAddress
	if a == nil || a.StreetName == nil || a.City == nil {
		is.add("SBX-STD-03", SeverityError, "/buyer/postal_address",
			"A standard tax document needs the buyer's postal address (buyer.postal_address) with street name, city and country code (BR-10, BR-KSA-10).")
		return
	}
	if a.CountryCode != "SA" {
		return
	}
	var missing []string
	for _, f := range []struct {
		name string
		v    *string
	}{{"building_number", a.BuildingNumber}, {"postal_code", a.PostalCode}, {"district", a.District}} {
		if f.v == nil {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		// KSA file BR-KSA-63 (warning).
		is.add("BR-KSA-63", SeverityWarning, "/buyer/postal_address",
			"A Saudi buyer address should contain street name, building number, postal code, city, district and country code; missing: %s.", strings.Join(missing, ", "))
	}
	if a.PostalCode != nil && !fiveDigits.MatchString(*a.PostalCode) {
		// KSA file BR-KSA-67 (warning).
		is.add("BR-KSA-67", SeverityWarning, "/buyer/postal_address/postal_code", "A Saudi buyer postal code must be 5 digits.")
	}
}

// RuleNoteReference is the rule of a note that names no invoice it can correct.
const RuleNoteReference = "SBX-REF-01"

// validateReference checks the billing reference and reason of a note: a credit or debit note
// says which invoice it corrects (SBX-REF-01; BR-KSA-56 in the KSA file, a warning there, but a
// note that corrects nothing cannot be matched to its invoice) and why (BR-KSA-17, error). A tax
// invoice carries neither; given one, it is ignored (SBX-REF-02).
func validateReference(is *issues, req Request, kind Kind) {
	if !kind.Note() {
		if req.BillingReference != nil || req.NoteReason != nil {
			is.add("SBX-REF-02", SeverityWarning, "/billing_reference",
				"Only credit and debit notes refer to an original invoice and give a reason; billing_reference and note_reason were ignored.")
		}
		return
	}
	if req.BillingReference == nil || req.BillingReference.Number == "" {
		is.add(RuleNoteReference, SeverityError, "/billing_reference",
			"A credit or debit note refers to the invoice it corrects (billing_reference: its invoice_id, or its number, BT-25).")
	}
	if req.NoteReason == nil || strings.TrimSpace(*req.NoteReason) == "" {
		// KSA file BR-KSA-17 (error).
		is.add("BR-KSA-17", SeverityError, "/note_reason", "A credit or debit note gives the reason it was issued (note_reason, KSA-10).")
	}
}

// hasNationalID reports whether the buyer has an identification with scheme NAT.
func hasNationalID(b *Buyer) bool {
	if b == nil {
		return false
	}
	for _, id := range b.Identifiers {
		if id.Scheme == "NAT" {
			return true
		}
	}
	return false
}

func validateLine(is *issues, base string, l Line, buyer *Buyer, kind Kind) {
	if n := decimalDigits(decimalString(l.Quantity)); n > maxDecimalDigits {
		// The quantity is written as the decimal the client sent (cbc:InvoicedQuantity); with
		// more digits, libxml2 (xmllint, and this service's validator) refuses the document.
		is.add("SBX-LINE-03", SeverityError, base+"/quantity",
			"The quantity %s has %d digits; an XML decimal is read with at most %d.", decimalString(l.Quantity), n, maxDecimalDigits)
	}
	switch l.TaxCategory {
	case "S":
		validateStandardRate(is, base, l.TaxRate)
		if l.TaxExemptionReason != nil {
			// CEN file BR-S-10 (warning); the reason is not written, so the invoice passes it.
			is.add("BR-S-10", SeverityWarning, base+"/tax_exemption_reason", "A standard-rated line has no exemption reason; it was ignored.")
		}
	case "Z", "E", "O":
		if l.TaxRate != 0 {
			is.add(zeroRateRuleByCate[l.TaxCategory], SeverityError, base+"/tax_rate", "A line of VAT category %s has rate 0.", l.TaxCategory)
		}
		switch {
		case l.TaxExemptionReason == nil:
			is.add(exemptionRuleByCate[l.TaxCategory], SeverityWarning, base+"/tax_exemption_reason",
				"A line of VAT category %s should have a VATEX-SA exemption reason code.", l.TaxCategory)
		case exemptionCategory[*l.TaxExemptionReason] != l.TaxCategory:
			// KSA file BR-KSA-CL-04 (warning).
			is.add("BR-KSA-CL-04", SeverityWarning, base+"/tax_exemption_reason",
				"%q is not a VATEX-SA exemption reason code of VAT category %s.", *l.TaxExemptionReason, l.TaxCategory)
		case citizenExemptions[*l.TaxExemptionReason]:
			if !hasNationalID(buyer) {
				// KSA file BR-KSA-49 (error).
				is.add("BR-KSA-49", SeverityError, base+"/tax_exemption_reason",
					"Exemption reason %s needs the buyer's national id: a buyer additional identifier with scheme NAT.", *l.TaxExemptionReason)
			}
			if !kind.Standard && (buyer == nil || buyer.LegalName == nil) {
				// KSA file BR-KSA-25 (warning).
				is.add("BR-KSA-25", SeverityWarning, base+"/tax_exemption_reason",
					"Exemption reason %s on a simplified invoice needs the buyer's name (buyer.legal_name).", *l.TaxExemptionReason)
			}
		}
	}
	for j, d := range l.Discounts {
		p := fmt.Sprintf("%s/discounts/%d", base, j)
		if d.Reason == nil && d.ReasonCode == nil {
			is.add("SBX-AC-01", SeverityError, p, "A line discount needs a reason or a reason code.")
		}
		if d.ReasonCode != nil && !allowanceReasonCodes[*d.ReasonCode] {
			is.add("SBX-AC-02", SeverityError, p+"/reason_code", "%q is not an UNTDID 5189 allowance reason code.", *d.ReasonCode)
		}
	}
	for j, c := range l.Charges {
		p := fmt.Sprintf("%s/charges/%d", base, j)
		if c.Reason == nil && c.ReasonCode == nil {
			is.add("SBX-AC-03", SeverityError, p, "A line charge needs a reason or a reason code.")
			continue
		}
		if c.ReasonCode == nil {
			// KSA file BR-KSA-20 (warning).
			is.add("BR-KSA-20", SeverityWarning, p+"/reason_code", "A line charge should have a reason code (UNTDID 7161).")
		}
		if c.Reason == nil {
			// KSA file BR-KSA-22 (warning).
			is.add("BR-KSA-22", SeverityWarning, p+"/reason", "A line charge should have a reason text.")
		}
	}
}

// validateStandardRate checks the rate of a standard-rated line: above zero (CEN file BR-S-05,
// a warning there), 15 or 5 as the KSA file reads it (BR-KSA-84, error: a rate whose integer
// part is 15, or exactly 5), and the 15 % this sandbox accepts (SBX-RATE-01).
func validateStandardRate(is *issues, base string, rate float64) {
	if rate <= 0 {
		is.add("BR-S-05", SeverityWarning, base+"/tax_rate", "A standard-rated line needs a VAT rate above zero.")
	}
	switch {
	case rate == StandardRate:
	case !(math.Floor(rate) == StandardRate || rate == 5):
		is.add("BR-KSA-84", SeverityError, base+"/tax_rate", "A standard-rated line has rate 15 or 5, not %s.", decimalString(rate))
	default:
		is.add("SBX-RATE-01", SeverityError, base+"/tax_rate", "A standard-rated line uses the KSA standard rate of %d %%, not %s %%.",
			StandardRate, decimalString(rate))
	}
}

func anySupplied(req Request) bool {
	if req.SuppliedTotals != nil {
		return true
	}
	for _, l := range req.Lines {
		if l.Supplied != nil {
			return true
		}
	}
	return false
}

// Discrepancies lists every client-supplied amount that differs from the computed one. Only
// client_supplied requests are compared; the service's amounts always win.
func Discrepancies(req Request, t Totals) []Discrepancy {
	ds := []Discrepancy{}
	if req.TaxCalculationMode != ModeClientSupplied {
		return ds
	}
	check := func(path, field string, supplied *int64, computed int64) {
		if supplied != nil && *supplied != computed {
			ds = append(ds, Discrepancy{Path: path, Field: field, Supplied: *supplied, Computed: computed})
		}
	}
	for i, l := range req.Lines {
		if l.Supplied == nil || i >= len(t.Lines) {
			continue
		}
		base := fmt.Sprintf("/line_items/%d/supplied_amounts/", i)
		check(base+"net_amount", "net_amount", l.Supplied.NetAmount, t.Lines[i].Net)
		check(base+"vat_amount", "vat_amount", l.Supplied.VATAmount, t.Lines[i].VAT)
		check(base+"amount_with_vat", "amount_with_vat", l.Supplied.AmountWithVAT, t.Lines[i].WithVAT)
	}
	if s := req.SuppliedTotals; s != nil {
		check("/supplied_totals/line_extension_amount", "line_extension_amount", s.LineExtensionAmount, t.LineExtension)
		check("/supplied_totals/tax_exclusive_amount", "tax_exclusive_amount", s.TaxExclusiveAmount, t.TaxExclusive)
		check("/supplied_totals/vat_amount", "vat_amount", s.VATAmount, t.VAT)
		check("/supplied_totals/tax_inclusive_amount", "tax_inclusive_amount", s.TaxInclusiveAmount, t.TaxInclusive)
		check("/supplied_totals/payable_amount", "payable_amount", s.PayableAmount, t.Payable)
	}
	return ds
}
