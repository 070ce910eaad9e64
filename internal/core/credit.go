package core

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// The customer credit balance (docs/design.md, "Credit balance"): what an invoice's credits
// could not take off (BillingInvoice.BalanceCredit) is kept per organization and currency
// and taken off its next invoices, never below zero, until used. Every change is an entry of
// its ledger, with the invoice it came from or went to.

// Reasons of the credit balance's ledger entries.
const (
	CreditProration    = "proration_credit"   // a plan change's unused fee beyond its charges
	CreditVoidRestored = "void_restored"      // what a voided invoice had taken, given back
	CreditTermination  = "termination_credit" // a termination's unused fee beyond the usage
	CreditApplied      = "applied_to_invoice" // taken off an invoice (a negative amount)
)

// CreditBalanceDescription is the description of the line that takes the balance off an
// invoice.
const CreditBalanceDescription = "Credit balance applied"

// CreditBalance is an organization's credit balance in each currency it has one in (a zero
// balance that once was positive included).
type CreditBalance struct {
	OrganizationID uuid.UUID
	Balances       []CreditAmount
}

// CreditAmount is the credit balance in one currency, as of UpdatedAt, its last change.
type CreditAmount struct {
	Currency  string
	Amount    int64
	UpdatedAt time.Time
}

// CreditTransaction is one entry of the credit balance's ledger: Amount (minor units of
// Currency) credited (> 0) or applied (< 0) for Reason, by invoice InvoiceID of subscription
// SubscriptionID; BalanceAfter is the balance once it is applied. The JSON form is its audit
// summary.
type CreditTransaction struct {
	ID             uuid.UUID `json:"id"`
	CreatedAt      time.Time `json:"created_at"`
	OrganizationID uuid.UUID `json:"organization_id"`
	Amount         int64     `json:"amount"`
	Currency       string    `json:"currency"`
	BalanceAfter   int64     `json:"balance_after"`
	Reason         string    `json:"reason"`
	InvoiceID      uuid.UUID `json:"invoice_id"`
	SubscriptionID uuid.UUID `json:"subscription_id"`
}

// CreditTransactionFilter selects a page of the ledger: of one organization (nil: the
// operator's every organization), after the cursor, Limit entries.
type CreditTransactionFilter struct {
	OrganizationID *uuid.UUID
	Cursor         *string
	Limit          int
}

// ApplyCreditBalance takes up to balance off inv, an invoice draft, as its last line (a
// credit line without a price component), never below zero: at most its subtotal less its
// discount; the VAT is charged on what remains. It records what it took in BalanceApplied
// and returns it.
func ApplyCreditBalance(inv *BillingInvoice, balance int64) int64 {
	applied := min(balance, inv.Subtotal-inv.Discount)
	if applied <= 0 {
		return 0
	}
	inv.Lines = append(inv.Lines, InvoiceLine{ComponentType: PriceCredit, Description: CreditBalanceDescription,
		PeriodStart: inv.PeriodStart, PeriodEnd: inv.PeriodEnd, Quantity: 1, UnitAmount: -applied, Amount: -applied})
	inv.Discount += applied
	inv.BalanceApplied = applied
	inv.settleTax()
	return applied
}

// CreditService reads the credit balance. An organization principal reads its own
// organization's only (naming another is EForbidden); the operator any.
type CreditService interface {
	// CreditBalance returns the organization's balance in every currency it has one in, or
	// ENotFound for an unknown organization.
	CreditBalance(ctx context.Context, organizationID uuid.UUID) (*CreditBalance, error)
	// ListCreditTransactions returns a page of the ledger in id (time) order and the next
	// page's cursor (nil on the last).
	ListCreditTransactions(ctx context.Context, f CreditTransactionFilter) ([]*CreditTransaction, *string, error)
}
