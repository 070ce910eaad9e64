package postgres

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// OrganizationService implements core.OrganizationService.
type OrganizationService struct{ db *DB }

var _ core.OrganizationService = (*OrganizationService)(nil)

// NewOrganizationService returns the organization service over d.
func NewOrganizationService(d *DB) *OrganizationService { return &OrganizationService{db: d} }

// CreateOrganization implements core.OrganizationService.
func (s *OrganizationService) CreateOrganization(ctx context.Context, in core.OrganizationCreate) (*core.Organization, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if !p.IsOperator() {
		return nil, core.Errorf(core.EForbidden, "Only the operator may create organizations.")
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	var org *core.Organization
	err = s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		row, err := q.OrganizationInsert(ctx, dbq.OrganizationInsertParams{
			ID:                              id,
			LegalNameAr:                     in.LegalNameAr,
			LegalNameEn:                     in.LegalNameEn,
			DisplayName:                     in.DisplayName,
			OrganizationType:                in.OrganizationType,
			Country:                         in.Country,
			CommercialRegistrationReference: in.CommercialRegistrationReference,
			VatReference:                    in.VatReference,
			NationalAddressReference:        in.NationalAddressReference,
			VerificationStatus:              or(in.VerificationStatus, core.DefaultVerificationStatus),
			RiskStatus:                      or(in.RiskStatus, core.DefaultRiskStatus),
			DataResidencyPolicy:             or(in.DataResidencyPolicy, core.DefaultDataResidencyPolicy),
			LifecycleStatus:                 or(in.LifecycleStatus, core.DefaultLifecycleStatus),
		})
		if err != nil {
			return err
		}
		org = organizationFromRow(row)
		return audit(ctx, q, core.AuditEntry{
			OrganizationID: &org.ID,
			Action:         "organization.created",
			ResourceType:   "organization",
			ResourceID:     org.ID.String(),
			After:          org,
		})
	})
	return org, err
}

// FindOrganizationByID implements core.OrganizationService.
func (s *OrganizationService) FindOrganizationByID(ctx context.Context, id uuid.UUID) (*core.Organization, error) {
	q := s.db.queries(ctx)
	row, err := owned(ctx,
		func(org uuid.UUID) (dbq.Organization, error) {
			if id != org { // an organization's only organization is its own
				return dbq.Organization{}, pgx.ErrNoRows
			}
			return q.OrganizationGetByID(ctx, org)
		},
		func() (dbq.Organization, error) { return q.OrganizationGetByID(ctx, id) },
		"Organization", id)
	if err != nil {
		return nil, err
	}
	return organizationFromRow(row), nil
}

func organizationFromRow(r dbq.Organization) *core.Organization {
	return &core.Organization{
		ID:                              r.ID,
		CreatedAt:                       r.CreatedAt,
		UpdatedAt:                       r.UpdatedAt,
		LegalNameAr:                     r.LegalNameAr,
		LegalNameEn:                     r.LegalNameEn,
		DisplayName:                     r.DisplayName,
		OrganizationType:                r.OrganizationType,
		Country:                         r.Country,
		CommercialRegistrationReference: r.CommercialRegistrationReference,
		VatReference:                    r.VatReference,
		NationalAddressReference:        r.NationalAddressReference,
		VerificationStatus:              r.VerificationStatus,
		RiskStatus:                      r.RiskStatus,
		DataResidencyPolicy:             r.DataResidencyPolicy,
		LifecycleStatus:                 r.LifecycleStatus,
	}
}

// or returns v, or def when v is empty.
func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
