package postgres

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// ConnectedBusinessService implements core.ConnectedBusinessService.
type ConnectedBusinessService struct{ db *DB }

var _ core.ConnectedBusinessService = (*ConnectedBusinessService)(nil)

// NewConnectedBusinessService returns the connected business service over d.
func NewConnectedBusinessService(d *DB) *ConnectedBusinessService {
	return &ConnectedBusinessService{db: d}
}

// CreateConnectedBusiness implements core.ConnectedBusinessService.
func (s *ConnectedBusinessService) CreateConnectedBusiness(ctx context.Context, in core.ConnectedBusinessCreate) (*core.ConnectedBusiness, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	products := in.Products
	if len(products) == 0 {
		products = core.SandboxProducts
	}
	var cb *core.ConnectedBusiness
	err = s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		if err := requirePlatform(ctx, q, p); err != nil {
			return err
		}
		if err := s.db.organizationWithinQuota(ctx, q, p.OrganizationID, core.QuotaConnectedBusinesses); err != nil {
			return err
		}
		id, err := uuid.NewV7()
		if err != nil {
			return err
		}
		row, err := q.ConnectedBusinessInsert(ctx, dbq.ConnectedBusinessInsertParams{
			ID:                              id,
			OrganizationID:                  p.OrganizationID,
			ExternalReference:               in.ExternalReference,
			DisplayName:                     in.DisplayName,
			LegalNameAr:                     in.LegalNameAr,
			LegalNameEn:                     in.LegalNameEn,
			VatReference:                    in.VatReference,
			CommercialRegistrationReference: in.CommercialRegistrationReference,
			NationalAddressReference:        in.NationalAddressReference,
		})
		if err != nil {
			if core.ErrorCode(translate(err)) == core.EConflict {
				return core.Errorf(core.EConflict, "A connected business with external_reference %q already exists.", in.ExternalReference)
			}
			return err
		}
		cb = businessFromRow(row)
		for _, product := range products {
			rid, err := uuid.NewV7()
			if err != nil {
				return err
			}
			res, err := q.ServiceResourceInsert(ctx, dbq.ServiceResourceInsertParams{
				ID: rid, OrganizationID: p.OrganizationID, ConnectedBusinessID: &cb.ID,
				Product: product, CapabilityID: core.CapabilityID(product), LifecycleStatus: core.BusinessActive,
			})
			if err != nil {
				return err
			}
			cb.Resources = append(cb.Resources, resourceFromRow(res))
		}
		if err := audit(ctx, q, core.AuditEntry{
			OrganizationID: &p.OrganizationID, Action: "connected_business.created",
			ResourceType: "connected_business", ResourceID: cb.ID.String(), After: cb,
		}); err != nil {
			return err
		}
		return s.db.publish(ctx, q, p.OrganizationID, core.EventConnectedBusinessCreated, cb)
	})
	return cb, err
}

// requirePlatform refuses callers that are not platform organizations: only organizations
// created as resellers or white-label tenants have connected businesses.
func requirePlatform(ctx context.Context, q *dbq.Queries, p *core.Principal) error {
	refuse := core.Errorf(core.EPlatformModeRequired,
		"Connected businesses belong to platform organizations (organization_type reseller or white_label_tenant).")
	if p.IsOperator() || p.ConnectedBusinessID != nil {
		return refuse
	}
	row, err := q.OrganizationGetByID(ctx, p.OrganizationID)
	if errors.Is(err, pgx.ErrNoRows) {
		return refuse
	}
	if err != nil {
		return err
	}
	if !organizationFromRow(row).IsPlatform() {
		return refuse
	}
	return nil
}

// ListConnectedBusinesses implements core.ConnectedBusinessService.
func (s *ConnectedBusinessService) ListConnectedBusinesses(ctx context.Context, cursor *uuid.UUID, limit int) ([]*core.ConnectedBusiness, *string, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, nil, err
	}
	var rows []dbq.ConnectedBusiness
	if p.IsOperator() {
		rows, err = s.db.queries(ctx).ConnectedBusinessListAnyOrganization(ctx, dbq.ConnectedBusinessListAnyOrganizationParams{
			After: cursor, RowLimit: int32(limit) + 1,
		})
	} else {
		rows, err = s.db.queries(ctx).ConnectedBusinessList(ctx, dbq.ConnectedBusinessListParams{
			OrganizationID: p.OrganizationID, After: cursor, RowLimit: int32(limit) + 1,
		})
	}
	if err != nil {
		return nil, nil, translate(err)
	}
	out := make([]*core.ConnectedBusiness, 0, len(rows))
	for _, r := range rows {
		out = append(out, businessFromRow(r))
	}
	out, next := page(out, limit, func(b *core.ConnectedBusiness) uuid.UUID { return b.ID })
	return out, next, nil
}

// FindConnectedBusinessByID implements core.ConnectedBusinessService.
func (s *ConnectedBusinessService) FindConnectedBusinessByID(ctx context.Context, id uuid.UUID) (*core.ConnectedBusiness, error) {
	q := s.db.queries(ctx)
	row, err := owned(ctx,
		func(org uuid.UUID) (dbq.ConnectedBusiness, error) {
			return q.ConnectedBusinessGetByID(ctx, dbq.ConnectedBusinessGetByIDParams{OrganizationID: org, ID: id})
		},
		func() (dbq.ConnectedBusiness, error) { return q.ConnectedBusinessGetByIDAnyOrganization(ctx, id) },
		"Connected business", id)
	if err != nil {
		return nil, err
	}
	cb := businessFromRow(row)
	if cb.Resources, err = listResources(ctx, q, row.OrganizationID, id); err != nil {
		return nil, err
	}
	return cb, nil
}

func listResources(ctx context.Context, q *dbq.Queries, org, business uuid.UUID) ([]core.ServiceResource, error) {
	rows, err := q.ServiceResourceListByBusiness(ctx, dbq.ServiceResourceListByBusinessParams{OrganizationID: org, ConnectedBusinessID: &business})
	if err != nil {
		return nil, translate(err)
	}
	out := make([]core.ServiceResource, len(rows))
	for i, r := range rows {
		out[i] = resourceFromRow(r)
	}
	return out, nil
}

// UpdateConnectedBusiness implements core.ConnectedBusinessService.
func (s *ConnectedBusinessService) UpdateConnectedBusiness(ctx context.Context, id uuid.UUID, in core.ConnectedBusinessUpdate) (*core.ConnectedBusiness, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	var cb *core.ConnectedBusiness
	err = s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		row, err := lockBusiness(ctx, q, id)
		if err != nil {
			return err
		}
		before := businessFromRow(row)
		next := *before
		write, err := next.Apply(in, p.ActorType())
		if err != nil {
			return err
		}
		if !write {
			cb = before
			cb.Resources, err = listResources(ctx, q, row.OrganizationID, id)
			return err
		}
		// A closed business reopened counts toward the quota again.
		if before.LifecycleStatus == core.BusinessClosed && next.LifecycleStatus != core.BusinessClosed {
			if err := s.db.organizationWithinQuota(ctx, q, row.OrganizationID, core.QuotaConnectedBusinesses); err != nil {
				return err
			}
		}
		updated, err := q.ConnectedBusinessUpdate(ctx, dbq.ConnectedBusinessUpdateParams{
			OrganizationID: row.OrganizationID, ID: id, DisplayName: next.DisplayName, LegalNameAr: next.LegalNameAr,
			LegalNameEn: next.LegalNameEn, VatReference: next.VatReference, LifecycleStatus: next.LifecycleStatus,
			LifecycleDecidedBy: nonEmpty(next.LifecycleDecidedBy),
		})
		if err != nil {
			return err
		}
		// The resources follow the business: a reopened business gets them back.
		if updated.LifecycleStatus != row.LifecycleStatus {
			if err := q.ServiceResourceSetStatusByBusiness(ctx, dbq.ServiceResourceSetStatusByBusinessParams{
				OrganizationID: row.OrganizationID, ConnectedBusinessID: &id, LifecycleStatus: updated.LifecycleStatus,
			}); err != nil {
				return err
			}
		}
		cb = businessFromRow(updated)
		if cb.Resources, err = listResources(ctx, q, row.OrganizationID, id); err != nil {
			return err
		}
		if err := audit(ctx, q, core.AuditEntry{
			OrganizationID: &row.OrganizationID, Action: "connected_business.updated",
			ResourceType: "connected_business", ResourceID: id.String(), Before: before, After: cb,
		}); err != nil {
			return err
		}
		return s.db.publish(ctx, q, row.OrganizationID, core.EventConnectedBusinessUpdated, cb)
	})
	if err == nil {
		// A suspended or closed business's credentials stop at once, and a reopened
		// business's work again at once: no cached answer may outlive the change.
		s.db.credentialsChanged(ctx)
	}
	return cb, err
}

// lockBusiness locks the connected business id of the caller (of any organization, for the
// operator) until the transaction ends.
func lockBusiness(ctx context.Context, q *dbq.Queries, id uuid.UUID) (dbq.ConnectedBusiness, error) {
	return owned(ctx,
		func(org uuid.UUID) (dbq.ConnectedBusiness, error) {
			return q.ConnectedBusinessGetByIDForUpdate(ctx, dbq.ConnectedBusinessGetByIDForUpdateParams{OrganizationID: org, ID: id})
		},
		func() (dbq.ConnectedBusiness, error) {
			return q.ConnectedBusinessGetByIDForUpdateAnyOrganization(ctx, id)
		},
		"Connected business", id)
}

// CreateCredential implements core.ConnectedBusinessService.
func (s *ConnectedBusinessService) CreateCredential(ctx context.Context, id uuid.UUID, product, name string) (*core.ConnectedBusinessCredential, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	var cred *core.ConnectedBusinessCredential
	err = s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		// Locked so a concurrent suspension can't slip between the check and the insert.
		row, err := lockBusiness(ctx, q, id)
		if err != nil {
			return err
		}
		// A credential is a key: the caller grants only scopes it holds (issue 21, item 1).
		if err := core.CheckKeyAuthority(p, "create", "sandbox", core.CredentialScopes[product]); err != nil {
			return err
		}
		if err := s.db.entitle(ctx, row.OrganizationID, core.Access{
			Act: core.ActIssueCredential, Environment: core.SandboxEnvironment, Business: &row.LifecycleStatus,
		}); err != nil {
			return err
		}
		if err := s.db.businessWithinQuota(ctx, q, row.OrganizationID, id); err != nil {
			return err
		}
		resources, err := listResources(ctx, q, row.OrganizationID, id)
		if err != nil {
			return err
		}
		var resource *core.ServiceResource
		for i := range resources {
			if resources[i].Product == product {
				resource = &resources[i]
			}
		}
		if resource == nil {
			return core.Errorf(core.EUnprocessable, "Connected business %s was not created with the product %s.", id, product)
		}
		keyID, err := uuid.NewV7()
		if err != nil {
			return err
		}
		prefix, secret := core.NewKeyMaterial("sandbox")
		key, err := q.APIKeyInsert(ctx, dbq.APIKeyInsertParams{
			ID: keyID, OrganizationID: row.OrganizationID, Name: name, Prefix: prefix,
			SecretHash: core.HashSecret(secret), Environment: "sandbox", Scopes: core.CredentialScopes[product],
			AllowedOrigins: []string{}, AllowedIps: []string{}, CreatedBy: p.Subject,
			ConnectedBusinessID: &id, ServiceResourceID: &resource.ID,
		})
		if err != nil {
			return err
		}
		cred = &core.ConnectedBusinessCredential{
			ID: key.ID, Prefix: prefix, FullKey: prefix + "_" + secret, Product: product,
			ConnectedBusinessID: id, ServiceResourceID: resource.ID,
		}
		return audit(ctx, q, core.AuditEntry{
			OrganizationID: &row.OrganizationID, Action: "connected_business_credential.created",
			ResourceType: "connected_business_credential", ResourceID: key.ID.String(), After: apiKeyFromRow(key),
		})
	})
	return cred, err
}

func businessFromRow(r dbq.ConnectedBusiness) *core.ConnectedBusiness {
	cb := &core.ConnectedBusiness{
		ID: r.ID, PlatformOrganizationID: r.OrganizationID, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		ExternalReference: r.ExternalReference, DisplayName: r.DisplayName, LegalNameAr: r.LegalNameAr,
		LegalNameEn: r.LegalNameEn, VatReference: r.VatReference,
		CommercialRegistrationReference: r.CommercialRegistrationReference,
		NationalAddressReference:        r.NationalAddressReference, LifecycleStatus: r.LifecycleStatus,
	}
	if r.LifecycleDecidedBy != nil {
		cb.LifecycleDecidedBy = *r.LifecycleDecidedBy
	}
	return cb
}

func resourceFromRow(r dbq.ServiceResource) core.ServiceResource {
	return core.ServiceResource{ID: r.ID, Product: r.Product, CapabilityID: r.CapabilityID, LifecycleStatus: r.LifecycleStatus}
}
