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

	BillingCurrent = "current"
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
	SuspendedAt     *time.Time `json:"suspended_at"`
	TerminatedAt    *time.Time `json:"terminated_at"`
}

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
// subscription refuses every action.
type transitionRule struct {
	commercial []string
	service    []string
}

// transitions is the table of docs/design.md, "Subscriptions". select-plan follows change-plan: a plan is
// selected on a live subscription whose commercial status is active or past_due.
var transitions = map[SubscriptionAction]transitionRule{
	ActionSelectPlan: {commercial: []string{CommercialActive, CommercialPastDue}},
	ActionChangePlan: {commercial: []string{CommercialActive, CommercialPastDue}},
	ActionCancel:     {commercial: []string{CommercialActive, CommercialPastDue, CommercialPaused}},
	ActionReactivate: {commercial: []string{CommercialCancelled}},
	ActionSuspend:    {service: []string{ServiceProvisioning, ServiceActive, ServiceDegraded}},
	ActionResume:     {service: []string{ServiceSuspended}},
	ActionTerminate:  {},
}

// CheckTransition returns nil when action is allowed from the current state of s, and an
// EInvalidTransition error naming the current state and the action otherwise.
func (s *Subscription) CheckTransition(action SubscriptionAction) error {
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
	}
	return nil
}

// Apply checks action against the current state and, when allowed, changes s as the action
// does at now. plan is the plan the subscription is on after the action: the requested plan
// for select-plan and change-plan (the caller checks it belongs to the product and is
// active), the current plan otherwise.
func (s *Subscription) Apply(action SubscriptionAction, plan *Plan, now time.Time) error {
	if err := s.CheckTransition(action); err != nil {
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
		s.PlanID = plan.ID
		s.RenewsAt = plan.NextRenewal(s.BillingAnchorAt, now)
	case ActionCancel:
		s.CommercialStatus = CommercialCancelled
		s.RenewsAt = nil
	case ActionReactivate:
		s.CommercialStatus = CommercialActive
		s.RenewsAt = plan.NextRenewal(s.BillingAnchorAt, now)
	case ActionSuspend:
		s.ServiceStatus = ServiceSuspended
		s.SuspendedAt = &now
	case ActionResume:
		s.ServiceStatus = ServiceActive
		s.SuspendedAt = nil
	case ActionTerminate:
		s.ServiceStatus = ServiceTerminated
		s.CommercialStatus = CommercialCancelled
		s.TerminatedAt = &now
		s.SuspendedAt = nil
		s.RenewsAt = nil
	}
	return nil
}

// orList renders values as "a, b or c".
func orList(values []string) string {
	if len(values) == 1 {
		return values[0]
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}

// SubscriptionCreate is the input of SubscriptionService.CreateSubscription. The ids are the
// client's strings: ones that name nothing are reported as such, not as malformed input.
type SubscriptionCreate struct {
	OrganizationID         string
	ProductID              string
	PlanID                 string
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
	// job provisions it. Returns ENotFound for an unknown (or another tenant's) organization,
	// EUnprocessable for an unknown or deprecated product or a plan that is not an active plan of it, and
	// EConflict when the organization already has a live subscription to the product.
	CreateSubscription(ctx context.Context, in SubscriptionCreate) (*Subscription, error)
	// FindSubscriptionByID returns the subscription or ENotFound.
	FindSubscriptionByID(ctx context.Context, id uuid.UUID) (*Subscription, error)
	// ListSubscriptions returns every subscription of the organization in id order, or
	// ENotFound for an unknown (or another tenant's) organization.
	ListSubscriptions(ctx context.Context, organizationID string) ([]*Subscription, error)
	// SelectPlan puts the subscription on an active plan of its product and issues the
	// invoice of the first period when something is due now (see FirstInvoice). Returns
	// ENotFound, EUnprocessable for a plan that is not an active plan of the product, or
	// EInvalidTransition.
	SelectPlan(ctx context.Context, id uuid.UUID, planID string) (*PlanSelection, error)
	// ChangePlan moves the subscription to another active plan of its product without
	// invoicing. Errors as SelectPlan.
	ChangePlan(ctx context.Context, id uuid.UUID, planID string) (*Subscription, error)
	// Cancel, Reactivate, Suspend, Resume and Terminate perform the action of their name:
	// ENotFound or EInvalidTransition. reason, when not empty, is kept in the audit trail.
	Cancel(ctx context.Context, id uuid.UUID) (*Subscription, error)
	Reactivate(ctx context.Context, id uuid.UUID) (*Subscription, error)
	Suspend(ctx context.Context, id uuid.UUID, reason string) (*Subscription, error)
	Resume(ctx context.Context, id uuid.UUID, reason string) (*Subscription, error)
	Terminate(ctx context.Context, id uuid.UUID, reason string) (*Subscription, error)
}
