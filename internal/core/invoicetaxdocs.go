package core

import (
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/einvoice"
)

// Tax document statuses a billing invoice moves to from TaxDocumentPending.
const (
	TaxDocumentIssued = "issued"
	TaxDocumentFailed = "failed"
)

// The tax documents a billing invoice is owed: its tax invoice, and a credit note once it is
// void. Each is issued (or refused) exactly once.
const (
	TaxDocumentForInvoice    = "invoice"
	TaxDocumentForCreditNote = "credit_note"
)

// PlatformEGSUnit is the EGS unit of the platform's own tax documents: one chain across
// every buyer. Organizations may not name it for their own documents, so the platform's
// documents, stored under their buyer, never share a counter value with the buyer's own.
const PlatformEGSUnit = "platform-billing"

// PlatformSeller is the seller of every billing invoice's tax document: the platform itself,
// a fixed sandbox identity (a synthetic VAT number of the authority's pattern and a Riyadh
// address). Documents stamped with it say so: the sandbox reports nothing to the authority.
var PlatformSeller = einvoice.Seller{
	LegalName:              "Provider Core Platform (sandbox)",
	VATNumber:              "399999999900003",
	CommercialRegistration: ptr("1010999999"),
	Address: &einvoice.Address{
		StreetName:     ptr("King Fahd Road"),
		BuildingNumber: ptr("8228"),
		District:       ptr("Al Olaya"),
		City:           ptr("Riyadh"),
		PostalCode:     ptr("12214"),
		CountryCode:    "SA",
	},
}

// TaxDocumentFailure is why the engine refused a billing invoice's tax document: a summary
// and the engine's findings (error and warning rules with their codes).
type TaxDocumentFailure struct {
	Message string           `json:"message"`
	Issues  []einvoice.Issue `json:"issues"`
}

// InvoiceTaxDocuments is the link from a billing invoice to its tax documents: its status,
// the documents issued for it (the tax invoice, then the credit note of a void), and why the
// tax invoice was refused when it was.
type InvoiceTaxDocuments struct {
	InvoiceID         uuid.UUID
	OrganizationID    uuid.UUID
	TaxDocumentStatus string
	Documents         []*TaxInvoice
	Failure           *TaxDocumentFailure
}

// PlatformTaxRequest is the engine's request of a platform document stored under
// OrganizationID, to be rendered in the contract's request shape (the event encoder renders
// it) and stored with the document, so that it reads back like the organization's own.
type PlatformTaxRequest struct {
	OrganizationID uuid.UUID
	Request        einvoice.Request
}

// TaxDocumentBuyer is what the tax document of a billing invoice says of its buyer, the
// organization: its names, VAT number and commercial registration, and its postal address
// resolved from its national short address (nil when it has none or it does not resolve).
type TaxDocumentBuyer struct {
	Organization  *Organization
	PostalAddress *einvoice.Address
}

// Standard reports whether the buyer gets a standard (B2B) tax invoice: an organization that
// gives a VAT number is VAT-registered. Whether the number is valid is the engine's rule
// (BR-KSA-44): a standard invoice to an invalid number fails rather than quietly becoming a
// simplified one, which would misreport a B2B sale.
func (b TaxDocumentBuyer) Standard() bool { return b.Organization.VatReference != nil }

// TaxInvoiceRequest is the engine's request for the tax document of inv: a standard or
// simplified tax invoice (Standard), the platform selling to the organization, one line per
// charge line and the invoice's discounts as allowances on them, so that the document's
// taxable amount is subtotal - discount and its VAT and payable amount are the invoice's tax
// and total (15 % of the same amount, rounded half-up, in minor units).
func TaxInvoiceRequest(inv *BillingInvoice, buyer TaxDocumentBuyer) (einvoice.Request, error) {
	kind := einvoice.TypeSimplified
	if buyer.Standard() {
		kind = einvoice.TypeStandard
	}
	lines, err := taxDocumentLines(inv)
	if err != nil {
		return einvoice.Request{}, err
	}
	egs := PlatformEGSUnit
	end := inv.PeriodEnd.Format(time.DateOnly)
	return einvoice.Request{
		TaxCalculationMode: einvoice.ModeServiceCalculated,
		RequestedType:      kind,
		EGSUnitID:          &egs,
		Seller:             PlatformSeller,
		Buyer:              buyer.einvoiceBuyer(),
		Supply:             &einvoice.Supply{SupplyDate: inv.PeriodStart.Format(time.DateOnly), EndDate: &end},
		Lines:              lines,
		Notes:              map[string]string{"en": fmt.Sprintf("Billing invoice %s.", inv.ID)}, // keyed by language (cbc:Note languageID)
	}, nil
}

// CreditNoteRequest is the engine's request for the credit note of a void invoice: the
// original document's request as a credit note of its family, referring to it by number
// and issue date, crediting every line.
func CreditNoteRequest(original einvoice.Request, originalNumber string, originalIssuedAt time.Time, inv *BillingInvoice) einvoice.Request {
	note := original
	note.RequestedType = einvoice.TypeSimplifiedCreditNote
	if kind, _ := einvoice.KindOf(original.RequestedType); kind.Standard {
		note.RequestedType = einvoice.TypeStandardCreditNote
	}
	date := originalIssuedAt.UTC().Format(time.DateOnly)
	note.BillingReference = &einvoice.BillingReference{Number: originalNumber, IssueDate: &date}
	reason := fmt.Sprintf("Billing invoice %s was voided.", inv.ID)
	note.NoteReason = &reason
	return note
}

func (b TaxDocumentBuyer) einvoiceBuyer() *einvoice.Buyer {
	o := b.Organization
	name := o.LegalNameEn
	// A business either way: one without a VAT number is not VAT-registered, and gets a
	// simplified invoice naming it.
	out := &einvoice.Buyer{LegalName: &name, BuyerType: "business"}
	if b.Standard() {
		out.VATNumber = o.VatReference
		out.CommercialRegistration = o.CommercialRegistrationReference
		out.PostalAddress = b.PostalAddress
	}
	return out
}

// taxDocumentLines turns the invoice's lines into the engine's: each charge (amount >= 0) a
// line of standard-rated services, Quantity × UnitAmount when that is its amount and 1 ×
// amount otherwise; each discount or credit (amount < 0) an allowance taken from the charge
// lines in order, never more than a line's net. An invoice whose discounts exceed its charges
// has no tax document of this shape (an error).
func taxDocumentLines(inv *BillingInvoice) ([]einvoice.Line, error) {
	var lines []einvoice.Line
	var allowance int64
	for _, l := range inv.Lines {
		if l.Amount < 0 {
			allowance -= l.Amount
			continue
		}
		quantity, unit := l.Quantity, l.UnitAmount
		if quantity <= 0 || quantity*unit != l.Amount {
			quantity, unit = 1, l.Amount
		}
		lines = append(lines, einvoice.Line{
			ID: strconv.Itoa(len(lines) + 1), NameEn: l.Description, Quantity: float64(quantity), UnitCode: "C62",
			UnitPrice: unit, TaxCategory: "S", TaxRate: float64(VATPercent(inv.Currency)),
		})
	}
	reason := "Discount"
	for i := range lines {
		gross := int64(lines[i].Quantity) * lines[i].UnitPrice
		take := min(allowance, gross)
		if take > 0 {
			lines[i].Discounts = []einvoice.AllowanceCharge{{Amount: take, Reason: &reason}}
			allowance -= take
		}
	}
	if allowance > 0 {
		return nil, fmt.Errorf("invoice %s: its discounts exceed its charges by %d", inv.ID, allowance)
	}
	return lines, nil
}

func ptr[T any](v T) *T { return &v }

// CheckTaxDocumentRetry returns nil when the tax document of inv may be retried: only one
// the engine refused (tax_document_status failed); EInvalidTransition otherwise.
func (inv *BillingInvoice) CheckTaxDocumentRetry() error {
	if inv.TaxDocumentStatus != TaxDocumentFailed {
		return Errorf(EInvalidTransition, "Cannot retry the tax document of invoice %s: its tax_document_status is %s; only a failed tax document is retried.",
			inv.ID, inv.TaxDocumentStatus)
	}
	return nil
}
