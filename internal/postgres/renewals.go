package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// Renewals (docs/design.md, "Renewals and test clocks"). A subscription has a billing step due
// when its renewal arrives (the view subscription_billing_steps says which) or, cancelled, when
// the period already invoiced ends. The wall-clock worker (internal/jobs, BillDue) takes the
// steps of organizations on no test clock; a test clock's advance takes its organization's.
// Both take each step through billingStep, at the time billingNow answers.

// billStepsBatch is how many due steps BillDue reads at a time.
const billStepsBatch = 100

// BillDue takes every billing step due by the wall clock, of every organization on no test
// clock, oldest first, each in a transaction of its own, and returns how many it took. Any
// number of processes may run it at once: a step is taken under its subscription's row lock
// and only if it is still due then, and subscription_renewals refuses a second renewal of a
// period. A step that fails is reported (with the others) and left for the next run; the
// others go on.
func (d *DB) BillDue(ctx context.Context) (int, error) {
	taken := 0
	var errs []error
	for {
		rows, err := d.queries(ctx).BillingStepsDueAnyOrganization(ctx, dbq.BillingStepsDueAnyOrganizationParams{Now: now(), MaxRows: billStepsBatch})
		if err != nil {
			return taken, errors.Join(append(errs, err)...)
		}
		progressed := false
		for _, r := range rows {
			took, err := d.billingStep(ctx, r.OrganizationID, r.ID)
			if err != nil {
				errs = append(errs, fmt.Errorf("subscription %s: %w", r.ID, err))
				continue
			}
			if took {
				taken++
				progressed = true
			}
		}
		// A subscription several periods behind comes back once per period, and a full batch
		// may hide more: read again while steps are being taken. A read without progress
		// (nothing due, or only failing steps) would come back unchanged.
		if !progressed || ctx.Err() != nil {
			return taken, errors.Join(errs...)
		}
	}
}

// billingStep takes the billing step of subscription id of organization org that is due at
// the organization's billing time, in a transaction of its own (a savepoint within a clock's
// advance), and reports whether there was one: it locks the row, checks the step is still
// due, then ends the service of a cancelled subscription, renews a live one for one period, or
// takes its dunning step (dunning.go).
func (d *DB) billingStep(ctx context.Context, org, id uuid.UUID) (bool, error) {
	took, serviceChanged := false, false
	err := d.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		row, err := q.SubscriptionGetByIDForUpdate(ctx, dbq.SubscriptionGetByIDForUpdateParams{OrganizationID: org, ID: id})
		if err != nil {
			return err
		}
		at := d.billingNow(ctx, org)
		due, err := q.BillingStepDue(ctx, dbq.BillingStepDueParams{OrganizationID: org, ID: id, Now: at})
		if err != nil || !due {
			return err
		}
		before, err := subscriptionFromRow(row)
		if err != nil {
			return err
		}
		after := *before
		switch {
		case before.ServiceEndDue(at):
			after.EndService(at)
			took, serviceChanged = true, true
			if err := d.issueFinalInvoice(ctx, q, before, at); err != nil {
				return err
			}
			return d.recordBillingStep(ctx, q, before, &after, at, "subscription.terminated", core.EventSubscriptionTerminated, "")
		case before.RenewalDue(at):
			if err := d.renew(ctx, q, &after, at); err != nil {
				return err
			}
			took = true
			return d.recordBillingStep(ctx, q, before, &after, at, "subscription.renewed", core.EventSubscriptionRenewed, "")
		}
		took, serviceChanged, err = d.dunningStep(ctx, q, before, at)
		return err
	})
	if serviceChanged {
		d.credentialsChanged(ctx) // the product's next operation obeys the new service status
	}
	return took, err
}

// recordBillingStep stores after, the state a billing step at at moved before to, with its
// audit action (and reason, when not empty) and publishes event.
func (d *DB) recordBillingStep(ctx context.Context, q *dbq.Queries, before, after *core.Subscription, at time.Time, action string, event core.EventType, reason string) error {
	after.UpdatedAt = at
	sub, err := updateSubscription(ctx, q, after)
	if err != nil {
		return err
	}
	if err := audit(ctx, q, core.AuditEntry{
		OrganizationID: &sub.OrganizationID,
		Action:         action,
		ResourceType:   "subscription",
		ResourceID:     sub.ID.String(),
		Before:         before,
		After:          sub,
		Reason:         reason,
	}); err != nil {
		return err
	}
	return d.publish(ctx, q, sub.OrganizationID, event, sub)
}

// renew renews sub for one period at at (core.Subscription.Renew) on its current plan: it
// issues the period's invoice, with the usage of the period it closes, when something is due, and records the renewal, whose primary
// key refuses a second renewal of the period.
func (d *DB) renew(ctx context.Context, q *dbq.Queries, sub *core.Subscription, at time.Time) error {
	plan, err := planWithPrices(ctx, q, sub.PlanID)
	if err != nil {
		return err
	}
	usage, err := periodUsage(ctx, q, sub, plan)
	if err != nil {
		return err
	}
	renewal := sub.Renew(plan, usage, at)
	var invoiceID *uuid.UUID
	if renewal.Invoice != nil {
		inv, err := d.issueInvoice(ctx, q, sub, renewal.Invoice)
		if err != nil {
			return err
		}
		invoiceID = &inv.ID
	}
	return q.SubscriptionRenewalInsert(ctx, dbq.SubscriptionRenewalInsertParams{
		OrganizationID: sub.OrganizationID,
		SubscriptionID: sub.ID,
		PeriodStart:    pgtype.Date{Time: renewal.PeriodStart, Valid: true},
		PeriodEnd:      pgtype.Date{Time: renewal.PeriodEnd, Valid: true},
		InvoiceID:      invoiceID,
		RenewedAt:      at,
	})
}
