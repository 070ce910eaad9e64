package postgres

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// SupportCaseService implements core.SupportCaseService.
type SupportCaseService struct{ db *DB }

var _ core.SupportCaseService = (*SupportCaseService)(nil)

// NewSupportCaseService returns the support case service over d.
func NewSupportCaseService(d *DB) *SupportCaseService { return &SupportCaseService{db: d} }

// CreateSupportCase implements core.SupportCaseService.
func (s *SupportCaseService) CreateSupportCase(ctx context.Context, in core.SupportCaseCreate) (*core.SupportCase, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	orgID := in.OrganizationID
	if err := p.ActsFor(orgID, "/organization_id"); err != nil {
		return nil, err
	}
	if err := storableText(map[string]*string{
		"/subject": &in.Subject, "/description": &in.Description, "/product_id": in.ProductID,
		"/resource_id": in.ResourceID, "/request_id": in.RequestID, "/environment": in.Environment,
	}, map[string]json.RawMessage{"/diagnostics": in.Diagnostics}); err != nil {
		return nil, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	diagnostics := json.RawMessage(`{}`)
	if in.Diagnostics != nil {
		// Diagnostics are what an SDK gathered about a failing call, where a key or an
		// Authorization value lands easily: the case, its audit record and its event keep such
		// fields as the request log does, redacted by name. A flat object always redacts.
		redacted, ok := core.RedactBody("application/json", in.Diagnostics)
		if !ok {
			return nil, core.Errorf(core.EInternal, "support case diagnostics are not a JSON object")
		}
		diagnostics = redacted
	}
	team := core.SupportTeamFor(in.Category, in.Severity)
	var created *core.SupportCase
	err = s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		if err := s.db.organizationWithinQuota(ctx, q, orgID, core.QuotaOpenSupportCases); err != nil {
			return err
		}
		if err := checkProduct(ctx, q, in.ProductID); err != nil {
			return err
		}
		if err := checkResource(ctx, q, orgID, in.ResourceID); err != nil {
			return err
		}
		row, err := q.SupportCaseInsert(ctx, dbq.SupportCaseInsertParams{
			ID: id, OrganizationID: orgID, ProductID: in.ProductID, ResourceID: in.ResourceID,
			Severity: in.Severity, Category: in.Category, AssignedTeam: &team,
			Subject: &in.Subject, Description: &in.Description, RequestID: in.RequestID,
			Environment: in.Environment, Diagnostics: diagnostics,
		})
		if err != nil {
			return err
		}
		created = supportCaseFromRow(row)
		if err := audit(ctx, q, core.AuditEntry{
			OrganizationID: &orgID, Action: "support_case.opened", ResourceType: "support_case",
			ResourceID: id.String(), After: created,
		}); err != nil {
			return err
		}
		return s.db.publish(ctx, q, orgID, core.EventSupportCaseOpened, created)
	})
	return created, err
}

// checkProduct refuses a product_id that names no catalogue product (EUnprocessable).
func checkProduct(ctx context.Context, q *dbq.Queries, productID *string) error {
	if productID == nil {
		return nil
	}
	known, err := q.SupportCaseProductKnown(ctx, *productID)
	if err != nil {
		return err
	}
	if !known {
		return unprocessablef("/product_id", "Product %q is not in the catalogue; name a product by id or code (einvoice, address, platform).", *productID)
	}
	return nil
}

// checkResource refuses a resource_id that is not the id of a resource of organization
// orgID (EUnprocessable), exactly as for one that does not exist: its API keys, service
// resources, subscriptions, billing invoices, connected businesses or tax invoices.
func checkResource(ctx context.Context, q *dbq.Queries, orgID uuid.UUID, resourceID *string) error {
	if resourceID == nil {
		return nil
	}
	bad := unprocessablef("/resource_id", "Resource %q does not exist in this organization.", *resourceID)
	id, err := uuid.Parse(*resourceID)
	if err != nil {
		return bad
	}
	owned, err := q.SupportCaseResourceOwned(ctx, dbq.SupportCaseResourceOwnedParams{ResourceID: id, OwnerID: orgID})
	if err != nil {
		return err
	}
	if owned == nil || !*owned {
		return bad
	}
	return nil
}

// ListSupportCases implements core.SupportCaseService.
func (s *SupportCaseService) ListSupportCases(ctx context.Context, f core.SupportCaseFilter) ([]*core.SupportCase, *string, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, nil, err
	}
	orgID := f.OrganizationID
	if err := p.ActsFor(orgID, "organization_id"); err != nil {
		return nil, nil, err
	}
	after, err := afterCursor(f.Cursor)
	if err != nil {
		return nil, nil, err
	}
	var rows []dbq.SupportCase
	if f.Status != nil {
		rows, err = s.db.queries(ctx).SupportCaseListByStatus(ctx, dbq.SupportCaseListByStatusParams{
			OrganizationID: orgID, Status: *f.Status, After: orLeast(after), RowLimit: int32(f.Limit) + 1,
		})
	} else {
		rows, err = s.db.queries(ctx).SupportCaseList(ctx, dbq.SupportCaseListParams{
			OrganizationID: orgID, After: after, RowLimit: int32(f.Limit) + 1,
		})
	}
	if err != nil {
		return nil, nil, translate(err)
	}
	cases := make([]*core.SupportCase, len(rows))
	for i, r := range rows {
		cases[i] = supportCaseFromRow(r)
	}
	cases, next := page(cases, f.Limit, func(c *core.SupportCase) uuid.UUID { return c.ID })
	return cases, next, nil
}

// FindSupportCaseByID implements core.SupportCaseService.
func (s *SupportCaseService) FindSupportCaseByID(ctx context.Context, id uuid.UUID) (*core.SupportCase, error) {
	q := s.db.queries(ctx)
	row, err := owned(ctx,
		func(org uuid.UUID) (dbq.SupportCase, error) {
			return q.SupportCaseGetByID(ctx, dbq.SupportCaseGetByIDParams{OrganizationID: org, ID: id})
		},
		func() (dbq.SupportCase, error) { return q.SupportCaseGetByIDAnyOrganization(ctx, id) },
		"Support case", id)
	if err != nil {
		return nil, err
	}
	return supportCaseFromRow(row), nil
}

// CloseSupportCase implements core.SupportCaseService.
func (s *SupportCaseService) CloseSupportCase(ctx context.Context, id uuid.UUID) (*core.SupportCase, error) {
	var closed *core.SupportCase
	err := s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		before, err := lockSupportCase(ctx, q, id)
		if err != nil {
			return err
		}
		after := *before
		if err := after.Close(now()); err != nil {
			return err
		}
		closed, err = s.storeCaseChange(ctx, q, before, &after, core.EventSupportCaseClosed)
		return err
	})
	return closed, err
}

// UpdateSupportCase implements core.SupportCaseService.
func (s *SupportCaseService) UpdateSupportCase(ctx context.Context, id uuid.UUID, u core.SupportCaseUpdate) (*core.SupportCase, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if !p.IsOperator() {
		// Refused before any read: an organization learns nothing of any case, nor locks one.
		return nil, core.Errorf(core.EForbidden,
			"Only the operator moves support cases along the workflow; an organization adds messages to its case or closes it.")
	}
	var updated *core.SupportCase
	err = s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		before, err := lockSupportCase(ctx, q, id)
		if err != nil {
			return err
		}
		after := *before
		changed, err := after.Apply(u, now())
		switch {
		case err != nil:
			return err
		case !changed:
			updated = before
			return nil
		case after.Status == core.SupportCaseClosed:
			updated, err = s.storeCaseChange(ctx, q, before, &after, core.EventSupportCaseClosed)
		default:
			updated, err = s.storeCaseChange(ctx, q, before, &after, core.EventSupportCaseUpdated)
		}
		return err
	})
	return updated, err
}

// CreateSupportCaseMessage implements core.SupportCaseService.
func (s *SupportCaseService) CreateSupportCaseMessage(ctx context.Context, caseID uuid.UUID, body string) (*core.SupportCaseMessage, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := storableText(map[string]*string{"/body": &body}, nil); err != nil {
		return nil, err
	}
	var created *core.SupportCaseMessage
	err = s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		// The lock orders the case's messages and keeps a closing from passing one.
		c, err := lockSupportCase(ctx, q, caseID)
		if err != nil {
			return err
		}
		if err := c.CheckMessage(); err != nil {
			return err
		}
		id, err := uuid.NewV7()
		if err != nil {
			return err
		}
		at := now()
		row, err := q.SupportCaseMessageInsert(ctx, dbq.SupportCaseMessageInsertParams{
			ID: id, OrganizationID: c.OrganizationID, SupportCaseID: c.ID, Author: core.SupportAuthorOf(p), Body: body, CreatedAt: at,
		})
		if err != nil {
			return err
		}
		created = supportCaseMessageFromRow(row)
		if err := audit(ctx, q, core.AuditEntry{
			OrganizationID: &c.OrganizationID, Action: string(core.EventSupportCaseMessageCreated), ResourceType: "support_case",
			ResourceID: c.ID.String(), After: created,
		}); err != nil {
			return err
		}
		if err := s.db.publish(ctx, q, c.OrganizationID, core.EventSupportCaseMessageCreated, created); err != nil {
			return err
		}
		if created.Author != core.SupportAuthorCustomer {
			return nil
		}
		answered := *c
		if !answered.AnswerFromCustomer(at) {
			return nil
		}
		_, err = s.storeCaseChange(ctx, q, c, &answered, core.EventSupportCaseUpdated)
		return err
	})
	return created, err
}

// ListSupportCaseMessages implements core.SupportCaseService.
func (s *SupportCaseService) ListSupportCaseMessages(ctx context.Context, f core.SupportCaseMessageFilter) ([]*core.SupportCaseMessage, *string, error) {
	c, err := s.FindSupportCaseByID(ctx, f.SupportCaseID)
	if err != nil {
		return nil, nil, err
	}
	after, err := afterCursor(f.Cursor)
	if err != nil {
		return nil, nil, err
	}
	rows, err := s.db.queries(ctx).SupportCaseMessageList(ctx, dbq.SupportCaseMessageListParams{
		OrganizationID: c.OrganizationID, SupportCaseID: c.ID, After: after, RowLimit: int32(f.Limit) + 1,
	})
	if err != nil {
		return nil, nil, translate(err)
	}
	messages := make([]*core.SupportCaseMessage, len(rows))
	for i, r := range rows {
		messages[i] = supportCaseMessageFromRow(r)
	}
	messages, next := page(messages, f.Limit, func(m *core.SupportCaseMessage) uuid.UUID { return m.ID })
	return messages, next, nil
}

// lockSupportCase locks case id of the caller (of any organization, for the operator) until
// the transaction ends; another organization's case is ENotFound and is not locked.
func lockSupportCase(ctx context.Context, q *dbq.Queries, id uuid.UUID) (*core.SupportCase, error) {
	row, err := owned(ctx,
		func(org uuid.UUID) (dbq.SupportCase, error) {
			return q.SupportCaseGetByIDForUpdate(ctx, dbq.SupportCaseGetByIDForUpdateParams{OrganizationID: org, ID: id})
		},
		func() (dbq.SupportCase, error) { return q.SupportCaseGetByIDForUpdateAnyOrganization(ctx, id) },
		"Support case", id)
	if err != nil {
		return nil, err
	}
	return supportCaseFromRow(row), nil
}

// storeCaseChange stores the workflow state of after, a change of the locked case before,
// audits it under the action named like event and publishes event with the stored case.
func (s *SupportCaseService) storeCaseChange(ctx context.Context, q *dbq.Queries, before, after *core.SupportCase, event core.EventType) (*core.SupportCase, error) {
	row, err := q.SupportCaseUpdateState(ctx, dbq.SupportCaseUpdateStateParams{
		OrganizationID: before.OrganizationID, ID: before.ID,
		Status: after.Status, AssignedTeam: after.AssignedTeam, ResolvedAt: after.ResolvedAt, UpdatedAt: after.UpdatedAt,
	})
	if err != nil {
		return nil, err
	}
	stored := supportCaseFromRow(row)
	if err := audit(ctx, q, core.AuditEntry{
		OrganizationID: &stored.OrganizationID, Action: string(event), ResourceType: "support_case",
		ResourceID: stored.ID.String(), Before: before, After: stored,
	}); err != nil {
		return nil, err
	}
	return stored, s.db.publish(ctx, q, stored.OrganizationID, event, stored)
}

func supportCaseFromRow(r dbq.SupportCase) *core.SupportCase {
	return &core.SupportCase{
		ID: r.ID, OrganizationID: r.OrganizationID, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		ProductID: r.ProductID, ResourceID: r.ResourceID, Severity: r.Severity, Category: r.Category,
		Status: r.Status, AssignedTeam: r.AssignedTeam, OpenedAt: r.OpenedAt, ResolvedAt: r.ResolvedAt,
		Subject: r.Subject, Description: r.Description, RequestID: r.RequestID, Environment: r.Environment,
		Diagnostics: r.Diagnostics,
	}
}

func supportCaseMessageFromRow(r dbq.SupportCaseMessage) *core.SupportCaseMessage {
	return &core.SupportCaseMessage{
		ID: r.ID, OrganizationID: r.OrganizationID, SupportCaseID: r.SupportCaseID, Author: r.Author, Body: r.Body, CreatedAt: r.CreatedAt,
	}
}
