package einvoice

// ExemptionReasons are the VATEX-SA exemption reason codes (BT-121) with the text written as
// the exemption reason (BT-120).
var ExemptionReasons = map[string]string{
	"VATEX-SA-29":       "Financial services mentioned in Article 29 of the VAT Regulations",
	"VATEX-SA-29-7":     "Life insurance services mentioned in Article 29 of the VAT Regulations",
	"VATEX-SA-30":       "Real estate transactions mentioned in Article 30 of the VAT Regulations",
	"VATEX-SA-32":       "Export of goods",
	"VATEX-SA-33":       "Export of services",
	"VATEX-SA-34-1":     "The international transport of Goods",
	"VATEX-SA-34-2":     "International transport of passengers",
	"VATEX-SA-34-3":     "Services directly connected and incidental to a Supply of international passenger transport",
	"VATEX-SA-34-4":     "Supply of a qualifying means of transport",
	"VATEX-SA-34-5":     "Any services relating to Goods or passenger transportation, as defined in article twenty five of these Regulations",
	"VATEX-SA-35":       "Medicines and medical equipment",
	"VATEX-SA-36":       "Qualifying metals",
	"VATEX-SA-EDU":      "Private education to citizen",
	"VATEX-SA-HEA":      "Private healthcare to citizen",
	"VATEX-SA-MLTRY":    "Supply of qualified military goods",
	"VATEX-SA-DIPLOMAT": "Qualified supplies to diplomatic missions",
	"VATEX-SA-OOS":      "Not subject to VAT",
}

// exemptionCategory is the VAT category each exemption reason code belongs to, as the KSA
// rule BR-KSA-CL-04 lists them.
var exemptionCategory = map[string]string{
	"VATEX-SA-29": "E", "VATEX-SA-29-7": "E", "VATEX-SA-30": "E",
	"VATEX-SA-32": "Z", "VATEX-SA-33": "Z", "VATEX-SA-34-1": "Z", "VATEX-SA-34-2": "Z",
	"VATEX-SA-34-3": "Z", "VATEX-SA-34-4": "Z", "VATEX-SA-34-5": "Z", "VATEX-SA-35": "Z",
	"VATEX-SA-36": "Z", "VATEX-SA-EDU": "Z", "VATEX-SA-HEA": "Z", "VATEX-SA-MLTRY": "Z", "VATEX-SA-DIPLOMAT": "Z",
	"VATEX-SA-OOS": "O",
}

// allowanceReasonCodes is UNTDID 5189 (allowance reason codes) as EN 16931 uses it. The ZATCA
// SDK's rule files do not check allowance reason codes; SBX-AC-02 does.
var allowanceReasonCodes = map[string]bool{
	"41": true, "42": true, "60": true, "62": true, "63": true, "64": true, "65": true, "66": true,
	"67": true, "68": true, "70": true, "71": true, "88": true, "95": true, "100": true, "102": true,
	"103": true, "104": true, "105": true,
}

// Rules lists every rule Validate checks, with its severity: the documentation of the rule
// set, and what the tests walk to trigger each one. Official ids and severities are those of
// the ZATCA SDK rule files (KSA: 20210819_ZATCA_E-invoice_Validation_Rules.xsl, CEN:
// CEN-EN16931-UBL.xsl), checked against them; SBX- rules are this sandbox's own.
var Rules = []struct{ Code, Severity, Summary string }{
	{"BR-KSA-40", SeverityError, "Seller VAT number: 15 digits, first and last digit 3 (KSA)."},
	{"BR-KSA-44", SeverityError, "Buyer VAT number, when present: 15 digits, first and last digit 3 (KSA)."},
	{"BR-CUSTOM-VALIDATION-01", SeverityError, "The buyer VAT number is not the seller's (KSA)."},
	{"BR-KSA-08", SeverityWarning, "One seller identification (CRN, MOM, MLS, 700, SAG, OTH), alphanumeric; of several, only the first in that order is written (KSA)."},
	{"BR-KSA-14", SeverityError, "Buyer identifications are alphanumeric (KSA)."},
	{"BR-08", SeverityWarning, "The seller postal address exists (CEN)."},
	{"BR-KSA-09", SeverityWarning, "Seller address has street, building number, postal code, city, district and country code (KSA)."},
	{"BR-KSA-37", SeverityWarning, "Seller building number has 4 digits (KSA)."},
	{"BR-KSA-66", SeverityWarning, "Seller postal code has 5 digits (KSA)."},
	{"BR-KSA-36", SeverityWarning, "The supply end date is not before the supply date (KSA)."},
	{"BR-KSA-F-06-C17", SeverityError, "Line identifiers have 1 to 6 characters (CEN file, KSA rule)."},
	{"BR-S-05", SeverityWarning, "Standard-rated lines have a rate above zero (CEN)."},
	{"BR-KSA-84", SeverityError, "Standard-rated lines have rate 15 or 5 (KSA)."},
	{"SBX-RATE-01", SeverityError, "Standard-rated lines use the KSA standard rate (15)."},
	{"BR-Z-05", SeverityError, "Zero-rated lines have rate 0 (CEN)."},
	{"BR-E-05", SeverityError, "Exempt lines have rate 0 (CEN)."},
	{"BR-KSA-11", SeverityError, "Lines outside the scope of VAT have rate 0; no rate is written (KSA)."},
	{"BR-KSA-69", SeverityWarning, "Zero-rated VAT breakdowns have an exemption reason code (KSA)."},
	{"BR-KSA-23", SeverityWarning, "Exempt VAT breakdowns have an exemption reason code (KSA)."},
	{"BR-KSA-24", SeverityWarning, "VAT breakdowns outside the scope of VAT have an exemption reason code (KSA)."},
	{"BR-KSA-CL-04", SeverityWarning, "The exemption reason code is a VATEX-SA code of the line's category (KSA)."},
	{"BR-KSA-49", SeverityError, "VATEX-SA-EDU and VATEX-SA-HEA need a buyer identification with scheme NAT (KSA)."},
	{"BR-KSA-25", SeverityWarning, "VATEX-SA-EDU and VATEX-SA-HEA need the buyer's name on a simplified document (KSA)."},
	{"BR-S-10", SeverityWarning, "Standard-rated lines carry no exemption reason; it is ignored (CEN)."},
	{"SBX-AC-01", SeverityError, "Each line discount has a reason or a reason code."},
	{"SBX-AC-02", SeverityError, "Discount reason codes are UNTDID 5189 codes."},
	{"SBX-AC-03", SeverityError, "Each line charge has a reason or a reason code."},
	{"BR-KSA-20", SeverityWarning, "Each line charge has a reason code (KSA)."},
	{"BR-KSA-22", SeverityWarning, "Each line charge has a reason text (KSA)."},
	{"SBX-LINE-01", SeverityError, "Line ids are unique."},
	{"SBX-LINE-02", SeverityError, "A line's net amount is not negative (discounts do not exceed quantity x price plus charges)."},
	{"SBX-LINE-03", SeverityError, "A quantity is written with at most 24 digits, as many as libxml2 (xmllint) reads of a decimal."},
	{"SBX-NOTE-01", SeverityWarning, "No buyer details: allowed on a simplified invoice."},
	{"SBX-STD-01", SeverityError, "A standard tax document names its buyer (BT-44)."},
	{"SBX-STD-02", SeverityError, "A standard tax document has the buyer's VAT number or another identification (BR-KSA-81)."},
	{"SBX-STD-03", SeverityError, "A standard tax document has the buyer's postal address with street, city and country (BR-10, BR-KSA-10)."},
	{"BR-KSA-63", SeverityWarning, "A Saudi buyer address has street, building number, postal code, city, district and country code (KSA)."},
	{"BR-KSA-67", SeverityWarning, "A Saudi buyer postal code has 5 digits (KSA)."},
	{"BR-KSA-15", SeverityWarning, "A standard tax invoice has a supply date (KSA)."},
	{"SBX-REF-01", SeverityError, "A credit or debit note refers to the invoice it corrects (billing reference; BR-KSA-56)."},
	{"BR-KSA-17", SeverityError, "A credit or debit note gives the reason it was issued (KSA-10) (KSA)."},
	{"SBX-REF-02", SeverityWarning, "A tax invoice carries no billing reference or note reason; given, they are ignored."},
	{"SBX-TYPE-01", SeverityWarning, "A VAT-registered business or government buyer normally gets a standard tax invoice."},
	{"SBX-QR-01", SeverityWarning, "QR values longer than 255 bytes are truncated in the QR payload."},
	{"SBX-TEXT-01", SeverityWarning, "Characters that XML cannot carry (control characters, invalid UTF-8) are written as U+FFFD."},
	{"SBX-CALC-01", SeverityWarning, "Client-supplied amounts differ from the computed ones (listed in tax_discrepancies); the invoice uses the computed amounts."},
	{"SBX-CALC-02", SeverityWarning, "client_supplied mode without any supplied amount: nothing to compare."},
}

// ExemptionCategory is the VAT category (Z, E or O) of an exemption reason code, or "" for
// a code that is not a VATEX-SA code.
func ExemptionCategory(code string) string { return exemptionCategory[code] }
