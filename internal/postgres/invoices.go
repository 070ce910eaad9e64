package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// InvoiceService implements core.InvoiceService. Every change locks the invoice row
// (SELECT … FOR UPDATE), applies the domain's rule to what it read, stores the result, the
// audit event and the webhook event in one transaction, so payments of one invoice apply one
// after another and each sees what the previous one left.
type InvoiceService struct {
	db *DB
}

var _ core.InvoiceService = (*InvoiceService)(nil)

// NewInvoiceService returns the invoice service over d.
func NewInvoiceService(d *DB) *InvoiceService {
	return &InvoiceService{db: d}
}

// ListInvoices implements core.InvoiceService.
func (s *InvoiceService) ListInvoices(ctx context.Context, f core.InvoiceFilter) ([]*core.BillingInvoice, *string, error) {
	org, after, err := listScope(ctx, f.OrganizationID, f.Cursor)
	if err != nil {
		return nil, nil, err
	}
	q, limit := s.db.queries(ctx), int32(f.Limit)+1
	var rows []dbq.BillingInvoice
	if org != nil {
		rows, err = q.BillingInvoiceList(ctx, dbq.BillingInvoiceListParams{
			OrganizationID: *org, SubscriptionID: f.SubscriptionID, Status: f.Status, After: after, RowLimit: limit,
		})
	} else {
		rows, err = q.BillingInvoiceListAnyOrganization(ctx, dbq.BillingInvoiceListAnyOrganizationParams{
			SubscriptionID: f.SubscriptionID, Status: f.Status, After: after, RowLimit: limit,
		})
	}
	if err != nil {
		return nil, nil, translate(err)
	}
	invoices := make([]*core.BillingInvoice, len(rows))
	for i, r := range rows {
		if invoices[i], err = invoiceFromRow(r); err != nil {
			return nil, nil, err
		}
	}
	invoices, next := page(invoices, f.Limit, func(inv *core.BillingInvoice) uuid.UUID { return inv.ID })
	return invoices, next, nil
}

// FindInvoice implements core.InvoiceService.
func (s *InvoiceService) FindInvoice(ctx context.Context, id uuid.UUID) (*core.BillingInvoice, error) {
	q := s.db.queries(ctx)
	row, err := owned(ctx,
		func(org uuid.UUID) (dbq.BillingInvoice, error) {
			return q.BillingInvoiceGetByID(ctx, dbq.BillingInvoiceGetByIDParams{OrganizationID: org, ID: id})
		},
		func() (dbq.BillingInvoice, error) { return q.BillingInvoiceGetByIDAnyOrganization(ctx, id) },
		"Invoice", id)
	if err != nil {
		return nil, err
	}
	return invoiceFromRow(row)
}

// PayInvoice implements core.InvoiceService.
func (s *InvoiceService) PayInvoice(ctx context.Context, id uuid.UUID, amount int64, method string) (*core.Payment, error) {
	var pay *core.Payment
	serviceChanged := false
	err := s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		inv, err := lockInvoiceOfSubscription(ctx, q, id)
		if err != nil {
			return err
		}
		if err := inv.CheckPayment(amount); err != nil {
			return err
		}
		at := s.db.billingNow(ctx, inv.OrganizationID)
		if pay, err = insertPayment(ctx, q, core.ChargeSandbox(inv, amount, method), at); err != nil {
			return err
		}
		if pay.Status == core.PaymentFailed {
			return s.db.recordFailedPayment(ctx, q, inv, pay)
		}
		serviceChanged, err = s.applyPayment(ctx, q, inv, pay, at)
		return err
	})
	if err != nil {
		return nil, err
	}
	if serviceChanged {
		s.db.credentialsChanged(ctx) // the product's next operation obeys the resumed service
	}
	return pay, nil
}

// recordFailedPayment records that the payment pay of the locked invoice inv failed: the
// invoice is unchanged.
func (d *DB) recordFailedPayment(ctx context.Context, q *dbq.Queries, inv *core.BillingInvoice, pay *core.Payment) error {
	if err := auditInvoice(ctx, q, "billing_invoice.payment_failed", inv, inv, pay); err != nil {
		return err
	}
	return d.publish(ctx, q, inv.OrganizationID, core.EventInvoicePaymentFailed, inv)
}

// applyPayment applies the succeeded payment pay to the locked invoice inv (its subscription
// locked first) at at and records what follows: the invoice paid in full is announced, when it
// opens a plan selection activates it, and when it is dunned recovers its subscription. It
// reports whether the subscription's service status changed.
func (s *InvoiceService) applyPayment(ctx context.Context, q *dbq.Queries, inv *core.BillingInvoice, pay *core.Payment, at time.Time) (bool, error) {
	before := *inv
	inv.ApplyPayment(pay.Amount, at)
	after, err := updateInvoice(ctx, q, inv)
	if err != nil {
		return false, err
	}
	if err := auditInvoice(ctx, q, "billing_invoice.payment_succeeded", &before, after, pay); err != nil {
		return false, err
	}
	if after.Status != core.InvoicePaid {
		return false, nil
	}
	if err := s.db.publish(ctx, q, after.OrganizationID, core.EventInvoicePaid, after); err != nil {
		return false, err
	}
	if after.OpensSelection {
		if err := activateSelection(ctx, q, after); err != nil {
			return false, err
		}
	}
	return s.db.settleDunning(ctx, q, after, at)
}

// activateSelection records that the plan selection whose first invoice inv is has been paid
// for: the subscription object shows nothing of it, so an audit event says so, and a plan
// that charges makes the organization commercially live (its onboarding completes).
func activateSelection(ctx context.Context, q *dbq.Queries, inv *core.BillingInvoice) error {
	plan, err := planWithPrices(ctx, q, inv.PlanID)
	if err != nil {
		return err
	}
	if err := audit(ctx, q, core.AuditEntry{
		OrganizationID: &inv.OrganizationID,
		Action:         "subscription.plan_activated",
		ResourceType:   "subscription",
		ResourceID:     inv.SubscriptionID.String(),
		After:          map[string]any{"subscription_id": inv.SubscriptionID, "plan_id": inv.PlanID, "invoice_id": inv.ID, "activation": core.ActivationActive},
	}); err != nil {
		return err
	}
	if m, ok := core.PlanSelectionMilestone(plan, core.ActivationActive); ok {
		return reachOnboarding(ctx, q, inv.OrganizationID, m)
	}
	return nil
}

// VoidInvoice implements core.InvoiceService.
func (s *InvoiceService) VoidInvoice(ctx context.Context, id uuid.UUID) (*core.BillingInvoice, error) {
	return s.move(ctx, id, "billing_invoice.voided", core.EventInvoiceVoided, (*core.BillingInvoice).Void)
}

// MarkInvoiceUncollectible implements core.InvoiceService.
func (s *InvoiceService) MarkInvoiceUncollectible(ctx context.Context, id uuid.UUID) (*core.BillingInvoice, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if !p.IsOperator() {
		return nil, core.Errorf(core.EForbidden, "Only the operator may mark an invoice uncollectible.")
	}
	return s.move(ctx, id, "billing_invoice.uncollectible", core.EventInvoiceUncollectible, (*core.BillingInvoice).MarkUncollectible)
}

// move changes the status of the locked invoice id with rule, at the organization's billing
// time, and records the change as action and event.
func (s *InvoiceService) move(ctx context.Context, id uuid.UUID, action string, event core.EventType, rule func(*core.BillingInvoice, time.Time) error) (*core.BillingInvoice, error) {
	var after *core.BillingInvoice
	serviceChanged := false
	err := s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		inv, err := lockInvoiceOfSubscription(ctx, q, id)
		if err != nil {
			return err
		}
		before := *inv
		at := s.db.billingNow(ctx, inv.OrganizationID)
		if err := rule(inv, at); err != nil {
			return err
		}
		if after, err = updateInvoice(ctx, q, inv); err != nil {
			return err
		}
		if err := auditInvoice(ctx, q, action, &before, after, nil); err != nil {
			return err
		}
		if err := s.db.publish(ctx, q, after.OrganizationID, event, after); err != nil {
			return err
		}
		if after.Status != core.InvoiceVoid { // written off by the operator: dunning goes on
			return nil
		}
		// A void owes the credit note of the invoice's tax document, and nothing is owed any more:
		// the credit balance it took is the customer's again.
		if err := s.db.queueTaxDocuments(ctx, after); err != nil {
			return err
		}
		if err := s.db.restoreCreditBalance(ctx, q, after, at); err != nil {
			return err
		}
		serviceChanged, err = s.db.settleDunning(ctx, q, after, at)
		return err
	})
	if err != nil {
		return nil, err
	}
	if serviceChanged {
		s.db.credentialsChanged(ctx) // the product's next operation obeys the resumed service
	}
	return after, nil
}

// ListPayments implements core.InvoiceService.
func (s *InvoiceService) ListPayments(ctx context.Context, f core.PaymentFilter) ([]*core.Payment, *string, error) {
	org, after, err := listScope(ctx, f.OrganizationID, f.Cursor)
	if err != nil {
		return nil, nil, err
	}
	q, limit := s.db.queries(ctx), int32(f.Limit)+1
	var rows []dbq.BillingPayment
	if org != nil {
		rows, err = q.BillingPaymentList(ctx, dbq.BillingPaymentListParams{OrganizationID: *org, InvoiceID: f.InvoiceID, After: after, RowLimit: limit})
	} else {
		rows, err = q.BillingPaymentListAnyOrganization(ctx, dbq.BillingPaymentListAnyOrganizationParams{InvoiceID: f.InvoiceID, After: after, RowLimit: limit})
	}
	if err != nil {
		return nil, nil, translate(err)
	}
	payments := make([]*core.Payment, len(rows))
	for i, r := range rows {
		payments[i] = paymentFromRow(r)
	}
	payments, next := page(payments, f.Limit, func(p *core.Payment) uuid.UUID { return p.ID })
	return payments, next, nil
}

// FindPayment implements core.InvoiceService.
func (s *InvoiceService) FindPayment(ctx context.Context, id uuid.UUID) (*core.Payment, error) {
	q := s.db.queries(ctx)
	row, err := owned(ctx,
		func(org uuid.UUID) (dbq.BillingPayment, error) {
			return q.BillingPaymentGetByID(ctx, dbq.BillingPaymentGetByIDParams{OrganizationID: org, ID: id})
		},
		func() (dbq.BillingPayment, error) { return q.BillingPaymentGetByIDAnyOrganization(ctx, id) },
		"Payment", id)
	if err != nil {
		return nil, err
	}
	return paymentFromRow(row), nil
}

// lockInvoice reads and locks invoice id for the caller (another organization's is not found
// and not locked).
func lockInvoice(ctx context.Context, q *dbq.Queries, id uuid.UUID) (*core.BillingInvoice, error) {
	row, err := owned(ctx,
		func(org uuid.UUID) (dbq.BillingInvoice, error) {
			return q.BillingInvoiceGetByIDForUpdate(ctx, dbq.BillingInvoiceGetByIDForUpdateParams{OrganizationID: org, ID: id})
		},
		func() (dbq.BillingInvoice, error) { return q.BillingInvoiceGetByIDForUpdateAnyOrganization(ctx, id) },
		"Invoice", id)
	if err != nil {
		return nil, err
	}
	return invoiceFromRow(row)
}

// updateInvoice stores the payment state and status a rule computed for inv.
func updateInvoice(ctx context.Context, q *dbq.Queries, inv *core.BillingInvoice) (*core.BillingInvoice, error) {
	row, err := q.BillingInvoiceUpdateState(ctx, dbq.BillingInvoiceUpdateStateParams{
		OrganizationID: inv.OrganizationID, ID: inv.ID, Status: inv.Status, AmountPaid: inv.AmountPaid, PaidAt: inv.PaidAt, UpdatedAt: inv.UpdatedAt,
	})
	if err != nil {
		return nil, err
	}
	return invoiceFromRow(row)
}

// insertPayment records the charged payment at at.
func insertPayment(ctx context.Context, q *dbq.Queries, charged core.Payment, at time.Time) (*core.Payment, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	row, err := q.BillingPaymentInsert(ctx, dbq.BillingPaymentInsertParams{
		ID: id, CreatedAt: at, OrganizationID: charged.OrganizationID, InvoiceID: charged.InvoiceID, Amount: charged.Amount,
		Currency: charged.Currency, PaymentMethod: charged.PaymentMethod, Status: charged.Status,
		FailureCode: charged.FailureCode, FailureMessage: charged.FailureMessage,
	})
	if err != nil {
		return nil, err
	}
	return paymentFromRow(row), nil
}

// auditInvoice appends the audit event of a change of an invoice; pay, when not nil, is the
// payment that made it, recorded as the entry's reason.
func auditInvoice(ctx context.Context, q *dbq.Queries, action string, before, after *core.BillingInvoice, pay *core.Payment) error {
	e := core.AuditEntry{
		OrganizationID: &after.OrganizationID,
		Action:         action,
		ResourceType:   "billing_invoice",
		ResourceID:     after.ID.String(),
		Before:         before,
		After:          after,
	}
	if pay != nil {
		e.Reason = fmt.Sprintf("payment %s of %d %s with %s: %s", pay.ID, pay.Amount, pay.Currency, pay.PaymentMethod, pay.Status)
	}
	return audit(ctx, q, e)
}

// announceInvoiceIssued publishes the events of an invoice just issued: invoice.issued, and
// its deprecated alias billing_invoice.issued to the endpoints that name the alias and not
// invoice.issued, so no endpoint receives one issuance twice.
func (d *DB) announceInvoiceIssued(ctx context.Context, q *dbq.Queries, inv *core.BillingInvoice) error {
	if err := d.publish(ctx, q, inv.OrganizationID, core.EventInvoiceIssued, inv); err != nil {
		return err
	}
	return d.publish(ctx, q, inv.OrganizationID, core.EventBillingInvoiceIssued, inv, core.EventBillingInvoiceIssued.SucceededBy())
}

func paymentFromRow(r dbq.BillingPayment) *core.Payment {
	return &core.Payment{
		ID: r.ID, CreatedAt: r.CreatedAt, OrganizationID: r.OrganizationID, InvoiceID: r.InvoiceID, Amount: r.Amount,
		Currency: r.Currency, PaymentMethod: r.PaymentMethod, Status: r.Status, FailureCode: r.FailureCode, FailureMessage: r.FailureMessage,
	}
}
