package core

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Subscription statuses (docs/design.md, "Subscriptions").
const (
	CommercialActive    = "active"
	CommercialPastDue   = "past_due"
	CommercialCancelled = "cancelled"
	CommercialPaused    = "paused"

	ServiceProvisioning = "provisioning"
	ServiceActive       = "active"
	ServiceDegraded     = "degraded"
	ServiceSuspended    = "suspended"
	ServiceTerminated   = "terminated"

	BillingCurrent    = "current"
	BillingOverdue    = "overdue"
	BillingInDunning  = "in_dunning"
	BillingWrittenOff = "written_off"
)

// Plan-selection activation results.
const (
	ActivationActive          = "active"
	ActivationAwaitingPayment = "awaiting_payment"
)

// Subscription is an organization's subscription to a product and plan. The JSON form is its
// audit summary.
type Subscription struct {
	ID                    uuid.UUID `json:"id"`
	CreatedAt             time.Time `json:"created_at"`
	UpdatedAt             time.Time `json:"updated_at"`
	OrganizationID        uuid.UUID `json:"organization_id"`
	ProductID             uuid.UUID `json:"product_id"`
	PlanID                uuid.UUID `json:"plan_id"`
	CommercialStatus      string    `json:"commercial_status"`
	ServiceStatus         string    `json:"service_status"`
	BillingStatus         string    `json:"billing_status"`
	ProvisioningRequestID *string   `json:"provisioning_request_id"`
	// RequestedConfiguration is the caller's free-form provisioning configuration, as given.
	RequestedConfiguration map[string]any `json:"requested_configuration"`
	StartedAt              time.Time      `json:"started_at"`
	// BillingAnchorAt is when the recurring cycle of the current plan began (after any trial);
	// renewals fall on whole periods from it.
	BillingAnchorAt time.Time  `json:"billing_anchor_at"`
	RenewsAt        *time.Time `json:"renews_at"`
	// ServiceEndsAt is when the service of a cancelled subscription ends: the end of the period
	// already invoiced (the renewal the cancellation withdrew). The subscription is terminated
	// then, unless it is reactivated before. Nil when not cancelled, or when nothing renewed (a
	// one-time plan). Internal: the API's subscription does not show it.
	ServiceEndsAt *time.Time `json:"service_ends_at"`
	SuspendedAt   *time.Time `json:"suspended_at"`
	TerminatedAt  *time.Time `json:"terminated_at"`
	// SuspendedBy and CancelledBy say who suspended the service and who cancelled the
	// subscription (an actor type: ActorOperator, "organization", "connected_business"); ""
	// when it is not suspended or not cancelled. Internal: the audit trail records them, the
	// API's subscription does not show them.
	SuspendedBy string `json:"suspended_by,omitempty"`
	CancelledBy string `json:"cancelled_by,omitempty"`
	// ProvisionedAt is when provisioning completed; nil while it never has. Internal, as
	// SuspendedBy: a subscription suspended before it was provisioned resumes to provisioning.
	ProvisionedAt *time.Time `json:"provisioned_at"`
	// UsageSince is when the current plan began to rate usage within the period: the last
	// change of plan (the usage before it was rated at the plan it left, on the change's
	// invoice). Nil, or before the period, when the period's usage is all on the current plan.
	// Internal, as ServiceEndsAt.
	UsageSince *time.Time `json:"usage_since"`
	// Dunning is the dunning of an unpaid invoice (docs/design.md, "Dunning"); zero while
	// billing is current. Internal: the API's subscription shows billing_status only.
	Dunning Dunning `json:"dunning"`
	// ProductIncidentOpen is not stored: whether the product has an open incident, which the
	// storage reads (holding the product's incidents still) before a transition that starts
	// the service (resume, CompleteProvisioning), so the service starts degraded during one.
	ProductIncidentOpen bool `json:"-"`
}

// ActorOperator is the actor type of the operator (Principal.ActorType): its decisions on a
// subscription cannot be undone by the organization.
const ActorOperator = "operator"

// SubscriptionAction is a lifecycle action on a subscription, named as in its path.
type SubscriptionAction string

// The lifecycle actions.
const (
	ActionSelectPlan SubscriptionAction = "select-plan"
	ActionChangePlan SubscriptionAction = "change-plan"
	ActionCancel     SubscriptionAction = "cancel"
	ActionReactivate SubscriptionAction = "reactivate"
	ActionSuspend    SubscriptionAction = "suspend"
	ActionResume     SubscriptionAction = "resume"
	ActionTerminate  SubscriptionAction = "terminate"
)

// transitionRule says from which states an action is allowed: the commercial status must be
// one of commercial and the service status one of service (nil allows any), and a terminated
// subscription refuses every action. undoes, when set, names the decision the action undoes
// or escapes and returns who made it: when that is the operator, only the operator may act.
type transitionRule struct {
	commercial []string
	service    []string
	undoes     func(s *Subscription) (decision, by string)
}

func suspension(s *Subscription) (string, string)   { return "suspended", s.SuspendedBy }
func cancellation(s *Subscription) (string, string) { return "cancelled", s.CancelledBy }

// transitions is the table of docs/design.md, "Subscriptions". select-plan follows change-plan: a plan is
// selected on a live subscription whose commercial status is active or past_due.
var transitions = map[SubscriptionAction]transitionRule{
	ActionSelectPlan: {commercial: []string{CommercialActive, CommercialPastDue}},
	ActionChangePlan: {commercial: []string{CommercialActive, CommercialPastDue}},
	ActionCancel:     {commercial: []string{CommercialActive, CommercialPastDue, CommercialPaused}},
	ActionReactivate: {commercial: []string{CommercialCancelled}, undoes: cancellation},
	ActionSuspend:    {service: []string{ServiceProvisioning, ServiceActive, ServiceDegraded}},
	ActionResume:     {service: []string{ServiceSuspended}, undoes: suspension},
	// Terminating ends a suspension too, and frees the product for a new subscription.
	ActionTerminate: {undoes: suspension},
}

// CheckTransition returns nil when actor (an actor type, see Principal.ActorType) may take
// action from the current state of s. Otherwise it returns an EInvalidTransition error naming
// the current state and the action, or, when the state allows it but the action would undo
// the operator's suspension (resume, terminate) or cancellation (reactivate) and actor is not
// the operator, EForbidden.
func (s *Subscription) CheckTransition(action SubscriptionAction, actor string) error {
	rule, ok := transitions[action]
	if !ok {
		return fmt.Errorf("core: unknown subscription action %q", action)
	}
	refuse := func(state, allowed string) error {
		msg := fmt.Sprintf("Cannot %s subscription %s: its %s.", action, s.ID, state)
		if allowed != "" {
			msg = fmt.Sprintf("Cannot %s subscription %s: its %s; %s is allowed only from %s.", action, s.ID, state, action, allowed)
		}
		return Errorf(EInvalidTransition, "%s", msg)
	}
	switch {
	case s.ServiceStatus == ServiceTerminated:
		return refuse("service status is terminated, which is final", "")
	case rule.commercial != nil && !slices.Contains(rule.commercial, s.CommercialStatus):
		return refuse("commercial status is "+s.CommercialStatus, "commercial status "+orList(rule.commercial))
	case rule.service != nil && !slices.Contains(rule.service, s.ServiceStatus):
		return refuse("service status is "+s.ServiceStatus, "service status "+orList(rule.service))
	case action == ActionResume && s.SuspendedBy == SuspendedByBilling:
		return Errorf(EInvalidTransition, "Cannot resume subscription %s: its service is suspended for non-payment (billing status written_off); paying invoice %s in full resumes it.", s.ID, s.Dunning.InvoiceID)
	}
	if rule.undoes != nil && actor != ActorOperator {
		if decision, by := rule.undoes(s); by == ActorOperator {
			return Errorf(EForbidden, "Subscription %s was %s by the operator; only the operator can %s it.", s.ID, decision, action)
		}
	}
	return nil
}

// Apply checks action by actor against the current state (CheckTransition) and, when
// allowed, changes s as the action does at now, recording actor as who suspended or
// cancelled. plan is the plan the subscription is on after the action: the requested plan
// for select-plan and change-plan (the caller checks it belongs to the product and is
// active), the current plan otherwise.
func (s *Subscription) Apply(action SubscriptionAction, actor string, plan *Plan, now time.Time) error {
	if err := s.CheckTransition(action, actor); err != nil {
		return err
	}
	switch action {
	case ActionSelectPlan:
		// A selection starts a new cycle on the plan, after its trial.
		s.PlanID = plan.ID
		s.BillingAnchorAt = plan.CycleAnchor(now)
		s.RenewsAt = plan.NextRenewal(s.BillingAnchorAt, now)
	case ActionChangePlan:
		// A change keeps the cycle: the new plan's fee applies from the next renewal, which
		// falls on the new plan's period counted from the same anchor.
		// The usage so far is rated at the old plan by the change's invoice; the new plan
		// rates what follows.
		s.PlanID = plan.ID
		s.RenewsAt = plan.NextRenewal(s.BillingAnchorAt, now)
		s.UsageSince = &now
	case ActionCancel:
		// The period already invoiced runs to its end: the renewal withdrawn.
		s.CommercialStatus, s.CancelledBy = CommercialCancelled, actor
		s.ServiceEndsAt, s.RenewsAt = s.RenewsAt, nil
	case ActionReactivate:
		// The withdrawn renewal comes back, even when its time has passed and the service has
		// not been ended yet: the period from it is billed, never skipped.
		s.CommercialStatus, s.CancelledBy = CommercialActive, ""
		if s.BillingStatus == BillingWrittenOff { // back to where the write-off left it
			s.CommercialStatus = CommercialPaused
		}
		s.RenewsAt = s.ServiceEndsAt
		if s.RenewsAt == nil {
			s.RenewsAt = plan.NextRenewal(s.BillingAnchorAt, now)
		}
		s.ServiceEndsAt = nil
	case ActionSuspend:
		s.ServiceStatus, s.SuspendedBy = ServiceSuspended, actor
		s.SuspendedAt = &now
	case ActionResume:
		s.resumeService()
	case ActionTerminate:
		s.ServiceStatus = ServiceTerminated
		if s.CommercialStatus != CommercialCancelled {
			s.CommercialStatus, s.CancelledBy = CommercialCancelled, actor
		}
		s.TerminatedAt = &now
		s.SuspendedAt, s.SuspendedBy = nil, ""
		s.RenewsAt = nil
	}
	return nil
}

// RenewalDue reports whether s renews at now: its renewal has arrived, it is commercially
// active or past due, not written off, and its service is not terminated. (Storage adds one
// condition: a plan selection whose first invoice is unpaid does not renew.)
func (s *Subscription) RenewalDue(now time.Time) bool {
	return s.RenewsAt != nil && !s.RenewsAt.After(now) && s.ServiceStatus != ServiceTerminated && s.BillingStatus != BillingWrittenOff &&
		(s.CommercialStatus == CommercialActive || s.CommercialStatus == CommercialPastDue)
}

// Renewal is what one renewal of a subscription did: the period it opened and its invoice,
// nil when nothing was due.
type Renewal struct {
	PeriodStart, PeriodEnd time.Time
	Invoice                *BillingInvoice
}

// UsagePeriod is the period whose usage the renewal of s at its RenewsAt closes, on plan, its
// current plan: from the cycle boundary before the renewal (the billing anchor at the latest)
// up to the renewal, excluded. There is none at the end of a trial (usage during a trial is
// not billed) nor when s does not renew.
func (s *Subscription) UsagePeriod(plan *Plan) (from, to time.Time, ok bool) {
	if s.RenewsAt == nil {
		return time.Time{}, time.Time{}, false
	}
	return s.usageSegment(plan, *s.RenewsAt, *s.RenewsAt)
}

// UsageSoFar is the part of the current period whose usage s, on plan, its current plan, has
// not had rated by now: from the period's start, or the last change of plan in it
// (UsageSince), up to now or the period's end (the renewal, or the end of service of a
// cancelled subscription), whichever comes first. ok is false when there is none: during a
// trial, or when s has no period (a one-time plan, a cancellation before anything renewed).
func (s *Subscription) UsageSoFar(plan *Plan, now time.Time) (from, to time.Time, ok bool) {
	end := s.periodEnd()
	if end == nil {
		return time.Time{}, time.Time{}, false
	}
	return s.usageSegment(plan, *end, now)
}

// usageSegment is the usage period of s on plan within the period ending at end, up to until
// (end at the latest): it starts at the period's start (the cycle boundary before end, the
// billing anchor at the latest), or at UsageSince when that is later.
func (s *Subscription) usageSegment(plan *Plan, end, until time.Time) (from, to time.Time, ok bool) {
	from, ok = plan.PreviousRenewal(s.BillingAnchorAt, end)
	if !ok {
		return time.Time{}, time.Time{}, false
	}
	if s.UsageSince != nil && s.UsageSince.After(from) {
		from = *s.UsageSince
	}
	to = minTime(end, until)
	return from, to, from.Before(to)
}

// periodEnd is when the current period of s ends: its renewal, or, cancelled, the end of its
// service (nil when it has neither).
func (s *Subscription) periodEnd() *time.Time {
	if s.RenewsAt != nil {
		return s.RenewsAt
	}
	return s.ServiceEndsAt
}

// Renew renews s, whose renewal is due (RenewalDue), on plan, its current plan, at now: it
// drafts the invoice of the renewal (RenewalInvoice; the renewal at the billing anchor is the
// end of the trial), with usage, the usage of the period the renewal closes (UsagePeriod),
// rated (RateUsage), and moves RenewsAt to the next renewal. A subscription renews one period
// at a time: renewals overdue by several periods renew one after another, each billed at
// now. A period that opens while the service is suspended bills no fee: the cycle moves on,
// and the first renewal after the service resumes bills again; the usage of the period it
// closes is billed all the same.
//
// The error is RateUsage's (usage too large to rate); s is unchanged then.
func (s *Subscription) Renew(plan *Plan, usage Usage, now time.Time) (Renewal, error) {
	next := *s
	renewal, inv, err := next.renewal(plan, usage, now)
	if err != nil {
		return Renewal{}, err
	}
	*s = next
	if len(inv.Lines) > 0 {
		renewal.Invoice = inv
	}
	return renewal, nil
}

// renewal is Renew, with the invoice drafted also when it has no line (nil when nothing
// opens).
func (s *Subscription) renewal(plan *Plan, usage Usage, now time.Time) (Renewal, *BillingInvoice, error) {
	from, to, rated := s.UsagePeriod(plan)
	at := *s.RenewsAt
	s.RenewsAt = plan.NextRenewal(s.BillingAnchorAt, at)
	if s.RenewsAt == nil { // a plan that never renews: nothing opens
		return Renewal{PeriodStart: dateOf(at), PeriodEnd: dateOf(at)}, &BillingInvoice{}, nil
	}
	start, end := RenewalPeriod(at, *s.RenewsAt)
	var lines []InvoiceLine
	if rated {
		var err error
		if lines, err = RateUsage(plan, usage, dateOf(from), dateOf(to).AddDate(0, 0, -1)); err != nil {
			return Renewal{}, nil, err
		}
	}
	fees := s.ServiceStatus != ServiceSuspended
	return Renewal{PeriodStart: start, PeriodEnd: end},
		renewalDraft(plan, at, *s.RenewsAt, at.Equal(s.BillingAnchorAt), fees, lines, now), nil
}

// UpcomingInvoice is the invoice the next renewal of s on plan, its current plan, would issue
// if usage, the usage of the period it closes so far, were all: a draft, never issued (no
// issue or due time), which may have no line. ok is false when s does not renew; the error
// is RateUsage's.
func (s *Subscription) UpcomingInvoice(plan *Plan, usage Usage) (inv *BillingInvoice, ok bool, err error) {
	if s.RenewsAt == nil {
		return nil, false, nil
	}
	next := *s
	if _, inv, err = next.renewal(plan, usage, *s.RenewsAt); err != nil {
		return nil, true, err
	}
	return asDraft(inv), true, nil
}

// ServiceEndDue reports whether the service of cancelled s has reached, at now, the end of
// the period already invoiced.
func (s *Subscription) ServiceEndDue(now time.Time) bool {
	return s.CommercialStatus == CommercialCancelled && s.ServiceStatus != ServiceTerminated &&
		s.ServiceEndsAt != nil && !s.ServiceEndsAt.After(now)
}

// EndService terminates the service of s at now, at the end of its last period
// (ServiceEndDue). Terminated is final, as after ActionTerminate.
func (s *Subscription) EndService(now time.Time) {
	s.ServiceStatus = ServiceTerminated
	s.TerminatedAt = &now
	s.SuspendedAt, s.SuspendedBy = nil, ""
}

// resumeService ends the suspension of the service. A subscription suspended before it was
// ever provisioned is provisioned now rather than running unprovisioned: the caller queues
// its provisioning job.
func (s *Subscription) resumeService() {
	s.ServiceStatus, s.SuspendedBy = ServiceProvisioning, ""
	if s.ProvisionedAt != nil {
		s.ServiceStatus = s.runningService()
	}
	s.SuspendedAt = nil
}

// runningService is the service status of a provisioned subscription that is neither
// suspended nor terminated: degraded while its product has an open incident, else active.
func (s *Subscription) runningService() string {
	if s.ProductIncidentOpen {
		return ServiceDegraded
	}
	return ServiceActive
}

// CompleteProvisioning starts the service of a subscription whose provisioning has just
// completed at now (degraded while its product has an open incident) and reports true; a
// subscription that is not provisioning (already provisioned, or suspended or terminated
// while it waited) is left alone and false is returned, so completing twice is harmless.
func (s *Subscription) CompleteProvisioning(now time.Time) bool {
	if s.ServiceStatus != ServiceProvisioning {
		return false
	}
	s.ServiceStatus = s.runningService()
	s.ProvisionedAt = &now
	return true
}

// IncidentMove is what a product incident does to the product's subscriptions: every one
// whose service status is From moves to To, and nothing else changes. Opening an incident
// degrades running services; resolving the product's last open incident restores them. A
// service that is provisioning, suspended or terminated is left alone: it starts (resume, the
// end of provisioning) degraded or active according to the incidents open at that moment.
type IncidentMove struct{ From, To string }

// IncidentMoves returns the move of opening an incident (opened) or of resolving the last
// open one of a product.
func IncidentMoves(opened bool) IncidentMove {
	if opened {
		return IncidentMove{From: ServiceActive, To: ServiceDegraded}
	}
	return IncidentMove{From: ServiceDegraded, To: ServiceActive}
}

// orList renders values as "a, b or c".
func orList(values []string) string {
	if len(values) == 1 {
		return values[0]
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}

// SubscriptionCreate is the input of SubscriptionService.CreateSubscription.
type SubscriptionCreate struct {
	OrganizationID         uuid.UUID
	ProductID              uuid.UUID
	PlanID                 uuid.UUID
	RequestedConfiguration map[string]any
}

// PlanSelection is the outcome of selecting a plan: the subscription, the invoice for the
// first period (nil when nothing is due now) and whether the plan is active at once.
type PlanSelection struct {
	Subscription *Subscription
	Invoice      *BillingInvoice
	Activation   string
}

// SubscriptionService manages subscriptions. An organization principal sees only its own
// organization's subscriptions: another organization's subscription or organization id is
// ENotFound, exactly like an unknown one. Every change is one transaction with its audit
// event, serialised per subscription by a row lock.
type SubscriptionService interface {
	// CreateSubscription subscribes an organization to an active plan of a product. The
	// subscription starts commercial active, service provisioning, billing current; a durable
	// job provisions it. Returns ENotFound for an unknown organization, EForbidden for another
	// tenant's, EUnprocessable for an unknown or deprecated product or a plan that is not an active plan of it, and
	// EConflict when the organization already has a live subscription to the product.
	CreateSubscription(ctx context.Context, in SubscriptionCreate) (*Subscription, error)
	// FindSubscriptionByID returns the subscription or ENotFound.
	FindSubscriptionByID(ctx context.Context, id uuid.UUID) (*Subscription, error)
	// ListSubscriptions returns every subscription of the organization in id order, or
	// ENotFound for an unknown organization, EForbidden for another tenant's.
	ListSubscriptions(ctx context.Context, organizationID uuid.UUID) ([]*Subscription, error)
	// SelectPlan puts the subscription on an active plan of its product and issues the
	// invoice of the first period when something is due now (see FirstInvoice). Returns
	// ENotFound, EUnprocessable for a plan that is not an active plan of the product, or
	// EInvalidTransition.
	SelectPlan(ctx context.Context, id, planID uuid.UUID) (*PlanSelection, error)
	// ChangePlan moves the subscription to another active plan of its product and issues the
	// invoice of the change's proration lines when something is charged (ProrationInvoice).
	// Errors as SelectPlan.
	ChangePlan(ctx context.Context, id, planID uuid.UUID) (*Subscription, error)
	// UpcomingInvoice is the draft of the subscription's next invoice, never stored: that of
	// its next renewal from the usage so far (Subscription.UpcomingInvoice), or, with planID,
	// that of a change to planID now (UpcomingChangeInvoice), refused as ChangePlan would
	// refuse the change. ENotFound for a subscription that does not renew (or another
	// tenant's).
	UpcomingInvoice(ctx context.Context, id uuid.UUID, planID *uuid.UUID) (*BillingInvoice, error)
	// Cancel, Reactivate, Suspend, Resume and Terminate perform the action of their name:
	// ENotFound, EInvalidTransition, or EForbidden when an organization would undo the
	// operator's suspension (Resume, Terminate) or cancellation (Reactivate). Who suspended
	// or cancelled is recorded and kept in the audit trail; reason, when not empty, too.
	Cancel(ctx context.Context, id uuid.UUID) (*Subscription, error)
	Reactivate(ctx context.Context, id uuid.UUID) (*Subscription, error)
	Suspend(ctx context.Context, id uuid.UUID, reason string) (*Subscription, error)
	Resume(ctx context.Context, id uuid.UUID, reason string) (*Subscription, error)
	Terminate(ctx context.Context, id uuid.UUID, reason string) (*Subscription, error)
}
