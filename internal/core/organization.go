package core

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Defaults for the optional statuses of a new organization: a new customer is unverified,
// carries no risk flag, keeps its data in Saudi Arabia and waits for activation.
const (
	DefaultVerificationStatus  = "unverified"
	DefaultRiskStatus          = "normal"
	DefaultDataResidencyPolicy = "sa_only"
	DefaultLifecycleStatus     = "pending"
)

// Organization is a customer account: the tenant every other resource belongs to. The JSON
// form is its audit summary.
type Organization struct {
	ID                              uuid.UUID `json:"id"`
	CreatedAt                       time.Time `json:"created_at"`
	UpdatedAt                       time.Time `json:"updated_at"`
	LegalNameAr                     string    `json:"legal_name_ar"`
	LegalNameEn                     string    `json:"legal_name_en"`
	DisplayName                     string    `json:"display_name"`
	OrganizationType                string    `json:"organization_type"`
	Country                         string    `json:"country"`
	CommercialRegistrationReference *string   `json:"commercial_registration_reference"`
	VatReference                    *string   `json:"vat_reference"`
	NationalAddressReference        *string   `json:"national_address_reference"`
	VerificationStatus              string    `json:"verification_status"`
	RiskStatus                      string    `json:"risk_status"`
	DataResidencyPolicy             string    `json:"data_residency_policy"`
	LifecycleStatus                 string    `json:"lifecycle_status"`
}

// IsPlatform reports whether the organization was created in Platform mode and may therefore
// create connected businesses.
func (o *Organization) IsPlatform() bool {
	return o.OrganizationType == "reseller" || o.OrganizationType == "white_label_tenant"
}

// OrganizationCreate is the input of OrganizationService.CreateOrganization. Empty status
// fields take the defaults above.
type OrganizationCreate struct {
	LegalNameAr, LegalNameEn        string
	DisplayName                     string
	OrganizationType                string
	Country                         string
	CommercialRegistrationReference *string
	VatReference                    *string
	NationalAddressReference        *string
	VerificationStatus              string
	RiskStatus                      string
	DataResidencyPolicy             string
	LifecycleStatus                 string
}

// OrganizationService manages organizations.
type OrganizationService interface {
	// CreateOrganization creates an organization. Only the operator may: an organization
	// principal gets EForbidden.
	CreateOrganization(ctx context.Context, in OrganizationCreate) (*Organization, error)
	// FindOrganizationByID returns the organization, or ENotFound when it does not exist or
	// the principal may not see it (no existence leak across tenants).
	FindOrganizationByID(ctx context.Context, id uuid.UUID) (*Organization, error)
}
