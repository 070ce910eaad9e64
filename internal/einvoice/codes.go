package einvoice

// ExemptionReasons are the VATEX-SA exemption reason codes (BT-121) with the text written as
// the exemption reason (BT-120).
var ExemptionReasons = map[string]string{
	"VATEX-SA-29":    "Financial services mentioned in Article 29 of the VAT Regulations",
	"VATEX-SA-29-7":  "Life insurance services mentioned in Article 29 of the VAT Regulations",
	"VATEX-SA-30":    "Real estate transactions mentioned in Article 30 of the VAT Regulations",
	"VATEX-SA-32":    "Export of goods",
	"VATEX-SA-33":    "Export of services",
	"VATEX-SA-34-1":  "The international transport of Goods",
	"VATEX-SA-34-2":  "International transport of passengers",
	"VATEX-SA-34-3":  "Services directly connected and incidental to a Supply of international passenger transport",
	"VATEX-SA-34-4":  "Supply of a qualifying means of transport",
	"VATEX-SA-34-5":  "Any services relating to Goods or passenger transportation, as defined in article twenty five of these Regulations",
	"VATEX-SA-35":    "Medicines and medical equipment",
	"VATEX-SA-36":    "Qualifying metals",
	"VATEX-SA-EDU":   "Private education to citizen",
	"VATEX-SA-HEA":   "Private healthcare to citizen",
	"VATEX-SA-MLTRY": "Supply of qualified military goods",
	"VATEX-SA-OOS":   "Not subject to VAT",
}

// exemptionCategory is the VAT category each exemption reason code belongs to.
var exemptionCategory = map[string]string{
	"VATEX-SA-29": "E", "VATEX-SA-29-7": "E", "VATEX-SA-30": "E",
	"VATEX-SA-32": "Z", "VATEX-SA-33": "Z", "VATEX-SA-34-1": "Z", "VATEX-SA-34-2": "Z",
	"VATEX-SA-34-3": "Z", "VATEX-SA-34-4": "Z", "VATEX-SA-34-5": "Z", "VATEX-SA-35": "Z",
	"VATEX-SA-36": "Z", "VATEX-SA-EDU": "Z", "VATEX-SA-HEA": "Z", "VATEX-SA-MLTRY": "Z",
	"VATEX-SA-OOS": "O",
}

// allowanceReasonCodes is UNTDID 5189 (allowance reason codes) as EN 16931 uses it (BR-CL-19).
var allowanceReasonCodes = map[string]bool{
	"41": true, "42": true, "60": true, "62": true, "63": true, "64": true, "65": true, "66": true,
	"67": true, "68": true, "70": true, "71": true, "88": true, "95": true, "100": true, "102": true,
	"103": true, "104": true, "105": true,
}

// Rules lists every rule Validate checks, with its severity: the documentation of the rule
// set, and what the tests walk to trigger each one.
var Rules = []struct{ Code, Severity, Summary string }{
	{"BR-KSA-40", SeverityError, "Seller VAT number: 15 digits, first and last digit 3."},
	{"BR-KSA-44", SeverityError, "Buyer VAT number, when present: 15 digits, first and last digit 3."},
	{"BR-KSA-08", SeverityError, "Exactly one seller identification (CRN, MOM, MLS, SAG, OTH, 700), alphanumeric."},
	{"BR-KSA-14", SeverityError, "Buyer identifications are alphanumeric."},
	{"BR-08", SeverityError, "The seller postal address exists."},
	{"BR-KSA-09", SeverityWarning, "Seller address has street, building number, postal code, city and district."},
	{"BR-KSA-37", SeverityWarning, "Seller building number has 4 digits."},
	{"BR-KSA-66", SeverityWarning, "Seller postal code has 5 digits."},
	{"BR-KSA-36", SeverityWarning, "The supply end date is not before the supply date."},
	{"BR-S-05", SeverityError, "Standard-rated lines have a rate above zero."},
	{"SBX-RATE-01", SeverityError, "Standard-rated lines use the KSA standard rate (15)."},
	{"BR-Z-05", SeverityError, "Zero-rated lines have rate 0."},
	{"BR-E-05", SeverityError, "Exempt lines have rate 0."},
	{"BR-O-05", SeverityError, "Lines outside the scope of VAT have rate 0 (no rate is written)."},
	{"BR-KSA-69", SeverityError, "Zero-rated lines have a VATEX exemption reason code."},
	{"BR-E-10", SeverityError, "Exempt lines have a VATEX exemption reason code."},
	{"BR-O-10", SeverityError, "Lines outside the scope of VAT have a VATEX exemption reason code."},
	{"BR-KSA-CL-04", SeverityError, "The exemption reason code is a VATEX-SA code of the line's category."},
	{"BR-S-10", SeverityWarning, "Standard-rated lines carry no exemption reason (it is ignored)."},
	{"BR-41", SeverityError, "Each line discount has a reason or a reason code."},
	{"BR-43", SeverityError, "Each line charge has a reason or a reason code."},
	{"BR-CL-19", SeverityError, "Discount reason codes are UNTDID 5189 codes."},
	{"SBX-LINE-01", SeverityError, "Line ids are unique."},
	{"SBX-LINE-02", SeverityError, "A line's net amount is not negative (discounts do not exceed quantity x price plus charges)."},
	{"SBX-NOTE-01", SeverityWarning, "No buyer details: allowed on a simplified invoice."},
	{"SBX-TYPE-01", SeverityWarning, "A VAT-registered business or government buyer normally gets a standard tax invoice."},
	{"SBX-QR-01", SeverityWarning, "QR values longer than 255 bytes are truncated in the QR payload."},
	{"SBX-CALC-01", SeverityWarning, "Client-supplied amounts differ from the computed ones (listed in tax_discrepancies); the invoice uses the computed amounts."},
	{"SBX-CALC-02", SeverityWarning, "client_supplied mode without any supplied amount: nothing to compare."},
}
