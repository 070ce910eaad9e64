package httpapi

import (
	"context"

	"github.com/oapi-codegen/nullable"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/core"
)

// CreateVerifiedLoginOnboarding implements POST /v1/onboarding/verified-logins.
func (s *Server) CreateVerifiedLoginOnboarding(ctx context.Context, req api.CreateVerifiedLoginOnboardingRequestObject) (api.CreateVerifiedLoginOnboardingResponseObject, error) {
	b := req.Body
	o := b.Organization
	in := core.VerifiedLogin{
		Issuer: b.Identity.Issuer, Subject: b.Identity.Subject, Email: string(b.Identity.Email),
		EmailVerified: b.Identity.EmailVerified,
		Organization: core.OrganizationCreate{
			LegalNameAr: o.LegalNameAr, LegalNameEn: o.LegalNameEn, DisplayName: o.DisplayName,
			OrganizationType: string(o.OrganizationType), Country: o.Country,
			CommercialRegistrationReference: valueOf(o.CommercialRegistrationReference),
			VatReference:                    valueOf(o.VatReference),
		},
		TrafficType: enumOr(b.TrafficType),
	}
	if b.Language != nil {
		lang := string(*b.Language)
		in.Language = &lang
	}
	done, err := s.cfg.Services.Onboarding.OnboardVerifiedLogin(ctx, in)
	if err != nil {
		return nil, err
	}
	steps := make([]api.GrowthEventName, len(done.State.CompletedSteps))
	for i, st := range done.State.CompletedSteps {
		steps[i] = api.GrowthEventName(st)
	}
	result := api.VerifiedLoginResult{
		Created:      done.Created,
		Organization: toAPIOrganization(done.Organization),
		Subscription: toAPISubscription(done.Subscription),
		Resource: api.ServiceResource{
			Id: done.Resource.ID, OrganizationId: done.ResourceOrg.String(), Product: api.SandboxProduct(done.Resource.Product),
			CapabilityId: done.Resource.CapabilityID, LifecycleStatus: done.Resource.LifecycleStatus, CreatedAt: done.ResourceAt,
		},
		ApiKey:       toAPIKey(&done.Key.APIKey),
		ApiKeySecret: null[api.ApiKeySecret](),
		Onboarding: api.OnboardingState{
			Id: done.State.ID, OrganizationId: done.State.OrganizationID.String(),
			IdentityIssuer: done.State.IdentityIssuer, IdentitySubject: done.State.IdentitySubject,
			Email: openapi_types.Email(done.State.Email), Status: api.OnboardingStatus(done.State.Status),
			CompletedSteps: steps, CreatedAt: done.State.CreatedAt, UpdatedAt: done.State.UpdatedAt,
		},
	}
	if !done.Created {
		return api.CreateVerifiedLoginOnboarding200JSONResponse{Body: result}, nil
	}
	result.ApiKeySecret = nullable.NewNullableWithValue(api.ApiKeySecret{Secret: done.Key.Secret, FullKey: done.Key.FullKey})
	return api.CreateVerifiedLoginOnboarding201JSONResponse{Body: result}, nil
}
