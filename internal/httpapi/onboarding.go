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
		Onboarding:   toAPIOnboarding(done.State),
	}
	if !done.Created {
		return api.CreateVerifiedLoginOnboarding200JSONResponse{Body: result}, nil
	}
	result.ApiKeySecret = nullable.NewNullableWithValue(api.ApiKeySecret{Secret: done.Key.Secret, FullKey: done.Key.FullKey})
	return api.CreateVerifiedLoginOnboarding201JSONResponse{Body: result}, nil
}

// GetOrganizationOnboarding implements GET /v1/organizations/{id}/onboarding.
func (s *Server) GetOrganizationOnboarding(ctx context.Context, req api.GetOrganizationOnboardingRequestObject) (api.GetOrganizationOnboardingResponseObject, error) {
	state, err := s.cfg.Services.Onboarding.FindOnboarding(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.GetOrganizationOnboarding200JSONResponse{Body: toAPIOnboarding(state)}, nil
}

func toAPIOnboarding(st *core.OnboardingState) api.OnboardingState {
	steps := make([]api.GrowthEventName, len(st.CompletedSteps))
	for i, step := range st.CompletedSteps {
		steps[i] = api.GrowthEventName(step)
	}
	return api.OnboardingState{
		Id: st.ID, OrganizationId: st.OrganizationID.String(),
		IdentityIssuer: st.IdentityIssuer, IdentitySubject: st.IdentitySubject,
		Email: openapi_types.Email(st.Email), Status: api.OnboardingStatus(st.Status),
		CompletedSteps: steps, CreatedAt: st.CreatedAt, UpdatedAt: st.UpdatedAt,
	}
}
