package postgres

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// Usage rating (docs/design.md, "Usage rating"): a renewal rates the usage of the period it
// closes (core.Subscription.Renew), and the upcoming invoice previews it from the usage so far.

// periodUsage is the usage of sub on plan, its current plan, in the period its next renewal
// closes (core.Subscription.UsagePeriod): nil when there is none. A product's accepted
// operations (usage_events) count toward its metering metric; a product with more than one
// metric (platform access) has no operation counted, hence no usage.
func periodUsage(ctx context.Context, q *dbq.Queries, sub *core.Subscription, plan *core.Plan) (core.Usage, error) {
	from, to, ok := sub.UsagePeriod(plan)
	if !ok {
		return nil, nil
	}
	return usageBetween(ctx, q, sub, from, to)
}

// usageBetween is the usage of sub from from up to to (excluded), counted as periodUsage
// counts it.
func usageBetween(ctx context.Context, q *dbq.Queries, sub *core.Subscription, from, to time.Time) (core.Usage, error) {
	row, err := billingProduct(ctx, q, sub.ProductID)
	if err != nil || len(row.MeteringMetrics) != 1 {
		return nil, err
	}
	n, err := q.UsageCountInPeriod(ctx, dbq.UsageCountInPeriodParams{
		OrganizationID: sub.OrganizationID, Product: row.Code, FromTime: from, ToTime: to,
	})
	if err != nil {
		return nil, err
	}
	return core.Usage{row.MeteringMetrics[0]: n}, nil
}

// UpcomingInvoice implements core.SubscriptionService.
func (s *SubscriptionService) UpcomingInvoice(ctx context.Context, id uuid.UUID, planID *uuid.UUID) (*core.BillingInvoice, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	var inv *core.BillingInvoice
	err = s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		sub, err := findSubscription(ctx, q, id)
		if err != nil {
			return err
		}
		plan, err := planWithPrices(ctx, q, sub.PlanID)
		if err != nil {
			return err
		}
		at := s.db.billingNow(ctx, sub.OrganizationID)
		if planID != nil {
			inv, err = s.upcomingChange(ctx, q, sub, plan, *planID, p.ActorType(), at)
		} else {
			inv, err = upcomingRenewal(ctx, q, sub, plan)
		}
		if err != nil {
			return err
		}
		if err := applyCreditBalance(ctx, q, sub.OrganizationID, inv, false); err != nil {
			return err
		}
		inv.ID, err = uuid.NewV7()
		inv.CreatedAt, inv.UpdatedAt = at, at
		inv.OrganizationID, inv.SubscriptionID = sub.OrganizationID, sub.ID
		return err
	})
	return inv, err
}

// upcomingRenewal is the draft of the next renewal's invoice of sub on plan, from the usage so
// far, or ENotFound when sub does not renew.
func upcomingRenewal(ctx context.Context, q *dbq.Queries, sub *core.Subscription, plan *core.Plan) (*core.BillingInvoice, error) {
	usage, err := periodUsage(ctx, q, sub, plan)
	if err != nil {
		return nil, err
	}
	inv, ok, err := sub.UpcomingInvoice(plan, usage)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, core.Errorf(core.ENotFound, "Subscription %s has no upcoming invoice: it does not renew (commercial status %s, service status %s).",
			sub.ID, sub.CommercialStatus, sub.ServiceStatus)
	}
	return inv, nil
}

// upcomingChange is the draft of the invoice a change of sub from plan to planID by actor would
// issue at at, refused as the change would be; the refusal of the plan names the query
// parameter.
func (s *SubscriptionService) upcomingChange(ctx context.Context, q *dbq.Queries, sub *core.Subscription, plan *core.Plan, planID uuid.UUID, actor string, at time.Time) (*core.BillingInvoice, error) {
	if err := sub.CheckTransition(core.ActionChangePlan, actor); err != nil {
		return nil, err
	}
	next, err := s.db.requestedPlan(ctx, q, sub, planID)
	if err != nil {
		return nil, inQuery(err)
	}
	after := *sub
	if err := after.Apply(core.ActionChangePlan, actor, next, at); err != nil {
		return nil, err
	}
	invoiced, usage, err := closingUsage(ctx, q, sub, plan, at)
	if err != nil {
		return nil, err
	}
	return core.UpcomingChangeInvoice(sub, plan, &after, next, invoiced, usage, at)
}

// feeInvoiced reports whether a recurring fee of sub for the day of at was invoiced: what a
// plan change at at may credit.
func feeInvoiced(ctx context.Context, q *dbq.Queries, sub *core.Subscription, at time.Time) (bool, error) {
	return q.RecurringFeeInvoicedOn(ctx, dbq.RecurringFeeInvoicedOnParams{
		OrganizationID: sub.OrganizationID, SubscriptionID: sub.ID, Day: pgtype.Date{Time: at.UTC(), Valid: true},
	})
}

// inQuery moves the field errors of err from the body's /plan_id to the query's plan_id.
func inQuery(err error) error {
	if e, ok := err.(*core.Error); ok {
		for i := range e.Fields {
			if e.Fields[i].Pointer == "/plan_id" {
				e.Fields[i].Location, e.Fields[i].Pointer = "query", "plan_id"
			}
		}
	}
	return err
}
