package einvoice

import (
	"fmt"
	"regexp"
	"strings"
)

var (
	vatNumberPattern    = regexp.MustCompile(`^3[0-9]{13}3$`)
	alphanumeric        = regexp.MustCompile(`^[A-Za-z0-9]+$`)
	fourDigits          = regexp.MustCompile(`^[0-9]{4}$`)
	fiveDigits          = regexp.MustCompile(`^[0-9]{5}$`)
	sellerIDSchemes     = map[string]bool{"CRN": true, "MOM": true, "MLS": true, "SAG": true, "OTH": true, "700": true}
	businessBuyerTypes  = map[string]bool{"business": true, "government": true}
	exemptionRuleByCate = map[string]string{"Z": "BR-KSA-69", "E": "BR-E-10", "O": "BR-O-10"}
	zeroRateRuleByCate  = map[string]string{"Z": "BR-Z-05", "E": "BR-E-05", "O": "BR-O-05"}
)

// issues collects findings in request order.
type issues []Issue

func (is *issues) add(code, severity, path, format string, args ...any) {
	*is = append(*is, Issue{Code: code, Severity: severity, Path: path, Message: fmt.Sprintf(format, args...)})
}

// Validate checks req against the business rules listed in Rules, given its computed totals.
// Findings are issues, never errors: a request that breaks a rule still yields an invoice,
// marked invalid.
func Validate(req Request, totals Totals) []Issue {
	is := issues{}
	validateSeller(&is, req.Seller)
	validateBuyer(&is, req.Buyer)
	if s := req.Supply; s != nil && s.EndDate != nil && *s.EndDate < s.SupplyDate {
		is.add("BR-KSA-36", SeverityWarning, "/supply/end_date",
			"The supply end date %s is before the supply date %s.", *s.EndDate, s.SupplyDate)
	}
	seen := map[string]int{}
	for i, l := range req.Lines {
		base := fmt.Sprintf("/line_items/%d", i)
		if first, dup := seen[l.ID]; dup {
			is.add("SBX-LINE-01", SeverityError, base+"/line_id", "Line id %q is already used by line %d.", l.ID, first)
		} else {
			seen[l.ID] = i
		}
		validateLine(&is, base, l)
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

func validateSeller(is *issues, s Seller) {
	if !vatNumberPattern.MatchString(s.VATNumber) {
		is.add("BR-KSA-40", SeverityError, "/seller/vat_number",
			"The seller VAT number must have 15 digits and start and end with 3.")
	}
	ids := sellerIdentifiers(s)
	switch {
	case len(ids) == 0:
		is.add("BR-KSA-08", SeverityError, "/seller/additional_identifiers",
			"The seller needs one identification (commercial_registration, or an additional identifier with scheme CRN, MOM, MLS, SAG, OTH or 700).")
	case len(ids) > 1:
		is.add("BR-KSA-08", SeverityError, "/seller/additional_identifiers",
			"The seller identification must exist only once; %d were given.", len(ids))
	}
	for _, id := range ids {
		if !sellerIDSchemes[id.Scheme] || !alphanumeric.MatchString(id.Value) {
			is.add("BR-KSA-08", SeverityError, id.path,
				"The seller identification must use scheme CRN, MOM, MLS, SAG, OTH or 700 and contain only letters and digits.")
		}
	}
	a := s.Address
	if a == nil {
		is.add("BR-08", SeverityError, "/seller/address", "The seller postal address is required.")
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
		is.add("BR-KSA-09", SeverityWarning, "/seller/address",
			"The seller address should contain street name, building number, postal code, city and district; missing: %s.", strings.Join(missing, ", "))
	}
	if a.BuildingNumber != nil && !fourDigits.MatchString(*a.BuildingNumber) {
		is.add("BR-KSA-37", SeverityWarning, "/seller/address/building_number", "The seller building number must contain 4 digits.")
	}
	if a.PostalCode != nil && !fiveDigits.MatchString(*a.PostalCode) {
		is.add("BR-KSA-66", SeverityWarning, "/seller/address/postal_code", "The seller postal code must contain 5 digits.")
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

func validateBuyer(is *issues, b *Buyer) {
	if b == nil || (b.LegalName == nil && b.VATNumber == nil && b.CommercialRegistration == nil && b.Address == nil && len(b.Identifiers) == 0) {
		is.add("SBX-NOTE-01", SeverityWarning, "/buyer", "No buyer details: allowed on a simplified invoice.")
		if b == nil {
			return
		}
	}
	if b.VATNumber != nil {
		if !vatNumberPattern.MatchString(*b.VATNumber) {
			is.add("BR-KSA-44", SeverityError, "/buyer/vat_number", "The buyer VAT number must have 15 digits and start and end with 3.")
		} else if businessBuyerTypes[b.BuyerType] {
			is.add("SBX-TYPE-01", SeverityWarning, "/buyer/buyer_type",
				"A VAT-registered %s buyer normally gets a standard tax invoice; a simplified invoice was generated as requested.", b.BuyerType)
		}
	}
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

func validateLine(is *issues, base string, l Line) {
	switch l.TaxCategory {
	case "S":
		if l.TaxRate <= 0 {
			is.add("BR-S-05", SeverityError, base+"/tax_rate", "A standard-rated line needs a VAT rate above zero.")
		} else if l.TaxRate != StandardRate {
			is.add("SBX-RATE-01", SeverityError, base+"/tax_rate", "A standard-rated line uses the KSA standard rate of %d %%, not %s %%.",
				StandardRate, decimalString(l.TaxRate))
		}
		if l.TaxExemptionReason != nil {
			is.add("BR-S-10", SeverityWarning, base+"/tax_exemption_reason", "A standard-rated line has no exemption reason; it was ignored.")
		}
	case "Z", "E", "O":
		if l.TaxRate != 0 {
			is.add(zeroRateRuleByCate[l.TaxCategory], SeverityError, base+"/tax_rate", "A line of VAT category %s has rate 0.", l.TaxCategory)
		}
		switch {
		case l.TaxExemptionReason == nil:
			is.add(exemptionRuleByCate[l.TaxCategory], SeverityError, base+"/tax_exemption_reason",
				"A line of VAT category %s needs a VATEX-SA exemption reason code.", l.TaxCategory)
		case exemptionCategory[*l.TaxExemptionReason] != l.TaxCategory:
			is.add("BR-KSA-CL-04", SeverityError, base+"/tax_exemption_reason",
				"%q is not a VATEX-SA exemption reason code of VAT category %s.", *l.TaxExemptionReason, l.TaxCategory)
		}
	}
	for j, d := range l.Discounts {
		p := fmt.Sprintf("%s/discounts/%d", base, j)
		if d.Reason == nil && d.ReasonCode == nil {
			is.add("BR-41", SeverityError, p, "A line discount needs a reason or a reason code.")
		}
		if d.ReasonCode != nil && !allowanceReasonCodes[*d.ReasonCode] {
			is.add("BR-CL-19", SeverityError, p+"/reason_code", "%q is not an UNTDID 5189 allowance reason code.", *d.ReasonCode)
		}
	}
	for j, c := range l.Charges {
		if c.Reason == nil && c.ReasonCode == nil {
			is.add("BR-43", SeverityError, fmt.Sprintf("%s/charges/%d", base, j), "A line charge needs a reason or a reason code.")
		}
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
