package postgres

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// OnboardingService implements core.OnboardingService by composing the other services in
// one transaction: each joins the transaction of the context (DB.WithTx makes their work a
// savepoint of it), so everything commits together or not at all.
type OnboardingService struct {
	db            *DB
	organizations core.OrganizationService
	subscriptions core.SubscriptionService
	keys          core.APIKeyService
	growth        core.GrowthService
}

var _ core.OnboardingService = (*OnboardingService)(nil)

// NewOnboardingService returns the onboarding service over d and the services it composes.
func NewOnboardingService(d *DB, orgs core.OrganizationService, subs core.SubscriptionService, keys core.APIKeyService, growth core.GrowthService) *OnboardingService {
	return &OnboardingService{db: d, organizations: orgs, subscriptions: subs, keys: keys, growth: growth}
}

// OnboardVerifiedLogin implements core.OnboardingService.
func (s *OnboardingService) OnboardVerifiedLogin(ctx context.Context, in core.VerifiedLogin) (*core.Onboarded, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if !p.IsOperator() {
		return nil, core.Errorf(core.EForbidden, "Only the operator onboards verified logins.")
	}
	if !in.EmailVerified {
		return nil, unprocessablef("/identity/email_verified", "The identity's e-mail address is not verified; onboarding needs a verified login.")
	}
	var out *core.Onboarded
	err = s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		if err := q.OnboardingLockIdentity(ctx, in.Issuer+"\n"+in.Subject); err != nil {
			return err
		}
		existing, err := q.OnboardingGetByIdentity(ctx, dbq.OnboardingGetByIdentityParams{IdentityIssuer: in.Issuer, IdentitySubject: in.Subject})
		switch {
		case err == nil:
			out, err = s.load(ctx, q, existing)
			return err
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		out, err = s.provision(ctx, q, in)
		return err
	})
	return out, err
}

// provision creates everything for a new identity. ctx carries q's transaction, so the
// services called here (each running its own WithTx) work in savepoints of it.
func (s *OnboardingService) provision(ctx context.Context, q *dbq.Queries, in core.VerifiedLogin) (*core.Onboarded, error) {
	org, err := s.organizations.CreateOrganization(ctx, in.Organization)
	if err != nil {
		return nil, err
	}
	sub, err := s.subscriptions.CreateSubscription(ctx, core.SubscriptionCreate{
		OrganizationID: org.ID, ProductID: core.OnboardingProductID, PlanID: core.OnboardingPlanID,
	})
	if err != nil {
		return nil, err
	}
	// The sandbox needs nothing external, and sandbox_ready must mean ready: a provisioning
	// subscription refuses its product's operations (core.Entitle), so the developer key
	// would not work yet. The subscription is provisioned here; the job its creation queued
	// finds it done.
	if err := s.db.ProvisionSubscription(ctx, org.ID, sub.ID); err != nil {
		return nil, err
	}
	if sub, err = s.subscriptions.FindSubscriptionByID(ctx, sub.ID); err != nil {
		return nil, err
	}
	resourceID, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	resource, err := q.ServiceResourceInsert(ctx, dbq.ServiceResourceInsertParams{
		ID: resourceID, OrganizationID: org.ID, Product: "einvoice",
		CapabilityID: core.CapabilityID("einvoice"), LifecycleStatus: "active",
	})
	if err != nil {
		return nil, err
	}
	key, err := s.keys.CreateAPIKey(ctx, core.APIKeyCreate{
		OrganizationID: org.ID, Name: "Sandbox developer key", Environment: "sandbox", Scopes: core.OnboardingKeyScopes,
	})
	if err != nil {
		return nil, err
	}
	stateID, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	state, err := q.OnboardingInsert(ctx, dbq.OnboardingInsertParams{
		ID: stateID, OrganizationID: org.ID, IdentityIssuer: in.Issuer, IdentitySubject: in.Subject,
		Email: in.Email, Status: core.OnboardingStatusSandboxReady, CompletedSteps: core.OnboardingSteps,
		SubscriptionID: sub.ID, ResourceID: resource.ID, ApiKeyID: key.ID,
	})
	if err != nil {
		return nil, err
	}
	traffic := in.TrafficType
	if traffic == "" {
		traffic = core.DefaultOnboardingTrafficType
	}
	product := "einvoice"
	for _, step := range core.OnboardingSteps {
		if err := s.growth.RecordGrowthEvent(ctx, core.GrowthEvent{
			EventName: step, OrganizationID: org.ID.String(), TrafficType: traffic, Product: &product, Language: in.Language,
		}); err != nil {
			return nil, err
		}
	}
	onboarded := &core.Onboarded{
		Created: true, Organization: org, Subscription: sub, Key: key, State: onboardingFromRow(state),
		Resource: resourceFromRow(resource), ResourceOrg: resource.OrganizationID, ResourceAt: resource.CreatedAt,
	}
	return onboarded, audit(ctx, q, core.AuditEntry{
		OrganizationID: &org.ID, Action: "onboarding.sandbox_ready", ResourceType: "onboarding",
		ResourceID: state.ID.String(), After: onboarded.State,
	})
}

// load returns the records of an identity onboarded before, without the key's secret.
func (s *OnboardingService) load(ctx context.Context, q *dbq.Queries, row dbq.Onboarding) (*core.Onboarded, error) {
	org, err := q.OrganizationGetByID(ctx, row.OrganizationID)
	if err != nil {
		return nil, err
	}
	sub, err := s.subscriptions.FindSubscriptionByID(ctx, row.SubscriptionID)
	if err != nil {
		return nil, err
	}
	resource, err := q.ServiceResourceGetByID(ctx, dbq.ServiceResourceGetByIDParams{OrganizationID: row.OrganizationID, ID: row.ResourceID})
	if err != nil {
		return nil, err
	}
	key, err := q.APIKeyGetByID(ctx, dbq.APIKeyGetByIDParams{OrganizationID: row.OrganizationID, ID: row.ApiKeyID})
	if err != nil {
		return nil, err
	}
	return &core.Onboarded{
		Organization: organizationFromRow(org), Subscription: sub, Key: &core.NewAPIKey{APIKey: *apiKeyFromRow(key)},
		State: onboardingFromRow(row), Resource: resourceFromRow(resource),
		ResourceOrg: resource.OrganizationID, ResourceAt: resource.CreatedAt,
	}, nil
}

// FindOnboarding implements core.OnboardingService.
func (s *OnboardingService) FindOnboarding(ctx context.Context, organizationID uuid.UUID) (*core.OnboardingState, error) {
	q := s.db.queries(ctx)
	get := func(org uuid.UUID) (dbq.Onboarding, error) { return q.OnboardingGetByOrganization(ctx, org) }
	row, err := owned(ctx,
		func(own uuid.UUID) (dbq.Onboarding, error) {
			if organizationID != own {
				return dbq.Onboarding{}, pgx.ErrNoRows
			}
			return get(own)
		},
		func() (dbq.Onboarding, error) { return get(organizationID) },
		"The onboarding of organization", organizationID)
	if err != nil {
		return nil, err
	}
	return onboardingFromRow(row), nil
}

// reachOnboarding records milestone m of organization orgID's onboarding inside the
// transaction of the change that reached it. Once its steps are completed (or for an
// organization not onboarded through a verified login) it changes nothing and costs one
// indexed lookup. A change is audited: onboarding.<status> when the status moved (a status
// is only ever set together with the milestone's steps, so a returned status equal to the
// milestone's is a move), onboarding.step_completed otherwise.
func reachOnboarding(ctx context.Context, q *dbq.Queries, orgID uuid.UUID, m core.OnboardingMilestone) error {
	row, err := q.OnboardingReach(ctx, dbq.OnboardingReachParams{
		StatusOrder: core.OnboardingStatusOrder, Status: m.Status, Steps: m.Steps, OrganizationID: orgID,
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	action := "onboarding.step_completed"
	if row.Status == m.Status && m.Status != core.OnboardingStatusSandboxReady {
		action = "onboarding." + m.Status
	}
	return audit(ctx, q, core.AuditEntry{
		OrganizationID: &orgID, Action: action, ResourceType: "onboarding",
		ResourceID: row.ID.String(), After: onboardingFromRow(row),
	})
}

func onboardingFromRow(r dbq.Onboarding) *core.OnboardingState {
	return &core.OnboardingState{
		ID: r.ID, OrganizationID: r.OrganizationID, IdentityIssuer: r.IdentityIssuer, IdentitySubject: r.IdentitySubject,
		Email: r.Email, Status: r.Status, CompletedSteps: r.CompletedSteps, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
}
