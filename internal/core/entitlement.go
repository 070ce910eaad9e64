package core

// Entitlement refusals (docs/design.md, "Entitlements"). Each names what stands in the way,
// so a client knows whom to ask: the provider (an organization status), or itself (a
// subscription, a verification).
const (
	// EOrganizationSuspended, EOrganizationTerminated and EOrganizationArchived refuse every
	// product operation, new credential and new subscription of an organization in that
	// lifecycle status; ERiskSuspended those of one whose risk status is suspended_risk.
	EOrganizationSuspended  = "organization_suspended"
	EOrganizationTerminated = "organization_terminated"
	EOrganizationArchived   = "organization_archived"
	ERiskSuspended          = "organization_risk_suspended"
	// ERiskRestricted refuses the production traffic of an organization whose risk status
	// is restricted; its sandbox stays open.
	ERiskRestricted = "organization_risk_restricted"
	// EOrganizationNotVerified refuses production keys (creating and using them) of an
	// organization whose verification_status is not verified.
	EOrganizationNotVerified = "organization_not_verified"
	// EOrganizationNotActive refuses production keys (creating and using them) of an
	// organization still pending activation; its sandbox stays open.
	EOrganizationNotActive = "organization_not_active"
	// ESubscriptionInactive refuses the operations of a product whose subscription is
	// provisioning, suspended or terminated.
	ESubscriptionInactive = "subscription_inactive"
	// ESubscriptionRequired refuses production traffic to a product the organization has no
	// subscription to.
	ESubscriptionRequired = "subscription_required"
)

// Environments of credentials and of the traffic they carry.
const (
	SandboxEnvironment    = "sandbox"
	ProductionEnvironment = "production"
)

// Organization statuses the entitlement rules read.
const (
	LifecyclePending    = "pending"
	LifecycleActive     = "active"
	LifecycleSuspended  = "suspended"
	LifecycleTerminated = "terminated"
	LifecycleArchived   = "archived"

	VerificationVerified = "verified"

	RiskRestricted = "restricted"
	RiskSuspended  = "suspended_risk"
)

// Standing is what the entitlement rules read about one organization and one product, as
// stored now.
type Standing struct {
	Lifecycle    string // the organization's lifecycle_status
	Verification string // verification_status
	Risk         string // risk_status
	// SubscriptionService is the service_status of the organization's latest subscription
	// to the product ("" when it has none, or when no product is asked about).
	SubscriptionService string
}

// Act is what a principal asks to do.
type Act int

const (
	// ActUseProduct is a product operation: generating a tax invoice, resolving an address.
	ActUseProduct Act = iota + 1
	// ActIssueCredential creates a credential: an API key (also by rotation) or a
	// connected-business credential.
	ActIssueCredential
	// ActSubscribe creates a subscription.
	ActSubscribe
)

// Access is one request to act, as the rules see it.
type Access struct {
	Act Act
	// Environment is that of the traffic (ActUseProduct: Principal.TrafficEnvironment) or of
	// the credential to be issued (ActIssueCredential); empty for ActSubscribe.
	Environment string
	// Product is the product's code, for ActUseProduct.
	Product string
	// Business is the lifecycle status of the connected business a credential is issued
	// for, nil when none is.
	Business *string
}

// Entitle decides whether an organization in standing s may do a now. It returns nil, or
// the refusal: a 403 code above naming what stands in the way, or, for a credential of a
// connected business that is not active, EInvalidTransition. The rules, in the order they
// are applied (the first that refuses answers):
//
//  1. An organization suspended, terminated or archived (lifecycle), or suspended_risk
//     (risk), may do nothing of these: no product operation, credential or subscription.
//     Reading its data, paying and support stay open; they never ask.
//  2. Production (traffic or a production key to be issued) needs an organization that is
//     active and verified; production traffic also needs a risk status other than
//     restricted.
//  3. A product operation of a product the organization is subscribed to needs the
//     subscription's service active or degraded (provisioning, suspended and terminated
//     refuse). With no subscription the sandbox is open; production needs one.
//  4. Only an active connected business gets credentials (BusinessAllowsCredentials).
func Entitle(s Standing, a Access) error {
	if err := s.organizationAllows(); err != nil {
		return err
	}
	if a.Environment == ProductionEnvironment {
		if err := s.productionAllows(a.Act); err != nil {
			return err
		}
	}
	switch a.Act {
	case ActUseProduct:
		return s.subscriptionAllows(a.Product, a.Environment)
	case ActIssueCredential:
		if a.Business != nil && !BusinessAllowsCredentials(*a.Business) {
			return Errorf(EInvalidTransition, "The connected business is %s; only an active business gets credentials.", *a.Business)
		}
	}
	return nil
}

// organizationRefusals are the lifecycle and risk statuses that stop an organization's
// every product operation, credential and subscription.
var organizationRefusals = map[string]string{
	LifecycleSuspended:  EOrganizationSuspended,
	LifecycleTerminated: EOrganizationTerminated,
	LifecycleArchived:   EOrganizationArchived,
}

func (s Standing) organizationAllows() error {
	if code, ok := organizationRefusals[s.Lifecycle]; ok {
		return Errorf(code, "The organization is %s: product operations, new credentials and new subscriptions are refused until the provider reinstates it.", s.Lifecycle)
	}
	if s.Risk == RiskSuspended {
		return Errorf(ERiskSuspended, "The organization's risk status is suspended_risk: product operations, new credentials and new subscriptions are refused until the provider lifts it.")
	}
	return nil
}

func (s Standing) productionAllows(act Act) error {
	what := "Production traffic"
	if act == ActIssueCredential {
		what = "A production key"
	}
	switch {
	case s.Lifecycle != LifecycleActive:
		return Errorf(EOrganizationNotActive, "%s needs an active organization; this one is %s. The sandbox stays open.", what, s.Lifecycle)
	case s.Verification != VerificationVerified:
		return Errorf(EOrganizationNotVerified, "%s needs a verified organization; its verification_status is %s. The sandbox stays open.", what, s.Verification)
	case act == ActUseProduct && s.Risk == RiskRestricted:
		return Errorf(ERiskRestricted, "The organization's risk status is restricted: production traffic is refused. The sandbox stays open.")
	}
	return nil
}

func (s Standing) subscriptionAllows(product, environment string) error {
	switch s.SubscriptionService {
	case ServiceActive, ServiceDegraded:
		return nil
	case "":
		if environment == ProductionEnvironment {
			return Errorf(ESubscriptionRequired, "Production traffic to %s needs an active subscription to it; the organization has none.", product)
		}
		return nil
	}
	return Errorf(ESubscriptionInactive, "The organization's subscription to %s is %s; its operations are refused until the service is active.",
		product, s.SubscriptionService)
}

// BusinessAllowsCredentials is the one rule of a connected business's credentials: only an
// active business gets new ones (Entitle), and only an active business's existing ones
// authenticate (APIKey.CheckUsable). Suspending the business stops them; reactivating it
// restores them.
func BusinessAllowsCredentials(status string) bool { return status == BusinessActive }

// TrafficEnvironment is the environment of the traffic p carries: its key's, or sandbox
// for a credential without one (development and operator tokens).
func (p *Principal) TrafficEnvironment() string {
	if p.Restrictions != nil && p.Restrictions.Environment != "" {
		return p.Restrictions.Environment
	}
	return SandboxEnvironment
}
