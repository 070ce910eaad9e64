package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// Dunning (docs/design.md, "Dunning"; the rules are core's, dunning.go). Its steps are billing
// steps (subscription_billing_steps): billingStep takes them as it takes renewals, under the
// subscription's row lock, by the wall-clock worker or a test clock's advance. A payment or a
// void of the invoice dunned recovers the subscription in its own transaction (settleDunning);
// both paths hold the product shared, then lock the subscription, then the invoice, so they
// never deadlock, and a recovery reads the product's open incidents as a resume does.

// dunningStep takes the dunning step of the locked subscription before that is due at at, if
// any, and reports whether it took one and whether the service status changed (a write-off
// suspends it, a recovery resumes it): a current subscription with an invoice unpaid at its
// due_at becomes overdue; one whose next retry has come retries.
func (d *DB) dunningStep(ctx context.Context, q *dbq.Queries, before *core.Subscription, at time.Time) (took, serviceChanged bool, err error) {
	if before.DunningRetryDue(at) {
		serviceChanged, err = d.retryDunning(ctx, q, before, at)
		return true, serviceChanged, err
	}
	if before.BillingStatus != core.BillingCurrent {
		return false, false, nil
	}
	row, err := q.BillingInvoiceOverdueFirstForUpdate(ctx, dbq.BillingInvoiceOverdueFirstForUpdateParams{OrganizationID: before.OrganizationID, SubscriptionID: before.ID, Now: at})
	if errors.Is(err, pgx.ErrNoRows) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	inv, err := invoiceFromRow(row)
	if err != nil {
		return false, false, err
	}
	after := *before
	after.BecomeOverdue(inv)
	return true, false, d.recordDunningStep(ctx, q, before, &after, at, core.EventSubscriptionOverdue,
		fmt.Sprintf("invoice %s: %d %s unpaid at its due date %s", inv.ID, inv.AmountDue(), inv.Currency, inv.DueAt.Format(time.RFC3339)))
}

// retryDunning takes the retry of the locked subscription before that is due at at: it
// charges the payment method on file for what is due on the invoice dunned. A retry that
// succeeds pays the invoice, which recovers the subscription (applyPayment); one that fails,
// or finds no payment method on file, moves the dunning on (core.Subscription.FailRetry) and,
// the last, writes the invoice off. It reports whether the service status changed.
func (d *DB) retryDunning(ctx context.Context, q *dbq.Queries, before *core.Subscription, at time.Time) (bool, error) {
	row, err := q.BillingInvoiceGetByIDForUpdate(ctx, dbq.BillingInvoiceGetByIDForUpdateParams{OrganizationID: before.OrganizationID, ID: *before.Dunning.InvoiceID})
	if err != nil {
		return false, err
	}
	inv, err := invoiceFromRow(row)
	if err != nil {
		return false, err
	}
	method, err := q.BillingPaymentMethodOnFile(ctx, dbq.BillingPaymentMethodOnFileParams{OrganizationID: before.OrganizationID, SubscriptionID: before.ID})
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return false, err
	}
	outcome := "no payment method on file"
	if method != "" {
		pay, err := insertPayment(ctx, q, core.ChargeSandbox(inv, inv.AmountDue(), method), at)
		if err != nil {
			return false, err
		}
		if pay.Status == core.PaymentSucceeded {
			return NewInvoiceService(d).applyPayment(ctx, q, inv, pay, at)
		}
		if err := d.recordFailedPayment(ctx, q, inv, pay); err != nil {
			return false, err
		}
		outcome = fmt.Sprintf("payment %s with %s failed: %s", pay.ID, pay.PaymentMethod, *pay.FailureCode)
	}
	after := *before
	writtenOff := after.FailRetry(inv, at)
	reason := fmt.Sprintf("retry %d of %d of invoice %s: %s", after.Dunning.Retries, len(core.DunningSchedule), inv.ID, outcome)
	if !writtenOff {
		return false, d.recordDunningStep(ctx, q, before, &after, at, core.EventSubscriptionPaymentRetryFailed, reason)
	}
	if err := d.writeOffInvoice(ctx, q, inv, at); err != nil {
		return false, err
	}
	return after.ServiceStatus != before.ServiceStatus, d.recordDunningStep(ctx, q, before, &after, at, core.EventSubscriptionWrittenOff, reason)
}

// writeOffInvoice marks the locked invoice dunned uncollectible at at, unless the operator
// already has.
func (d *DB) writeOffInvoice(ctx context.Context, q *dbq.Queries, inv *core.BillingInvoice, at time.Time) error {
	if inv.Status == core.InvoiceUncollectible {
		return nil
	}
	before := *inv
	if err := inv.MarkUncollectible(at); err != nil {
		return err
	}
	after, err := updateInvoice(ctx, q, inv)
	if err != nil {
		return err
	}
	if err := auditInvoice(ctx, q, "billing_invoice.uncollectible", &before, after, nil); err != nil {
		return err
	}
	return d.publish(ctx, q, after.OrganizationID, core.EventInvoiceUncollectible, after)
}

// settleDunning recovers the subscription of inv, just paid in full or voided at at, when
// inv is the invoice it is dunned for, and reports whether its service status changed (the
// caller then tells the credential caches, once committed).
func (d *DB) settleDunning(ctx context.Context, q *dbq.Queries, inv *core.BillingInvoice, at time.Time) (bool, error) {
	row, err := q.SubscriptionGetByIDForUpdate(ctx, dbq.SubscriptionGetByIDForUpdateParams{OrganizationID: inv.OrganizationID, ID: inv.SubscriptionID})
	if err != nil {
		return false, err
	}
	before, err := subscriptionFromRow(row)
	if err != nil || !before.Dunned(inv) {
		return false, err
	}
	plan, err := planWithPrices(ctx, q, before.PlanID)
	if err != nil {
		return false, err
	}
	// The service resumes degraded while its product has an incident open.
	if before.ProductIncidentOpen, err = q.ProductIncidentOpenExists(ctx, before.ProductID); err != nil {
		return false, err
	}
	after := *before
	after.Recover(plan, at)
	if err := d.recordDunningStep(ctx, q, before, &after, at, core.EventSubscriptionRecovered, fmt.Sprintf("invoice %s %s", inv.ID, inv.Status)); err != nil {
		return false, err
	}
	if err := d.billSkippedUsage(ctx, q, before, &after, plan, at); err != nil {
		return false, err
	}
	if after.ServiceStatus == before.ServiceStatus {
		return false, nil
	}
	return true, d.provisionResumed(ctx, &after)
}

// billSkippedUsage issues, at at, the invoice of the usage that the first renewal the recovery
// of before (into after) skipped would have billed: that of the period the write-off
// interrupted, which the renewals that follow do not close (core.Subscription.Recover).
func (d *DB) billSkippedUsage(ctx context.Context, q *dbq.Queries, before, after *core.Subscription, plan *core.Plan, at time.Time) error {
	if before.RenewsAt == nil || after.RenewsAt == nil || !after.RenewsAt.After(*before.RenewsAt) {
		return nil
	}
	from, to, ok := before.UsagePeriod(plan)
	if !ok {
		return nil
	}
	usage, err := usageBetween(ctx, q, before, from, to)
	if err != nil {
		return err
	}
	draft, err := core.ArrearsInvoice(plan, usage, from, to, at)
	return d.issueDrafted(ctx, q, after, draft, err)
}

// recordDunningStep stores after, the state a dunning step at at moved before to, its
// dunning with it, and records the step: audit action and webhook event are both event.
func (d *DB) recordDunningStep(ctx context.Context, q *dbq.Queries, before, after *core.Subscription, at time.Time, event core.EventType, reason string) error {
	if err := q.SubscriptionSetDunning(ctx, dbq.SubscriptionSetDunningParams{
		OrganizationID: after.OrganizationID, ID: after.ID, BillingStatus: after.BillingStatus,
		DunningInvoiceID: after.Dunning.InvoiceID, DunningRetries: int32(after.Dunning.Retries), DunningNextAt: after.Dunning.NextAt,
	}); err != nil {
		return err
	}
	return d.recordBillingStep(ctx, q, before, after, at, string(event), event, reason)
}

// lockForServiceStart holds the product of subscription id of organization org shared, then
// locks the subscription: the order of everything that may start its service (resume,
// provisioning, a recovery), so a declaration or resolution of an incident of the product
// cannot commit between reading its open incidents and storing the status they imply.
func lockForServiceStart(ctx context.Context, q *dbq.Queries, org, id uuid.UUID) error {
	if _, err := q.ProductLockForSubscription(ctx, dbq.ProductLockForSubscriptionParams{OrganizationID: org, ID: id}); err != nil {
		return err
	}
	_, err := q.SubscriptionGetByIDForUpdate(ctx, dbq.SubscriptionGetByIDForUpdateParams{OrganizationID: org, ID: id})
	return err
}

// lockInvoiceOfSubscription holds the product of invoice id's subscription shared, then locks
// the subscription, then the invoice, for the caller (another organization's invoice is not
// found, and nothing is locked): payments and voids lock in the order billing steps do. The
// product comes first because settling a dunned invoice starts the service (settleDunning),
// which reads the product's open incidents: held, as for every service start.
func lockInvoiceOfSubscription(ctx context.Context, q *dbq.Queries, id uuid.UUID) (*core.BillingInvoice, error) {
	row, err := owned(ctx,
		func(org uuid.UUID) (dbq.BillingInvoice, error) {
			return q.BillingInvoiceGetByID(ctx, dbq.BillingInvoiceGetByIDParams{OrganizationID: org, ID: id})
		},
		func() (dbq.BillingInvoice, error) { return q.BillingInvoiceGetByIDAnyOrganization(ctx, id) },
		"Invoice", id)
	if err != nil {
		return nil, err
	}
	if err := lockForServiceStart(ctx, q, row.OrganizationID, row.SubscriptionID); err != nil {
		return nil, err
	}
	return lockInvoice(ctx, q, id)
}
