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
	row, err := ownedOrganization(ctx, id, func(id uuid.UUID) (dbq.Organization, error) { return q.OrganizationGetByID(ctx, id) })
	if err != nil {
		return nil, err
	}
	return organizationFromRow(row), nil
}

// UpdateOrganization implements core.OrganizationService.
func (s *OrganizationService) UpdateOrganization(ctx context.Context, id uuid.UUID, in core.OrganizationUpdate) (*core.Organization, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if p.ConnectedBusinessID != nil {
		return nil, core.Errorf(core.EForbidden, "A connected business's credential cannot change its platform organization.")
	}
	var org *core.Organization
	standingChanged := false
	err = s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		row, err := ownedOrganization(ctx, id, func(id uuid.UUID) (dbq.Organization, error) { return q.OrganizationGetByIDForUpdate(ctx, id) })
		if err != nil {
			return err
		}
		before := organizationFromRow(row)
		next := *before
		changed, err := next.Apply(in, p.ActorType())
		if err != nil || !changed {
			org = before
			return err
		}
		updated, err := q.OrganizationUpdate(ctx, dbq.OrganizationUpdateParams{
			ID: id, LegalNameAr: next.LegalNameAr, LegalNameEn: next.LegalNameEn, DisplayName: next.DisplayName,
			CommercialRegistrationReference: next.CommercialRegistrationReference, VatReference: next.VatReference,
			NationalAddressReference: next.NationalAddressReference, VerificationStatus: next.VerificationStatus,
			RiskStatus: next.RiskStatus, DataResidencyPolicy: next.DataResidencyPolicy, LifecycleStatus: next.LifecycleStatus,
		})
		if err != nil {
			return err
		}
		org = organizationFromRow(updated)
		standingChanged = org.VerificationStatus != before.VerificationStatus ||
			org.RiskStatus != before.RiskStatus || org.LifecycleStatus != before.LifecycleStatus
		if err := audit(ctx, q, core.AuditEntry{
			OrganizationID: &id, Action: "organization.updated",
			ResourceType: "organization", ResourceID: id.String(), Before: before, After: org,
		}); err != nil {
			return err
		}
		if err := s.db.publish(ctx, q, id, core.EventOrganizationUpdated, org); err != nil {
			return err
		}
		if org.EndsSubscriptions(before) {
			return s.db.terminateSubscriptionsOf(ctx, q, id, p.ActorType(), "organization terminated")
		}
		return nil
	})
	if err == nil && standingChanged {
		s.db.credentialsChanged(ctx) // the organization's next request obeys its new standing
	}
	return org, err
}

// ownedOrganization reads organization id with get for the caller (see owned): an
// organization's only organization is its own, so for an organization principal get runs
// only when id is its own, and another organization's row is never read or locked.
func ownedOrganization(ctx context.Context, id uuid.UUID, get func(id uuid.UUID) (dbq.Organization, error)) (dbq.Organization, error) {
	return owned(ctx,
		func(own uuid.UUID) (dbq.Organization, error) {
			if id != own {
				return dbq.Organization{}, pgx.ErrNoRows
			}
			return get(own)
		},
		func() (dbq.Organization, error) { return get(id) },
		"Organization", id)
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
