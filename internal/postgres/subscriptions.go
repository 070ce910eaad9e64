package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// SubscriptionService implements core.SubscriptionService. Every lifecycle action locks the
// subscription row (SELECT … FOR UPDATE), applies the domain's transition to what it read,
// stores the result and appends the audit event in one transaction, so concurrent actions on
// one subscription run one after another and each sees the state the previous one left.
type SubscriptionService struct {
	db *DB
}

var _ core.SubscriptionService = (*SubscriptionService)(nil)

// NewSubscriptionService returns the subscription service over d.
func NewSubscriptionService(d *DB) *SubscriptionService {
	return &SubscriptionService{db: d}
}

// now is the current time at the precision PostgreSQL stores, so what a response shows is
// what a later read returns.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// auditActions names the audit event of each lifecycle action.
var auditActions = map[core.SubscriptionAction]string{
	core.ActionSelectPlan: "subscription.plan_selected",
	core.ActionChangePlan: "subscription.plan_changed",
	core.ActionCancel:     "subscription.cancelled",
	core.ActionReactivate: "subscription.reactivated",
	core.ActionSuspend:    "subscription.suspended",
	core.ActionResume:     "subscription.resumed",
	core.ActionTerminate:  "subscription.terminated",
}

// CreateSubscription implements core.SubscriptionService.
func (s *SubscriptionService) CreateSubscription(ctx context.Context, in core.SubscriptionCreate) (*core.Subscription, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	orgID := in.OrganizationID
	if err := p.ActsFor(orgID, "/organization_id"); err != nil {
		return nil, err
	}
	config := []byte("{}")
	if in.RequestedConfiguration != nil {
		if config, err = json.Marshal(in.RequestedConfiguration); err != nil {
			return nil, err
		}
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	provisioningID, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	var sub *core.Subscription
	err = s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		// The organization's status is read held, not from the credential cache: a termination
		// under way (which terminates the live subscriptions it finds) is waited for and then
		// refuses this one, rather than missing the subscription inserted beside it.
		org, err := q.OrganizationGetByIDForShare(ctx, orgID)
		if err != nil {
			return notFoundAs(err, "Organization %s does not exist.", orgID)
		}
		standing := core.Standing{Lifecycle: org.LifecycleStatus, Verification: org.VerificationStatus, Risk: org.RiskStatus}
		if err := core.Entitle(standing, core.Access{Act: core.ActSubscribe}); err != nil {
			return err
		}
		product, err := productNamed(ctx, q, in.ProductID)
		if err != nil {
			return err
		}
		if err := s.db.checkOfferedTo(ctx, q, orgID, product, "/product_id", "unknown_product", fmt.Sprintf("Product %s does not exist.", in.ProductID)); err != nil {
			return err
		}
		if product.Availability == core.ProductDeprecated {
			// Deprecated products keep their subscriptions but take no new ones.
			return core.Unprocessable("/product_id", "product_deprecated",
				fmt.Sprintf("Product %s (%s) is deprecated; it takes no new subscriptions.", product.ID, product.Code))
		}
		plan, err := selectablePlan(ctx, q, product, in.PlanID)
		if err != nil {
			return err
		}
		live, err := q.SubscriptionGetLiveByProduct(ctx, dbq.SubscriptionGetLiveByProductParams{OrganizationID: orgID, ProductID: product.ID})
		switch {
		case err == nil:
			return core.Errorf(core.EConflict, "Organization %s already has subscription %s to product %s; change its plan or terminate it first.",
				orgID, live.ID, product.Code)
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		t := s.db.billingNow(ctx, orgID)
		anchor := plan.CycleAnchor(t)
		requestID := "prov_" + provisioningID.String()
		row, err := q.SubscriptionInsert(ctx, dbq.SubscriptionInsertParams{
			ID:                     id,
			OrganizationID:         orgID,
			ProductID:              product.ID,
			PlanID:                 plan.ID,
			CommercialStatus:       core.CommercialActive,
			ServiceStatus:          core.ServiceProvisioning,
			BillingStatus:          core.BillingCurrent,
			ProvisioningRequestID:  &requestID,
			RequestedConfiguration: config,
			StartedAt:              t,
			BillingAnchorAt:        anchor,
			RenewsAt:               plan.NextRenewal(anchor, t),
		})
		if isUniqueViolation(err, "subscriptions_live_product") {
			// Another request created the live subscription after our check.
			return core.Errorf(core.EConflict, "Organization %s already has a live subscription to product %s.", orgID, product.Code)
		}
		if err != nil {
			return err
		}
		if err := s.db.enqueue(ctx, func(jobs Jobs, tx pgx.Tx) error { return jobs.InsertProvisioning(ctx, tx, orgID, id) }); err != nil {
			return err
		}
		if sub, err = subscriptionFromRow(row); err != nil {
			return err
		}
		if err := audit(ctx, q, core.AuditEntry{
			OrganizationID: &orgID,
			Action:         "subscription.created",
			ResourceType:   "subscription",
			ResourceID:     id.String(),
			After:          sub,
		}); err != nil {
			return err
		}
		return s.db.publish(ctx, q, orgID, core.EventSubscriptionCreated, sub)
	})
	if err == nil {
		s.db.credentialsChanged(ctx) // the product's operations now wait for provisioning
	}
	return sub, err
}

// FindSubscriptionByID implements core.SubscriptionService.
func (s *SubscriptionService) FindSubscriptionByID(ctx context.Context, id uuid.UUID) (*core.Subscription, error) {
	return findSubscription(ctx, s.db.queries(ctx), id)
}

// findSubscription reads subscription id as the principal of ctx may: its own organization's,
// or any for the operator (ENotFound otherwise).
func findSubscription(ctx context.Context, q *dbq.Queries, id uuid.UUID) (*core.Subscription, error) {
	row, err := owned(ctx,
		func(org uuid.UUID) (dbq.Subscription, error) {
			return q.SubscriptionGetByID(ctx, dbq.SubscriptionGetByIDParams{OrganizationID: org, ID: id})
		},
		func() (dbq.Subscription, error) { return q.SubscriptionGetByIDAnyOrganization(ctx, id) },
		"Subscription", id)
	if err != nil {
		return nil, err
	}
	return subscriptionFromRow(row)
}

// ListSubscriptions implements core.SubscriptionService.
func (s *SubscriptionService) ListSubscriptions(ctx context.Context, orgID uuid.UUID) ([]*core.Subscription, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.ActsFor(orgID, "organization_id"); err != nil {
		return nil, err
	}
	q := s.db.queries(ctx)
	if _, err := q.OrganizationGetByID(ctx, orgID); err != nil {
		return nil, notFoundAs(err, "Organization %s does not exist.", orgID)
	}
	rows, err := q.SubscriptionListByOrganization(ctx, orgID)
	if err != nil {
		return nil, translate(err)
	}
	subs := make([]*core.Subscription, len(rows))
	for i, r := range rows {
		if subs[i], err = subscriptionFromRow(r); err != nil {
			return nil, err
		}
	}
	return subs, nil
}

// SelectPlan implements core.SubscriptionService. Unpaid invoices of earlier selections are
// voided, so one subscription never has two invoices due.
func (s *SubscriptionService) SelectPlan(ctx context.Context, id, planID uuid.UUID) (*core.PlanSelection, error) {
	sel := &core.PlanSelection{Activation: core.ActivationActive}
	sub, err := s.act(ctx, id, core.ActionSelectPlan, core.EventSubscriptionPlanChanged, "", &planID, func(ctx context.Context, q *dbq.Queries, _, sub *core.Subscription, plan *core.Plan, at time.Time) error {
		if err := s.invoiceSelection(ctx, q, sub, plan, at, sel); err != nil {
			return err
		}
		if m, ok := core.PlanSelectionMilestone(plan, sel.Activation); ok {
			return reachOnboarding(ctx, q, sub.OrganizationID, m)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sel.Subscription = sub
	return sel, nil
}

// invoiceSelection voids the unpaid invoices of earlier selections and issues the invoice of
// the first period when something is due now, recording it and the activation in sel.
func (s *SubscriptionService) invoiceSelection(ctx context.Context, q *dbq.Queries, sub *core.Subscription, plan *core.Plan, at time.Time, sel *core.PlanSelection) error {
	voided, err := q.BillingInvoiceVoidOpen(ctx, dbq.BillingInvoiceVoidOpenParams{OrganizationID: sub.OrganizationID, SubscriptionID: sub.ID})
	if err != nil {
		return err
	}
	for _, row := range voided {
		v, err := invoiceFromRow(row)
		if err != nil {
			return err
		}
		if err := audit(ctx, q, core.AuditEntry{
			OrganizationID: &sub.OrganizationID,
			Action:         "billing_invoice.voided",
			ResourceType:   "billing_invoice",
			ResourceID:     v.ID.String(),
			After:          v,
			Reason:         "superseded by a new plan selection",
		}); err != nil {
			return err
		}
		if err := s.db.publish(ctx, q, sub.OrganizationID, core.EventInvoiceVoided, v); err != nil {
			return err
		}
		if err := s.db.queueTaxDocuments(ctx, v); err != nil {
			return err
		}
	}
	draft := core.FirstInvoice(plan, at)
	if draft == nil {
		return nil
	}
	inv, err := s.db.issueInvoice(ctx, q, sub, draft)
	if err != nil {
		return err
	}
	sel.Invoice, sel.Activation = inv, core.ActivationAwaitingPayment
	return nil
}

// issueInvoice stores draft, an invoice of sub, with its audit event, publishes it and
// queues its tax document. The organization's credit balance is taken off it first, or what
// its credits could not take off is given to the balance (credit.go).
func (d *DB) issueInvoice(ctx context.Context, q *dbq.Queries, sub *core.Subscription, draft *core.BillingInvoice) (*core.BillingInvoice, error) {
	if err := applyCreditBalance(ctx, q, sub.OrganizationID, draft, true); err != nil {
		return nil, err
	}
	inv, err := insertInvoice(ctx, q, sub, draft)
	if err != nil {
		return nil, err
	}
	if err := d.settleCreditBalance(ctx, q, draft, inv); err != nil {
		return nil, err
	}
	if err := audit(ctx, q, core.AuditEntry{
		OrganizationID: &sub.OrganizationID,
		Action:         "billing_invoice.issued",
		ResourceType:   "billing_invoice",
		ResourceID:     inv.ID.String(),
		After:          inv,
	}); err != nil {
		return nil, err
	}
	if err := d.queueTaxDocuments(ctx, inv); err != nil {
		return nil, err
	}
	return inv, d.announceInvoiceIssued(ctx, q, inv)
}

// ChangePlan implements core.SubscriptionService. Changing to the current plan changes
// nothing and answers the subscription as it is. A change is prorated and rates the usage so
// far at the old plan: the invoice of its lines (core.ProrationInvoice) is issued in the
// change's transaction.
func (s *SubscriptionService) ChangePlan(ctx context.Context, id, planID uuid.UUID) (*core.Subscription, error) {
	return s.act(ctx, id, core.ActionChangePlan, core.EventSubscriptionPlanChanged, "", &planID, func(ctx context.Context, q *dbq.Queries, before, sub *core.Subscription, plan *core.Plan, at time.Time) error {
		old, err := planWithPrices(ctx, q, before.PlanID)
		if err != nil {
			return err
		}
		invoiced, usage, err := closingUsage(ctx, q, before, old, at)
		if err != nil {
			return err
		}
		draft, err := core.ProrationInvoice(before, old, sub, plan, invoiced, usage, at)
		return s.db.issueDrafted(ctx, q, sub, draft, err)
	})
}

// closingUsage is what closing the current period of sub, on plan, at at needs: whether its
// recurring fee was invoiced (what may be credited) and the usage not rated yet
// (core.Subscription.UsageSoFar).
func closingUsage(ctx context.Context, q *dbq.Queries, sub *core.Subscription, plan *core.Plan, at time.Time) (bool, core.Usage, error) {
	invoiced, err := feeInvoiced(ctx, q, sub, at)
	if err != nil {
		return false, nil, err
	}
	from, to, ok := sub.UsageSoFar(plan, at)
	if !ok {
		return invoiced, nil, nil
	}
	usage, err := usageBetween(ctx, q, sub, from, to)
	return invoiced, usage, err
}

// issueFinalInvoice issues the last invoice of before, on its plan, whose service ends at at
// (core.Subscription.FinalInvoice), when it has one.
func (d *DB) issueFinalInvoice(ctx context.Context, q *dbq.Queries, before *core.Subscription, at time.Time) error {
	plan, err := planWithPrices(ctx, q, before.PlanID)
	if err != nil {
		return err
	}
	invoiced, usage, err := closingUsage(ctx, q, before, plan, at)
	if err != nil {
		return err
	}
	draft, err := before.FinalInvoice(plan, usage, invoiced, at)
	return d.issueDrafted(ctx, q, before, draft, err)
}

// issueDrafted issues draft, an invoice of sub, when drafting it did not fail (err) and
// found something to invoice (draft not nil).
func (d *DB) issueDrafted(ctx context.Context, q *dbq.Queries, sub *core.Subscription, draft *core.BillingInvoice, err error) error {
	if err != nil || draft == nil {
		return err
	}
	_, err = d.issueInvoice(ctx, q, sub, draft)
	return err
}

// Cancel implements core.SubscriptionService.
func (s *SubscriptionService) Cancel(ctx context.Context, id uuid.UUID) (*core.Subscription, error) {
	return s.act(ctx, id, core.ActionCancel, core.EventSubscriptionCancelled, "", nil, nil)
}

// Reactivate implements core.SubscriptionService.
func (s *SubscriptionService) Reactivate(ctx context.Context, id uuid.UUID) (*core.Subscription, error) {
	return s.act(ctx, id, core.ActionReactivate, core.EventSubscriptionReactivated, "", nil, nil)
}

// Suspend implements core.SubscriptionService.
func (s *SubscriptionService) Suspend(ctx context.Context, id uuid.UUID, reason string) (*core.Subscription, error) {
	return s.act(ctx, id, core.ActionSuspend, core.EventSubscriptionSuspended, reason, nil, nil)
}

// Resume implements core.SubscriptionService. A subscription suspended before it was ever
// provisioned resumes to provisioning, and its provisioning job is queued again.
func (s *SubscriptionService) Resume(ctx context.Context, id uuid.UUID, reason string) (*core.Subscription, error) {
	return s.act(ctx, id, core.ActionResume, core.EventSubscriptionResumed, reason, nil, func(ctx context.Context, _ *dbq.Queries, _, sub *core.Subscription, _ *core.Plan, _ time.Time) error {
		return s.db.provisionResumed(ctx, sub)
	})
}

// provisionResumed queues, in the transaction of ctx, the provisioning job of sub when its
// service has just resumed to provisioning (it was suspended before it was ever provisioned).
func (d *DB) provisionResumed(ctx context.Context, sub *core.Subscription) error {
	if sub.ServiceStatus != core.ServiceProvisioning {
		return nil
	}
	return d.enqueue(ctx, func(jobs Jobs, tx pgx.Tx) error { return jobs.InsertProvisioning(ctx, tx, sub.OrganizationID, sub.ID) })
}

// Terminate implements core.SubscriptionService.
// The last invoice bills the usage not billed yet and credits the recurring fee's unused
// part (core.Subscription.FinalInvoice).
func (s *SubscriptionService) Terminate(ctx context.Context, id uuid.UUID, reason string) (*core.Subscription, error) {
	return s.act(ctx, id, core.ActionTerminate, core.EventSubscriptionTerminated, reason, nil, s.db.settleTermination)
}

// settleTermination is what terminating a subscription does beyond its state: the last
// invoice of before, whose service ends at at.
func (d *DB) settleTermination(ctx context.Context, q *dbq.Queries, before, _ *core.Subscription, _ *core.Plan, at time.Time) error {
	return d.issueFinalInvoice(ctx, q, before, at)
}

// actionEffects are an action's further effects (e.g. the invoice), run in its transaction
// once the subscription is stored.
type actionEffects func(ctx context.Context, q *dbq.Queries, before, sub *core.Subscription, plan *core.Plan, at time.Time) error

// act runs one lifecycle action in one transaction (DB.applyAction) and, when the service
// status moved, has the next request obey it.
func (s *SubscriptionService) act(ctx context.Context, id uuid.UUID, action core.SubscriptionAction, event core.EventType, reason string, planID *uuid.UUID,
	then actionEffects) (*core.Subscription, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	var sub *core.Subscription
	serviceChanged := false
	err = s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		var err error
		sub, serviceChanged, err = s.db.applyAction(ctx, q, id, p.ActorType(), action, event, reason, planID, then)
		return err
	})
	if err != nil {
		return nil, err
	}
	if serviceChanged {
		s.db.credentialsChanged(ctx) // the product's next operation obeys the new service status
	}
	return sub, nil
}

// applyAction takes one lifecycle action by actor in the transaction of q: lock the row (one
// the principal of ctx may see), check and apply the transition, store it, run then, append
// the audit event and publish event. planID is the requested plan of select-plan and
// change-plan. It reports whether the service status changed: the caller then calls
// DB.credentialsChanged once the transaction has committed.
func (d *DB) applyAction(ctx context.Context, q *dbq.Queries, id uuid.UUID, actor string, action core.SubscriptionAction, event core.EventType,
	reason string, planID *uuid.UUID, then actionEffects) (sub *core.Subscription, serviceChanged bool, err error) {
	// Resuming starts the service, degraded while the product has an open incident: the
	// product's incidents are held still, before the row is locked, until the change commits.
	var incidentOpen bool
	if action == core.ActionResume {
		if incidentOpen, err = holdIncidentsOfSubscription(ctx, q, id); err != nil {
			return nil, false, err
		}
	}
	row, err := owned(ctx,
		func(org uuid.UUID) (dbq.Subscription, error) {
			return q.SubscriptionGetByIDForUpdate(ctx, dbq.SubscriptionGetByIDForUpdateParams{OrganizationID: org, ID: id})
		},
		func() (dbq.Subscription, error) { return q.SubscriptionGetByIDForUpdateAnyOrganization(ctx, id) },
		"Subscription", id)
	if err != nil {
		return nil, false, err
	}
	before, err := subscriptionFromRow(row)
	if err != nil {
		return nil, false, err
	}
	before.ProductIncidentOpen = incidentOpen
	if err := before.CheckTransition(action, actor); err != nil {
		return nil, false, err
	}
	var plan *core.Plan
	switch {
	case planID != nil:
		if plan, err = d.requestedPlan(ctx, q, before, *planID); err != nil {
			return nil, false, err
		}
		if action == core.ActionChangePlan && plan.ID == before.PlanID {
			return before, false, nil
		}
	case action == core.ActionReactivate:
		if plan, err = planWithPrices(ctx, q, before.PlanID); err != nil {
			return nil, false, err
		}
	}
	after := *before
	at := d.billingNow(ctx, before.OrganizationID)
	if err := after.Apply(action, actor, plan, at); err != nil {
		return nil, false, err
	}
	after.UpdatedAt = at
	if sub, err = updateSubscription(ctx, q, &after); err != nil {
		return nil, false, err
	}
	if then != nil {
		if err := then(ctx, q, before, sub, plan, at); err != nil {
			return nil, false, err
		}
	}
	return sub, sub.ServiceStatus != before.ServiceStatus, d.recordSubscriptionChange(ctx, q, before, sub, auditActions[action], event, reason)
}

// terminateSubscriptionsOf terminates, by actor and in the transaction of q, every live
// subscription of organization org, as their own terminate does (the last invoice, the audit
// record, subscription.terminated): the organization is terminated (core.Organization.
// EndsSubscriptions). The caller holds the organization's row, and calls
// DB.credentialsChanged after the commit.
func (d *DB) terminateSubscriptionsOf(ctx context.Context, q *dbq.Queries, org uuid.UUID, actor, reason string) error {
	rows, err := q.SubscriptionListByOrganization(ctx, org)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if r.ServiceStatus == core.ServiceTerminated {
			continue
		}
		if _, _, err := d.applyAction(ctx, q, r.ID, actor, core.ActionTerminate, core.EventSubscriptionTerminated, reason, nil, d.settleTermination); err != nil {
			return err
		}
	}
	return nil
}

// updateSubscription stores the state of s computed by a transition, as of s.UpdatedAt.
func updateSubscription(ctx context.Context, q *dbq.Queries, s *core.Subscription) (*core.Subscription, error) {
	row, err := q.SubscriptionUpdateState(ctx, dbq.SubscriptionUpdateStateParams{
		OrganizationID:   s.OrganizationID,
		ID:               s.ID,
		PlanID:           s.PlanID,
		CommercialStatus: s.CommercialStatus,
		ServiceStatus:    s.ServiceStatus,
		BillingStatus:    s.BillingStatus,
		BillingAnchorAt:  s.BillingAnchorAt,
		RenewsAt:         s.RenewsAt,
		ServiceEndsAt:    s.ServiceEndsAt,
		SuspendedAt:      s.SuspendedAt,
		SuspendedBy:      nonEmpty(s.SuspendedBy),
		TerminatedAt:     s.TerminatedAt,
		CancelledBy:      nonEmpty(s.CancelledBy),
		ProvisionedAt:    s.ProvisionedAt,
		UsageSince:       s.UsageSince,
		UpdatedAt:        s.UpdatedAt,
	})
	if err != nil {
		return nil, err
	}
	return subscriptionFromRow(row)
}

// insertInvoice stores the invoice draft of sub, its lines with it.
func insertInvoice(ctx context.Context, q *dbq.Queries, sub *core.Subscription, draft *core.BillingInvoice) (*core.BillingInvoice, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	lines, err := json.Marshal(draft.Lines)
	if err != nil {
		return nil, err
	}
	row, err := q.BillingInvoiceInsert(ctx, dbq.BillingInvoiceInsertParams{
		ID:                id,
		OrganizationID:    sub.OrganizationID,
		SubscriptionID:    sub.ID,
		PlanID:            draft.PlanID,
		PeriodStart:       pgtype.Date{Time: draft.PeriodStart, Valid: true},
		PeriodEnd:         pgtype.Date{Time: draft.PeriodEnd, Valid: true},
		Lines:             lines,
		Subtotal:          draft.Subtotal,
		Discount:          draft.Discount,
		Tax:               draft.Tax,
		Total:             draft.Total,
		Currency:          draft.Currency,
		Status:            draft.Status,
		TaxDocumentStatus: draft.TaxDocumentStatus,
		IssuedAt:          *draft.IssuedAt,
		DueAt:             draft.DueAt,
		OpensSelection:    draft.OpensSelection,
	})
	if err != nil {
		return nil, err
	}
	return invoiceFromRow(row)
}

// requestedPlan is the plan planID that a select-plan or change-plan of sub names, checked
// to be an active plan of its product that sub's organization may be offered (EUnprocessable
// at /plan_id otherwise).
func (d *DB) requestedPlan(ctx context.Context, q *dbq.Queries, sub *core.Subscription, planID uuid.UUID) (*core.Plan, error) {
	row, err := q.ProductGetByID(ctx, sub.ProductID)
	if err != nil {
		return nil, err
	}
	product := productFromRow(row)
	if err := d.checkOfferedTo(ctx, q, sub.OrganizationID, product, "/plan_id", "unknown_plan", fmt.Sprintf("Plan %s does not exist.", planID)); err != nil {
		return nil, err
	}
	return selectablePlan(ctx, q, product, planID)
}

// productNamed finds the product a request body names; a product that does not exist makes
// the request unprocessable rather than the URL unknown.
func productNamed(ctx context.Context, q *dbq.Queries, id uuid.UUID) (*core.Product, error) {
	row, err := q.ProductGetByID(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, core.UnknownProduct(id.String())
	}
	if err != nil {
		return nil, err
	}
	return productFromRow(row), nil
}

// selectablePlan finds the plan a request body names and checks it is an active plan of
// product: anything else makes the request unprocessable.
func selectablePlan(ctx context.Context, q *dbq.Queries, product *core.Product, id uuid.UUID) (*core.Plan, error) {
	plan, err := planWithPrices(ctx, q, id)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, core.UnknownPlan(id.String())
	case err != nil:
		return nil, err
	case plan.ProductID != product.ID:
		return nil, core.Unprocessable("/plan_id", "plan_of_another_product",
			fmt.Sprintf("Plan %s (%s) belongs to another product, not to product %s (%s).", plan.ID, plan.Code, product.ID, product.Code))
	case plan.Status != core.PlanStatusActive:
		return nil, core.Unprocessable("/plan_id", "plan_not_active",
			fmt.Sprintf("Plan %s (%s) is %s; only active plans can be selected.", plan.ID, plan.Code, plan.Status))
	}
	return plan, nil
}

// unprocessablef is core.Unprocessable with the generic rule code and a formatted message.
func unprocessablef(pointer, format string, args ...any) error {
	return core.Unprocessable(pointer, "unprocessable", fmt.Sprintf(format, args...))
}

func subscriptionFromRow(r dbq.Subscription) (*core.Subscription, error) {
	s := &core.Subscription{
		ID:                    r.ID,
		CreatedAt:             r.CreatedAt,
		UpdatedAt:             r.UpdatedAt,
		OrganizationID:        r.OrganizationID,
		ProductID:             r.ProductID,
		PlanID:                r.PlanID,
		CommercialStatus:      r.CommercialStatus,
		ServiceStatus:         r.ServiceStatus,
		BillingStatus:         r.BillingStatus,
		ProvisioningRequestID: r.ProvisioningRequestID,
		StartedAt:             r.StartedAt,
		BillingAnchorAt:       r.BillingAnchorAt,
		RenewsAt:              r.RenewsAt,
		ServiceEndsAt:         r.ServiceEndsAt,
		SuspendedAt:           r.SuspendedAt,
		TerminatedAt:          r.TerminatedAt,
		ProvisionedAt:         r.ProvisionedAt,
		UsageSince:            r.UsageSince,
		Dunning:               core.Dunning{InvoiceID: r.DunningInvoiceID, Retries: int(r.DunningRetries), NextAt: r.DunningNextAt},
	}
	if r.SuspendedBy != nil {
		s.SuspendedBy = *r.SuspendedBy
	}
	if r.CancelledBy != nil {
		s.CancelledBy = *r.CancelledBy
	}
	if err := json.Unmarshal(r.RequestedConfiguration, &s.RequestedConfiguration); err != nil {
		return nil, fmt.Errorf("subscription %s: requested_configuration: %w", r.ID, err)
	}
	return s, nil
}

func invoiceFromRow(r dbq.BillingInvoice) (*core.BillingInvoice, error) {
	inv := &core.BillingInvoice{
		ID:                r.ID,
		CreatedAt:         r.CreatedAt,
		UpdatedAt:         r.UpdatedAt,
		OrganizationID:    r.OrganizationID,
		SubscriptionID:    r.SubscriptionID,
		PlanID:            r.PlanID,
		PeriodStart:       r.PeriodStart.Time,
		PeriodEnd:         r.PeriodEnd.Time,
		Subtotal:          r.Subtotal,
		Discount:          r.Discount,
		Tax:               r.Tax,
		Total:             r.Total,
		Currency:          r.Currency,
		Status:            r.Status,
		TaxDocumentStatus: r.TaxDocumentStatus,
		IssuedAt:          r.IssuedAt,
		DueAt:             r.DueAt,
		PaidAt:            r.PaidAt,
		AmountPaid:        r.AmountPaid,
		OpensSelection:    r.OpensSelection,
	}
	if err := json.Unmarshal(r.Lines, &inv.Lines); err != nil {
		return nil, fmt.Errorf("billing invoice %s: lines: %w", r.ID, err)
	}
	return inv, nil
}
