// Package einvoice generates tax invoices, credit notes and debit notes, standard (B2B) and
// simplified (B2C), modelled on the Saudi e-invoicing phase-2 rules, as a sandbox: it checks a request against the business rules, computes every
// amount exactly in minor units, renders a UBL 2.1 invoice with a mapping report, hashes its
// C14N 1.1 canonical form, stamps it with a per-organization sandbox key and builds the TLV QR
// payload.
//
// Nothing here is reported to or cleared by a tax authority. The package knows neither HTTP
// nor storage: internal/postgres supplies the counter (ICV), the previous hash (PIH) and the
// key, and keeps the result.
package einvoice

import "time"

// Values of the request's enumerations and of the generated document.
const (
	ModeServiceCalculated = "service_calculated"
	ModeClientSupplied    = "client_supplied"

	// ProfileID is the business process of every kind (BR-KSA-EN16931-01).
	ProfileID = "reporting:1.0"
	// Currency is the document and tax currency: SAR only (BR-KSA-68).
	Currency = "SAR"
	// StatusGenerated is the status of every generated invoice: the sandbox never reports.
	StatusGenerated = "GENERATED"
	// DefaultEGSUnit is the EGS unit of a request that names none.
	DefaultEGSUnit = "egs-sandbox-default"
	// StandardRate is the KSA standard VAT rate in percent.
	StandardRate = 15

	// Notice is the human-readable sandbox statement of every result.
	Notice = "Sandbox result: synthetic, not reported to or cleared by the tax authority, not valid for tax purposes."
)

// Request is a tax document request in domain terms; RequestedType names its Kind. Optional text is a nil pointer
// when absent or null; dates are ISO 8601 calendar dates (YYYY-MM-DD).
type Request struct {
	TaxCalculationMode string
	RequestedType      string
	EGSUnitID          *string
	Seller             Seller
	Buyer              *Buyer
	Supply             *Supply
	Lines              []Line
	SuppliedTotals     *SuppliedTotals
	Notes              map[string]string
	// BillingReference is the invoice a credit or debit note corrects (BG-3), resolved by
	// the caller; NoteReason is why the note was issued (KSA-10).
	BillingReference *BillingReference
	NoteReason       *string
}

// EGSUnit is the EGS unit the request names: EGSUnitID, or DefaultEGSUnit when it names none.
func (r Request) EGSUnit() string {
	if r.EGSUnitID != nil {
		return *r.EGSUnitID
	}
	return DefaultEGSUnit
}

// BillingReference names the original invoice of a note: its number (BT-25) and, when
// known, its issue date (BT-26, YYYY-MM-DD).
type BillingReference struct {
	Number    string
	IssueDate *string
}

// Seller is the supplier (BG-4).
type Seller struct {
	LegalName              string
	VATNumber              string
	CommercialRegistration *string
	Address                *Address
	Branch                 *string
	Identifiers            []Identifier
}

// Address is a postal address: the seller's (BG-5) or the buyer's (BG-8).
type Address struct {
	StreetName, AdditionalStreetName *string
	BuildingNumber, AdditionalNumber *string
	District, City, PostalCode       *string
	Province                         *string
	CountryCode                      string
}

// Identifier is an additional party identifier with its scheme (BT-29, BT-46).
type Identifier struct {
	Scheme, Value string
}

// Buyer is the customer (BG-7); every detail is optional on a simplified invoice. Address is
// a free-text address; PostalAddress the structured one a standard document needs.
type Buyer struct {
	LegalName, VATNumber, CommercialRegistration, Address *string
	PostalAddress                                         *Address
	Identifiers                                           []Identifier
	BuyerType                                             string
}

// Supply carries the supply dates, references and payment means.
type Supply struct {
	SupplyDate             string
	EndDate                *string
	PurchaseOrderReference *string
	ContractReference      *string
	DeliveryReference      *string
	PaymentTerms           *string
	PaymentMethod          *string
}

// Line is one invoice line. Quantity and TaxRate are the decimals the client sent; amounts
// are minor units.
type Line struct {
	ID                 string
	NameAr             *string
	NameEn             string
	Description        *string
	Quantity           float64
	UnitCode           string
	UnitPrice          int64
	Discounts          []AllowanceCharge
	Charges            []AllowanceCharge
	TaxCategory        string
	TaxRate            float64
	TaxExemptionReason *string
	Supplied           *SuppliedLine
}

// AllowanceCharge is a line discount (allowance) or charge in minor units.
type AllowanceCharge struct {
	Amount             int64
	Reason, ReasonCode *string
}

// SuppliedLine holds the line amounts a client computed itself (client_supplied mode).
type SuppliedLine struct {
	NetAmount, VATAmount, AmountWithVAT *int64
}

// SuppliedTotals holds the document totals a client computed itself (client_supplied mode).
type SuppliedTotals struct {
	LineExtensionAmount, TaxExclusiveAmount, VATAmount, TaxInclusiveAmount, PayableAmount *int64
}

// Severity of an Issue: any SeverityError makes the invoice invalid.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// Issue is one business-rule finding about a request.
type Issue struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Path     string `json:"path"` // JSON pointer into the request
	Message  string `json:"message"`
}

// Discrepancy is a client-supplied amount that differs from the computed one.
type Discrepancy struct {
	Path     string `json:"path"`
	Field    string `json:"field"`
	Supplied int64  `json:"supplied"`
	Computed int64  `json:"computed"`
}

// Mapping names the XML element a request field became.
type Mapping struct {
	Field string `json:"field"`
	XPath string `json:"xpath"`
}

// Identity is what the storage layer decides about an invoice before it is rendered: its
// place in the chain of its organization and EGS unit, and its issue time.
type Identity struct {
	Number   string
	UUID     string
	ICV      int64
	PIH      string
	IssuedAt time.Time
}

// IssueDate is the UTC calendar date of the invoice, as written in cbc:IssueDate.
func (id Identity) IssueDate() string { return id.IssuedAt.UTC().Format(time.DateOnly) }

// IssueTime is the UTC time of day of the invoice; cbc:IssueTime writes it with a Z.
func (id Identity) IssueTime() string { return id.IssuedAt.UTC().Format(time.TimeOnly) }

// Invoice is a generated invoice: the rendered XML, its hash and QR payload, the computed
// totals and every finding. Its JSON form is what the storage layer keeps.
type Invoice struct {
	Type          string        `json:"type"`
	Totals        Totals        `json:"totals"`
	Issues        []Issue       `json:"issues"`
	Discrepancies []Discrepancy `json:"discrepancies"`
	XML           string        `json:"-"` // kept apart: it is large and returned as is
	Mapping       []Mapping     `json:"mapping"`
	Hash          string        `json:"hash"`
	QR            string        `json:"qr"`
}

// Valid reports whether no issue has severity error.
func (inv *Invoice) Valid() bool { return !hasErrors(inv.Issues) }

func hasErrors(issues []Issue) bool {
	for _, i := range issues {
		if i.Severity == SeverityError {
			return true
		}
	}
	return false
}
