package core

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
)

// Sandbox payment methods: test tokens whose outcome is fixed, as card test numbers are.
const (
	PaymentMethodSuccess           = "pm_sandbox_success"
	PaymentMethodDeclined          = "pm_sandbox_declined"
	PaymentMethodInsufficientFunds = "pm_sandbox_insufficient_funds"
)

// Payment statuses.
const (
	PaymentSucceeded = "succeeded"
	PaymentFailed    = "failed"
)

// Payment is one attempt to pay a billing invoice. A failed payment records why
// (FailureCode, FailureMessage) and applies nothing.
type Payment struct {
	ID             uuid.UUID `json:"id"`
	CreatedAt      time.Time `json:"created_at"`
	OrganizationID uuid.UUID `json:"organization_id"`
	InvoiceID      uuid.UUID `json:"invoice_id"`
	Amount         int64     `json:"amount"`
	Currency       string    `json:"currency"`
	PaymentMethod  string    `json:"payment_method"`
	Status         string    `json:"status"`
	FailureCode    *string   `json:"failure_code"`
	FailureMessage *string   `json:"failure_message"`
}

// sandboxFailures are the failing sandbox tokens and the reason each fails with.
var sandboxFailures = map[string][2]string{
	PaymentMethodDeclined:          {"card_declined", "The payment method was declined (sandbox token pm_sandbox_declined)."},
	PaymentMethodInsufficientFunds: {"insufficient_funds", "The payment method has insufficient funds (sandbox token pm_sandbox_insufficient_funds)."},
}

// ChargeSandbox is the outcome of charging a sandbox payment method: a payment of amount
// on inv that succeeded, or failed with the token's reason.
func ChargeSandbox(inv *BillingInvoice, amount int64, method string) Payment {
	pay := Payment{OrganizationID: inv.OrganizationID, InvoiceID: inv.ID, Amount: amount, Currency: inv.Currency,
		PaymentMethod: method, Status: PaymentSucceeded}
	if reason, ok := sandboxFailures[method]; ok {
		pay.Status, pay.FailureCode, pay.FailureMessage = PaymentFailed, &reason[0], &reason[1]
	}
	return pay
}

// AmountDue is what remains to be paid on the invoice, in minor units.
func (inv *BillingInvoice) AmountDue() int64 { return inv.Total - inv.AmountPaid }

// openStatuses are the statuses of an invoice that can still be written off.
var openStatuses = []string{InvoiceIssued, InvoicePartiallyPaid}

// payableStatuses are the statuses an invoice takes payments in: an invoice written off
// (uncollectible) may still be paid, which recovers its subscription from dunning.
var payableStatuses = []string{InvoiceIssued, InvoicePartiallyPaid, InvoiceUncollectible}

// CheckPayment returns nil when a payment of amount may be attempted on the invoice: it must
// be issued, partially paid or uncollectible (EInvalidTransition otherwise) and amount must not exceed what
// is due (EUnprocessable, code amount_exceeds_amount_due), nor be zero while something is
// due (code amount_zero). A zero-total invoice (a trial confirming a payment method) is paid
// with a payment of zero.
func (inv *BillingInvoice) CheckPayment(amount int64) error {
	due := inv.AmountDue()
	switch {
	case !slices.Contains(payableStatuses, inv.Status):
		return Errorf(EInvalidTransition, "Cannot pay invoice %s: its status is %s; payments are taken only while it is issued, partially_paid or uncollectible.", inv.ID, inv.Status)
	case amount > due:
		return Unprocessable("/amount", "amount_exceeds_amount_due",
			fmt.Sprintf("The amount %d exceeds the %d %s still due on invoice %s; overpayment is refused.", amount, due, inv.Currency, inv.ID))
	case amount == 0 && due > 0:
		return Unprocessable("/amount", "amount_zero",
			fmt.Sprintf("The amount must be at least 1; %d %s is due on invoice %s.", due, inv.Currency, inv.ID))
	}
	return nil
}

// ApplyPayment applies a succeeded payment of amount (checked with CheckPayment) at at: the
// invoice is paid, with PaidAt, once nothing is due, else partially paid (an uncollectible
// invoice stays uncollectible until it is paid in full).
func (inv *BillingInvoice) ApplyPayment(amount int64, at time.Time) {
	inv.AmountPaid += amount
	inv.UpdatedAt = at
	switch {
	case inv.AmountDue() == 0:
		inv.Status, inv.PaidAt = InvoicePaid, &at
	case inv.Status != InvoiceUncollectible:
		inv.Status = InvoicePartiallyPaid
	}
}

// Void voids the invoice at at: only an issued invoice on which nothing is paid may be
// voided (EInvalidTransition otherwise).
func (inv *BillingInvoice) Void(at time.Time) error {
	if inv.Status != InvoiceIssued || inv.AmountPaid != 0 {
		return Errorf(EInvalidTransition, "Cannot void invoice %s: its status is %s; void is allowed only from status issued, while nothing is paid.", inv.ID, inv.Status)
	}
	inv.Status, inv.UpdatedAt = InvoiceVoid, at
	return nil
}

// MarkUncollectible writes the invoice off at at: only an issued or partially paid invoice
// may be (EInvalidTransition otherwise); what was paid stays paid.
func (inv *BillingInvoice) MarkUncollectible(at time.Time) error {
	if !slices.Contains(openStatuses, inv.Status) {
		return Errorf(EInvalidTransition, "Cannot mark invoice %s uncollectible: its status is %s; mark-uncollectible is allowed only from status issued or partially_paid.", inv.ID, inv.Status)
	}
	inv.Status, inv.UpdatedAt = InvoiceUncollectible, at
	return nil
}

// InvoiceFilter selects a page of billing invoices. OrganizationID nil is every
// organization (the operator only); SubscriptionID and Status, when set, narrow it.
type InvoiceFilter struct {
	OrganizationID *uuid.UUID
	SubscriptionID *uuid.UUID
	Status         *string
	// Cursor is the next cursor of the previous page; nil for the first page.
	Cursor *string
	// Limit is the page size, 1..MaxPageLimit.
	Limit int
}

// PaymentFilter selects a page of payments, as InvoiceFilter does invoices.
type PaymentFilter struct {
	OrganizationID *uuid.UUID
	InvoiceID      *uuid.UUID
	Cursor         *string
	Limit          int
}

// InvoiceService reads billing invoices and moves them: payments, void, write-off. An
// organization principal sees its own invoices and payments only (another organization's
// is ENotFound, as an unknown id); the operator sees every one.
type InvoiceService interface {
	// ListInvoices returns a page of invoices in id (issue) order and the next cursor.
	ListInvoices(ctx context.Context, f InvoiceFilter) ([]*BillingInvoice, *string, error)
	// FindInvoice returns one invoice, with its lines.
	FindInvoice(ctx context.Context, id uuid.UUID) (*BillingInvoice, error)
	// PayInvoice charges the sandbox payment method for amount and records the payment,
	// succeeded or failed, under the invoice's row lock, so concurrent payments apply one
	// after another and never more than is due (CheckPayment). A succeeded payment that
	// pays the first invoice of a plan selection in full activates the selection.
	PayInvoice(ctx context.Context, id uuid.UUID, amount int64, method string) (*Payment, error)
	// VoidInvoice voids an invoice (BillingInvoice.Void); the organization or the operator.
	VoidInvoice(ctx context.Context, id uuid.UUID) (*BillingInvoice, error)
	// MarkInvoiceUncollectible writes an invoice off (BillingInvoice.MarkUncollectible); the
	// operator only (EForbidden for anyone else, before anything is read).
	MarkInvoiceUncollectible(ctx context.Context, id uuid.UUID) (*BillingInvoice, error)
	// ListPayments returns a page of payments in id (creation) order and the next cursor.
	ListPayments(ctx context.Context, f PaymentFilter) ([]*Payment, *string, error)
	// FindPayment returns one payment.
	FindPayment(ctx context.Context, id uuid.UUID) (*Payment, error)
	// ListInvoiceTaxDocuments returns the tax documents of invoice id (the organization's
	// own, or any for the operator; another's is ENotFound like an unknown id) and why the
	// engine refused its tax invoice, if it did.
	ListInvoiceTaxDocuments(ctx context.Context, id uuid.UUID) (*InvoiceTaxDocuments, error)
	// RetryInvoiceTaxDocuments makes a failed tax document of invoice id pending again and
	// queues the job that issues it (CheckTaxDocumentRetry: EInvalidTransition when it is
	// not failed); ENotFound as ListInvoiceTaxDocuments. Returns the tax documents, pending.
	RetryInvoiceTaxDocuments(ctx context.Context, id uuid.UUID) (*InvoiceTaxDocuments, error)
}
