package einvoice_test

import (
	"strings"
	"testing"

	"github.com/provider/coreapi/internal/einvoice"
)

// TestValidate_EveryRule triggers each rule of einvoice.Rules with one change to a request
// that breaks no rule, and checks the finding's severity and path.
func TestValidate_EveryRule(t *testing.T) {
	t.Parallel()
	triggers := map[string]struct {
		path   string
		change func(r *einvoice.Request)
	}{
		"BR-KSA-40":               {"/seller/vat_number", func(r *einvoice.Request) { r.Seller.VATNumber = "210123456700003" }},
		"BR-KSA-44":               {"/buyer/vat_number", func(r *einvoice.Request) { r.Buyer.VATNumber = ptr("31012345670000") }},
		"BR-CUSTOM-VALIDATION-01": {"/buyer/vat_number", func(r *einvoice.Request) { r.Buyer.VATNumber = ptr(r.Seller.VATNumber) }},
		"BR-KSA-08": {"/seller/additional_identifiers", func(r *einvoice.Request) {
			r.Seller.Identifiers = append(r.Seller.Identifiers, einvoice.Identifier{Scheme: "MOM", Value: "77"})
		}},
		"BR-KSA-14":       {"/buyer/additional_identifiers/0/value", func(r *einvoice.Request) { r.Buyer.Identifiers[0].Value = "12-34" }},
		"BR-08":           {"/seller/address", func(r *einvoice.Request) { r.Seller.Address = nil }},
		"BR-KSA-09":       {"/seller/address", func(r *einvoice.Request) { r.Seller.Address.District = nil }},
		"BR-KSA-37":       {"/seller/address/building_number", func(r *einvoice.Request) { r.Seller.Address.BuildingNumber = ptr("29") }},
		"BR-KSA-66":       {"/seller/address/postal_code", func(r *einvoice.Request) { r.Seller.Address.PostalCode = ptr("1221") }},
		"BR-KSA-36":       {"/supply/end_date", func(r *einvoice.Request) { r.Supply.EndDate = ptr("2025-02-28") }},
		"BR-KSA-F-06-C17": {"/line_items/1/line_id", func(r *einvoice.Request) { r.Lines[1].ID = "LINE-02" }},
		"BR-S-05":         {"/line_items/0/tax_rate", func(r *einvoice.Request) { r.Lines[0].TaxRate = 0 }},
		"BR-KSA-84":       {"/line_items/0/tax_rate", func(r *einvoice.Request) { r.Lines[0].TaxRate = 12 }},
		"SBX-RATE-01":     {"/line_items/0/tax_rate", func(r *einvoice.Request) { r.Lines[0].TaxRate = 5 }},
		"BR-Z-05":         {"/line_items/2/tax_rate", func(r *einvoice.Request) { r.Lines[2].TaxRate = 15 }},
		"BR-E-05":         {"/line_items/3/tax_rate", func(r *einvoice.Request) { r.Lines[3].TaxRate = 15 }},
		"BR-KSA-11":       {"/line_items/4/tax_rate", func(r *einvoice.Request) { r.Lines[4].TaxRate = 15 }},
		"BR-KSA-69":       {"/line_items/2/tax_exemption_reason", func(r *einvoice.Request) { r.Lines[2].TaxExemptionReason = nil }},
		"BR-KSA-23":       {"/line_items/3/tax_exemption_reason", func(r *einvoice.Request) { r.Lines[3].TaxExemptionReason = nil }},
		"BR-KSA-24":       {"/line_items/4/tax_exemption_reason", func(r *einvoice.Request) { r.Lines[4].TaxExemptionReason = nil }},
		"BR-KSA-CL-04":    {"/line_items/2/tax_exemption_reason", func(r *einvoice.Request) { r.Lines[2].TaxExemptionReason = ptr("VATEX-SA-29") }},
		"BR-KSA-49": {"/line_items/2/tax_exemption_reason", func(r *einvoice.Request) {
			r.Lines[2].TaxExemptionReason = ptr("VATEX-SA-EDU")
			r.Buyer.Identifiers[0].Scheme = "IQA"
		}},
		"BR-KSA-25": {"/line_items/2/tax_exemption_reason", func(r *einvoice.Request) {
			r.Lines[2].TaxExemptionReason = ptr("VATEX-SA-HEA")
			r.Buyer.LegalName = nil
		}},
		"BR-S-10": {"/line_items/0/tax_exemption_reason", func(r *einvoice.Request) { r.Lines[0].TaxExemptionReason = ptr("VATEX-SA-32") }},
		"SBX-AC-01": {"/line_items/0/discounts/0", func(r *einvoice.Request) {
			r.Lines[0].Discounts[0].Reason, r.Lines[0].Discounts[0].ReasonCode = nil, nil
		}},
		"SBX-AC-02": {"/line_items/0/discounts/0/reason_code", func(r *einvoice.Request) { r.Lines[0].Discounts[0].ReasonCode = ptr("ZZ") }},
		"SBX-AC-03": {"/line_items/1/charges/0", func(r *einvoice.Request) {
			r.Lines[1].Charges[0].Reason, r.Lines[1].Charges[0].ReasonCode = nil, nil
		}},
		"BR-KSA-20":   {"/line_items/1/charges/0/reason_code", func(r *einvoice.Request) { r.Lines[1].Charges[0].ReasonCode = nil }},
		"BR-KSA-22":   {"/line_items/1/charges/0/reason", func(r *einvoice.Request) { r.Lines[1].Charges[0].Reason = nil }},
		"SBX-LINE-01": {"/line_items/1/line_id", func(r *einvoice.Request) { r.Lines[1].ID = r.Lines[0].ID }},
		"SBX-LINE-02": {"/line_items/0", func(r *einvoice.Request) { r.Lines[0].Discounts[0].Amount = 10000 }},
		"SBX-LINE-03": {"/line_items/1/quantity", func(r *einvoice.Request) { r.Lines[1].Quantity = 1e-25 }},
		"SBX-NOTE-01": {"/buyer", func(r *einvoice.Request) { r.Buyer = nil }},
		"SBX-TYPE-01": {"/buyer/buyer_type", func(r *einvoice.Request) {
			r.Buyer.VATNumber, r.Buyer.BuyerType = ptr("300000000000003"), "business"
		}},
		"SBX-QR-01":   {"/seller/legal_name", func(r *einvoice.Request) { r.Seller.LegalName = strings.Repeat("x", 256) }},
		"SBX-TEXT-01": {"", func(r *einvoice.Request) { r.Seller.LegalName = "Nakhla\x01 Trading" }},
		"SBX-CALC-01": {"/tax_calculation_mode", func(r *einvoice.Request) {
			r.TaxCalculationMode = einvoice.ModeClientSupplied
			r.Lines[0].Supplied = &einvoice.SuppliedLine{VATAmount: ptr(int64(1274))}
		}},
		"SBX-CALC-02": {"/tax_calculation_mode", func(r *einvoice.Request) { r.TaxCalculationMode = einvoice.ModeClientSupplied }},
		"SBX-STD-01": {"/buyer/legal_name", func(r *einvoice.Request) {
			*r = requestOf(standardKind, *r)
			r.Buyer.LegalName = nil
		}},
		"SBX-STD-02": {"/buyer/vat_number", func(r *einvoice.Request) {
			*r = requestOf(standardKind, *r)
			r.Buyer.VATNumber = nil
		}},
		"SBX-STD-03": {"/buyer/postal_address", func(r *einvoice.Request) {
			*r = requestOf(standardKind, *r)
			r.Buyer.PostalAddress, r.Buyer.Address = nil, ptr("Prince Sultan Street, Jeddah")
		}},
		"BR-KSA-63": {"/buyer/postal_address", func(r *einvoice.Request) {
			*r = requestOf(standardKind, *r)
			r.Buyer.PostalAddress.District = nil
		}},
		"BR-KSA-67": {"/buyer/postal_address/postal_code", func(r *einvoice.Request) {
			*r = requestOf(standardKind, *r)
			r.Buyer.PostalAddress.PostalCode = ptr("2343")
		}},
		"BR-KSA-15": {"/supply", func(r *einvoice.Request) {
			r.Supply = nil
			*r = requestOf(standardKind, *r)
			r.Supply = nil
		}},
		"SBX-REF-01": {"/billing_reference", func(r *einvoice.Request) {
			*r = requestOf(creditNoteKind, *r)
			r.BillingReference = nil
		}},
		"BR-KSA-17": {"/note_reason", func(r *einvoice.Request) {
			*r = requestOf(creditNoteKind, *r)
			r.NoteReason = nil
		}},
		"SBX-REF-02": {"/billing_reference", func(r *einvoice.Request) {
			r.BillingReference = &einvoice.BillingReference{Number: "SINV-000001"}
		}},
	}
	base, _ := generate(t, sampleRequest())
	if len(base.Issues) != 0 || !base.Valid() {
		t.Fatalf("the sample request has issues: %+v", base.Issues)
	}
	for _, rule := range einvoice.Rules {
		tr, ok := triggers[rule.Code]
		if !ok {
			t.Errorf("rule %s has no test", rule.Code)
			continue
		}
		t.Run(rule.Code, func(t *testing.T) {
			t.Parallel()
			req := sampleRequest()
			tr.change(&req)
			inv, _ := generate(t, req)
			var found *einvoice.Issue
			for i := range inv.Issues {
				if inv.Issues[i].Code == rule.Code {
					found = &inv.Issues[i]
				}
			}
			if found == nil {
				t.Fatalf("not triggered; issues: %+v", inv.Issues)
			}
			if found.Severity != rule.Severity || found.Path != tr.path || found.Message == "" {
				t.Errorf("issue = %+v, want severity %s at %s", *found, rule.Severity, tr.path)
			}
			if inv.Valid() != (rule.Severity == einvoice.SeverityWarning && onlyWarnings(inv.Issues)) {
				t.Errorf("valid = %v with issues %+v", inv.Valid(), inv.Issues)
			}
		})
	}
}

// The kinds the rules of standard documents and of notes are triggered on.
var (
	standardKind, _   = einvoice.KindOf(einvoice.TypeStandard)
	creditNoteKind, _ = einvoice.KindOf(einvoice.TypeSimplifiedCreditNote)
)

func onlyWarnings(issues []einvoice.Issue) bool {
	for _, i := range issues {
		if i.Severity == einvoice.SeverityError {
			return false
		}
	}
	return true
}

func TestValidate_NotTriggered(t *testing.T) {
	t.Parallel()
	cases := map[string]func(r *einvoice.Request){
		"SellerIdentifierOnlyAsAdditional": func(r *einvoice.Request) { r.Seller.CommercialRegistration = nil },
		"SellerIdentifierOnlyAsCRN":        func(r *einvoice.Request) { r.Seller.Identifiers = nil },
		"SellerOtherScheme": func(r *einvoice.Request) {
			r.Seller.CommercialRegistration = nil
			r.Seller.Identifiers = []einvoice.Identifier{{Scheme: "700", Value: "7001234567"}}
		},
		"BuyerValidVAT":          func(r *einvoice.Request) { r.Buyer.VATNumber = ptr("300000000000003") },
		"SameSupplyAndEndDate":   func(r *einvoice.Request) { r.Supply.EndDate = ptr(r.Supply.SupplyDate) },
		"NoEndDate":              func(r *einvoice.Request) { r.Supply.EndDate = nil },
		"DiscountReasonOnly":     func(r *einvoice.Request) { r.Lines[0].Discounts[0].ReasonCode = nil },
		"DiscountCodeOnly":       func(r *einvoice.Request) { r.Lines[0].Discounts[0].Reason = nil },
		"NetExactlyZero":         func(r *einvoice.Request) { r.Lines[0].Discounts[0].Amount = 9000 },
		"NoProvinceNoAdditional": func(r *einvoice.Request) { r.Seller.Address.Province, r.Seller.Address.AdditionalNumber = nil, nil },
		"ClientSuppliedMatching": func(r *einvoice.Request) {
			r.TaxCalculationMode = einvoice.ModeClientSupplied
			r.Lines[0].Supplied = &einvoice.SuppliedLine{NetAmount: ptr(int64(8500)), VATAmount: ptr(int64(1275)), AmountWithVAT: ptr(int64(9775))}
			r.SuppliedTotals = &einvoice.SuppliedTotals{LineExtensionAmount: ptr(int64(16950)), TaxExclusiveAmount: ptr(int64(16950)),
				VATAmount: ptr(int64(1463)), TaxInclusiveAmount: ptr(int64(18413)), PayableAmount: ptr(int64(18413))}
		},
		"IndividualBuyerWithVAT": func(r *einvoice.Request) { r.Buyer.VATNumber = ptr("300000000000003") },
		"SixCharacterLineID":     func(r *einvoice.Request) { r.Lines[0].ID = "L-0001" },
		"ExemptEducationWithNationalID": func(r *einvoice.Request) {
			r.Lines[2].TaxExemptionReason = ptr("VATEX-SA-EDU") // the sample buyer has a name and a NAT id
		},
		"ZeroRatedDiplomat":             func(r *einvoice.Request) { r.Lines[2].TaxExemptionReason = ptr("VATEX-SA-DIPLOMAT") },
		"SellerOnlyAddressFieldsNeeded": func(r *einvoice.Request) { r.Seller.Address.AdditionalStreetName = nil },
		"SuppliedIgnoredWhenServiceCalculates": func(r *einvoice.Request) {
			r.Lines[0].Supplied = &einvoice.SuppliedLine{VATAmount: ptr(int64(1))}
		},
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			req := sampleRequest()
			change(&req)
			inv, _ := generate(t, req)
			if len(inv.Issues) != 0 || len(inv.Discrepancies) != 0 {
				t.Errorf("issues %+v, discrepancies %+v", inv.Issues, inv.Discrepancies)
			}
		})
	}
}

func TestDiscrepancies(t *testing.T) {
	t.Parallel()
	req := sampleRequest()
	req.TaxCalculationMode = einvoice.ModeClientSupplied
	req.Lines[0].Supplied = &einvoice.SuppliedLine{NetAmount: ptr(int64(8500)), VATAmount: ptr(int64(1274)), AmountWithVAT: ptr(int64(9774))}
	req.SuppliedTotals = &einvoice.SuppliedTotals{VATAmount: ptr(int64(1462)), PayableAmount: ptr(int64(18413))}
	inv, _ := generate(t, req)
	want := []einvoice.Discrepancy{
		{Path: "/line_items/0/supplied_amounts/vat_amount", Field: "vat_amount", Supplied: 1274, Computed: 1275},
		{Path: "/line_items/0/supplied_amounts/amount_with_vat", Field: "amount_with_vat", Supplied: 9774, Computed: 9775},
		{Path: "/supplied_totals/vat_amount", Field: "vat_amount", Supplied: 1462, Computed: 1463},
	}
	if len(inv.Discrepancies) != len(want) {
		t.Fatalf("discrepancies = %+v", inv.Discrepancies)
	}
	for i, w := range want {
		if inv.Discrepancies[i] != w {
			t.Errorf("discrepancy %d = %+v, want %+v", i, inv.Discrepancies[i], w)
		}
	}
	if inv.Totals.VAT != 1463 {
		t.Errorf("the computed amounts must win: VAT %d", inv.Totals.VAT)
	}
}

// TestValidate_Findings lists the findings of changes that trigger several rules at once, as
// the official rules read them.
func TestValidate_Findings(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		change func(r *einvoice.Request)
		want   []string // code severity path
	}{
		// BR-KSA-37 and BR-KSA-66 also fail when the value is missing.
		"NoBuildingNumber": {func(r *einvoice.Request) { r.Seller.Address.BuildingNumber = nil },
			[]string{"BR-KSA-09 warning /seller/address", "BR-KSA-37 warning /seller/address/building_number"}},
		"NoPostalCode": {func(r *einvoice.Request) { r.Seller.Address.PostalCode = nil },
			[]string{"BR-KSA-09 warning /seller/address", "BR-KSA-66 warning /seller/address/postal_code"}},
		// A standard rate of 0 is below zero for BR-S-05 and neither 15 nor 5 for BR-KSA-84.
		"StandardRateZero": {func(r *einvoice.Request) { r.Lines[0].TaxRate = 0 },
			[]string{"BR-S-05 warning /line_items/0/tax_rate", "BR-KSA-84 error /line_items/0/tax_rate"}},
		"StandardRate16":   {func(r *einvoice.Request) { r.Lines[0].TaxRate = 16 }, []string{"BR-KSA-84 error /line_items/0/tax_rate"}},
		"StandardRate15.5": {func(r *einvoice.Request) { r.Lines[0].TaxRate = 15.5 }, []string{"SBX-RATE-01 error /line_items/0/tax_rate"}},
		"ChargeWithoutEither": {func(r *einvoice.Request) { r.Lines[1].Charges[0].Reason, r.Lines[1].Charges[0].ReasonCode = nil, nil },
			[]string{"SBX-AC-03 error /line_items/1/charges/0"}},
		"EducationNoBuyer": {func(r *einvoice.Request) { r.Lines[2].TaxExemptionReason, r.Buyer = ptr("VATEX-SA-EDU"), nil }, []string{
			"SBX-NOTE-01 warning /buyer", "BR-KSA-49 error /line_items/2/tax_exemption_reason", "BR-KSA-25 warning /line_items/2/tax_exemption_reason"}},
		"NoSellerIdentification": {func(r *einvoice.Request) { r.Seller.CommercialRegistration, r.Seller.Identifiers = nil, nil },
			[]string{"BR-KSA-08 warning /seller/additional_identifiers"}},
		"LongLineIDUnicode": {func(r *einvoice.Request) { r.Lines[0].ID = "سطر-٠٠١" },
			[]string{"BR-KSA-F-06-C17 error /line_items/0/line_id"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			req := sampleRequest()
			c.change(&req)
			inv, _ := generate(t, req)
			var got []string
			for _, is := range inv.Issues {
				got = append(got, is.Code+" "+is.Severity+" "+is.Path)
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("issues:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}
