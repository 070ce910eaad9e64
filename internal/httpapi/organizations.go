package httpapi

import (
	"context"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/core"
)

// CreateOrganization implements POST /v1/organizations.
func (s *Server) CreateOrganization(ctx context.Context, req api.CreateOrganizationRequestObject) (api.CreateOrganizationResponseObject, error) {
	b := req.Body
	org, err := s.cfg.Services.Organizations.CreateOrganization(ctx, core.OrganizationCreate{
		LegalNameAr:                     b.LegalNameAr,
		LegalNameEn:                     b.LegalNameEn,
		DisplayName:                     b.DisplayName,
		OrganizationType:                string(b.OrganizationType),
		Country:                         b.Country,
		CommercialRegistrationReference: valueOf(b.CommercialRegistrationReference),
		VatReference:                    valueOf(b.VatReference),
		NationalAddressReference:        valueOf(b.NationalAddressReference),
		VerificationStatus:              enumOr(b.VerificationStatus),
		RiskStatus:                      enumOr(b.RiskStatus),
		DataResidencyPolicy:             enumOr(b.DataResidencyPolicy),
		LifecycleStatus:                 enumOr(b.LifecycleStatus),
	})
	if err != nil {
		return nil, err
	}
	return api.CreateOrganization201JSONResponse{Body: toAPIOrganization(org)}, nil
}

// GetOrganization implements GET /v1/organizations/{id}.
func (s *Server) GetOrganization(ctx context.Context, req api.GetOrganizationRequestObject) (api.GetOrganizationResponseObject, error) {
	org, err := s.cfg.Services.Organizations.FindOrganizationByID(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.GetOrganization200JSONResponse{Body: toAPIOrganization(org)}, nil
}

// UpdateOrganization implements PATCH /v1/organizations/{id}.
func (s *Server) UpdateOrganization(ctx context.Context, req api.UpdateOrganizationRequestObject) (api.UpdateOrganizationResponseObject, error) {
	b := req.Body
	org, err := s.cfg.Services.Organizations.UpdateOrganization(ctx, req.Id, core.OrganizationUpdate{
		LegalNameAr:                     presentField(b.LegalNameAr),
		LegalNameEn:                     presentField(b.LegalNameEn),
		DisplayName:                     presentField(b.DisplayName),
		CommercialRegistrationReference: patchField(b.CommercialRegistrationReference),
		VatReference:                    patchField(b.VatReference),
		NationalAddressReference:        patchField(b.NationalAddressReference),
		LifecycleStatus:                 presentField(b.LifecycleStatus),
		VerificationStatus:              presentField(b.VerificationStatus),
		RiskStatus:                      presentField(b.RiskStatus),
		DataResidencyPolicy:             presentField(b.DataResidencyPolicy),
	})
	if err != nil {
		return nil, err
	}
	return api.UpdateOrganization200JSONResponse{Body: toAPIOrganization(org)}, nil
}

func toAPIOrganization(o *core.Organization) api.Organization {
	return api.Organization{
		Id:                              o.ID,
		CreatedAt:                       o.CreatedAt,
		UpdatedAt:                       o.UpdatedAt,
		LegalNameAr:                     o.LegalNameAr,
		LegalNameEn:                     o.LegalNameEn,
		DisplayName:                     o.DisplayName,
		OrganizationType:                api.OrganizationType(o.OrganizationType),
		Country:                         o.Country,
		CommercialRegistrationReference: nullableFrom(o.CommercialRegistrationReference),
		VatReference:                    nullableFrom(o.VatReference),
		NationalAddressReference:        nullableFrom(o.NationalAddressReference),
		VerificationStatus:              api.OrganizationVerificationStatus(o.VerificationStatus),
		RiskStatus:                      api.OrganizationRiskStatus(o.RiskStatus),
		DataResidencyPolicy:             api.DataResidencyPolicy(o.DataResidencyPolicy),
		LifecycleStatus:                 api.OrganizationLifecycleStatus(o.LifecycleStatus),
	}
}
