package core

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Onboarding sandbox: what a verified login gets.
var (
	// OnboardingProductID and OnboardingPlanID are the e-invoice product and its free sandbox
	// plan of the seeded catalogue.
	OnboardingProductID = uuid.MustParse("0193a000-0000-7000-8000-000000000001")
	OnboardingPlanID    = uuid.MustParse("0193a000-0000-7000-8000-000000000103")
)

const (
	// OnboardingStatusSandboxReady is the state a completed onboarding starts in;
	// OnboardingStatusActive follows the organization's first successful product operation;
	// OnboardingStatusCompleted means it is live commercially (a charging plan active).
	OnboardingStatusSandboxReady = "sandbox_ready"
	OnboardingStatusActive       = "active"
	OnboardingStatusCompleted    = "completed"
	// DefaultOnboardingTrafficType is the growth traffic type of a login that names none.
	DefaultOnboardingTrafficType = "real_customer"
)

// OnboardingKeyScopes are the scopes of the developer key a verified login gets: the
// sandbox product's operations and a view of its own usage.
var OnboardingKeyScopes = []string{"invoice:generate", "invoice:archive", "usage:read"}

// OnboardingSteps are the growth milestones an onboarding completes, in order; each is also
// emitted as a growth event.
var OnboardingSteps = []string{"organization_created", "sandbox_provisioned", "credential_created"}

// OnboardingStatusOrder lists the onboarding states in the order they are reached; the
// status only moves forward along it.
var OnboardingStatusOrder = []string{OnboardingStatusSandboxReady, OnboardingStatusActive, OnboardingStatusCompleted}

// OnboardingMilestone is a later step of an onboarding: the status it moves to (a status
// already further along stays; OnboardingStatusSandboxReady moves nothing) and the growth
// milestones it appends to the completed steps, in order, each once.
type OnboardingMilestone struct {
	Status string
	Steps  []string
}

// The milestones after the sandbox: the first successful product operation, a charging plan
// selected (awaiting payment), and a charging plan active.
var (
	OnboardingFirstSuccess   = OnboardingMilestone{Status: OnboardingStatusActive, Steps: []string{"first_request", "first_success"}}
	OnboardingPlanSelected   = OnboardingMilestone{Status: OnboardingStatusSandboxReady, Steps: []string{"plan_selected"}}
	OnboardingCommercialLive = OnboardingMilestone{Status: OnboardingStatusCompleted, Steps: []string{"plan_selected", "subscription_active"}}
)

// PlanSelectionMilestone is the onboarding milestone a plan selection reaches, if any:
// selecting a plan that charges nothing is none.
func PlanSelectionMilestone(plan *Plan, activation string) (OnboardingMilestone, bool) {
	switch {
	case plan == nil || !plan.Charges():
		return OnboardingMilestone{}, false
	case activation == ActivationActive:
		return OnboardingCommercialLive, true
	default:
		return OnboardingPlanSelected, true
	}
}

// VerifiedLogin is a login whose identity provider verified the user.
type VerifiedLogin struct {
	Issuer, Subject string
	Email           string
	EmailVerified   bool
	Organization    OrganizationCreate
	TrafficType     string // empty: DefaultOnboardingTrafficType
	Language        *string
}

// OnboardingState is the record of one identity's onboarding.
type OnboardingState struct {
	ID                              uuid.UUID `json:"id"`
	OrganizationID                  uuid.UUID `json:"organization_id"`
	IdentityIssuer, IdentitySubject string
	Email                           string    `json:"email"`
	Status                          string    `json:"status"`
	CompletedSteps                  []string  `json:"completed_steps"`
	CreatedAt, UpdatedAt            time.Time `json:"-"`
}

// Onboarded is everything a verified login provisioned. Key carries the developer key's
// secret only when Created.
type Onboarded struct {
	Created      bool
	Organization *Organization
	Subscription *Subscription
	Resource     ServiceResource
	ResourceOrg  uuid.UUID
	ResourceAt   time.Time
	Key          *NewAPIKey
	State        *OnboardingState
}

// OnboardingService onboards verified logins.
type OnboardingService interface {
	// OnboardVerifiedLogin provisions, in one transaction, the organization, a sandbox
	// subscription, its invoicing resource, a scoped developer key, the onboarding state,
	// audit records and growth events. The same identity always yields the same records
	// (Created false, no secret), however often and from however many processes it is
	// repeated. Operator only (EForbidden); an unverified e-mail is EUnprocessable.
	OnboardVerifiedLogin(ctx context.Context, in VerifiedLogin) (*Onboarded, error)
	// FindOnboarding returns the onboarding of an organization onboarded through a verified
	// login. ENotFound for an organization without one, and for another organization's id
	// when the caller is an organization principal.
	FindOnboarding(ctx context.Context, organizationID uuid.UUID) (*OnboardingState, error)
}
