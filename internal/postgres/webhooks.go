package postgres

import (
	"context"

	"github.com/google/uuid"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/secretbox"
	"github.com/provider/coreapi/internal/webhook"
	"github.com/provider/coreapi/internal/webhook/signature"
)

// WebhookService implements core.WebhookService. Endpoint secrets are sealed with box: the
// delivery workers must read them back to sign.
type WebhookService struct {
	db     *DB
	box    *secretbox.Box
	policy webhook.Policy
}

var _ core.WebhookService = (*WebhookService)(nil)

// NewWebhookService returns the webhook endpoint service over d; policy decides which URLs
// may be registered.
func NewWebhookService(d *DB, box *secretbox.Box, policy webhook.Policy) *WebhookService {
	return &WebhookService{db: d, box: box, policy: policy}
}

// CreateWebhookEndpoint implements core.WebhookService.
func (s *WebhookService) CreateWebhookEndpoint(ctx context.Context, in core.WebhookEndpointCreate) (*core.NewWebhookEndpoint, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	orgID := in.OrganizationID
	if err := p.ActsFor(orgID, "/organization_id"); err != nil {
		return nil, err
	}
	if err := s.checkURL(ctx, in.URL); err != nil {
		return nil, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	secret := signature.NewSecret()
	var created *core.NewWebhookEndpoint
	err = s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		if _, err := q.OrganizationGetByID(ctx, orgID); err != nil {
			return notFoundAs(err, "Organization %s does not exist.", in.OrganizationID)
		}
		if err := s.db.organizationWithinQuota(ctx, q, orgID, core.QuotaWebhookEndpoints); err != nil {
			return err
		}
		row, err := q.WebhookEndpointInsert(ctx, dbq.WebhookEndpointInsertParams{
			ID: id, OrganizationID: orgID, Url: in.URL, Description: in.Description,
			EnabledEvents: in.EnabledEvents, Secret: s.box.Seal([]byte(secret), id[:]),
		})
		if err != nil {
			return err
		}
		created = &core.NewWebhookEndpoint{WebhookEndpoint: *webhookEndpointFromRow(row), Secret: secret}
		return audit(ctx, q, core.AuditEntry{
			OrganizationID: &orgID, Action: "webhook_endpoint.created", ResourceType: "webhook_endpoint",
			ResourceID: id.String(), After: created.WebhookEndpoint,
		})
	})
	if err != nil {
		return nil, err
	}
	return created, nil
}

// ListWebhookEndpoints implements core.WebhookService.
func (s *WebhookService) ListWebhookEndpoints(ctx context.Context, f core.WebhookEndpointFilter) ([]*core.WebhookEndpoint, *string, error) {
	org, after, err := listScope(ctx, f.OrganizationID, f.Cursor)
	if err != nil {
		return nil, nil, err
	}
	var rows []dbq.WebhookEndpoint
	if org != nil {
		rows, err = s.db.queries(ctx).WebhookEndpointList(ctx, dbq.WebhookEndpointListParams{
			OrganizationID: *org, After: after, RowLimit: int32(f.Limit) + 1,
		})
	} else {
		rows, err = s.db.queries(ctx).WebhookEndpointListAnyOrganization(ctx, dbq.WebhookEndpointListAnyOrganizationParams{
			After: after, RowLimit: int32(f.Limit) + 1,
		})
	}
	if err != nil {
		return nil, nil, translate(err)
	}
	endpoints := make([]*core.WebhookEndpoint, len(rows))
	for i, r := range rows {
		endpoints[i] = webhookEndpointFromRow(r)
	}
	endpoints, next := page(endpoints, f.Limit, func(e *core.WebhookEndpoint) uuid.UUID { return e.ID })
	return endpoints, next, nil
}

// FindWebhookEndpointByID implements core.WebhookService.
func (s *WebhookService) FindWebhookEndpointByID(ctx context.Context, id uuid.UUID) (*core.WebhookEndpoint, error) {
	row, err := visibleEndpoint(ctx, s.db.queries(ctx), id)
	if err != nil {
		return nil, err
	}
	return webhookEndpointFromRow(row), nil
}

// DeleteWebhookEndpoint implements core.WebhookService. Its deliveries go with it (ON DELETE
// CASCADE); an attempt in flight at that moment finds its delivery gone and records nothing.
func (s *WebhookService) DeleteWebhookEndpoint(ctx context.Context, id uuid.UUID) error {
	return s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		endpoint, err := visibleEndpoint(ctx, q, id)
		if err != nil {
			return err
		}
		row, err := q.WebhookEndpointDelete(ctx, dbq.WebhookEndpointDeleteParams{OrganizationID: endpoint.OrganizationID, ID: id})
		if err != nil {
			return notFoundAs(err, "Webhook endpoint %s does not exist.", id)
		}
		return audit(ctx, q, core.AuditEntry{
			OrganizationID: &row.OrganizationID, Action: "webhook_endpoint.deleted", ResourceType: "webhook_endpoint",
			ResourceID: id.String(), Before: webhookEndpointFromRow(row),
		})
	})
}

// testEventMessage is the message of every webhook_endpoint.test event.
const testEventMessage = "This is a test event; it changes nothing."

// SendWebhookTest implements core.WebhookService.
func (s *WebhookService) SendWebhookTest(ctx context.Context, id uuid.UUID) (*core.WebhookTest, error) {
	var test *core.WebhookTest
	err := s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		row, err := visibleEndpoint(ctx, q, id)
		if err != nil {
			return err
		}
		if row.Status != core.WebhookEndpointEnabled {
			return core.Errorf(core.EInvalidTransition, "Webhook endpoint %s is disabled; register a new endpoint to receive events again.", id)
		}
		eventID, err := s.db.storeEvent(ctx, q, row.OrganizationID, core.EventWebhookEndpointTest,
			&core.WebhookTestEvent{EndpointID: id, Message: testEventMessage})
		if err != nil {
			return err
		}
		if err := s.db.insertWebhookDelivery(ctx, q, row.OrganizationID, eventID, id); err != nil {
			return err
		}
		test = &core.WebhookTest{EventID: eventID, EndpointID: id, Type: core.EventWebhookEndpointTest}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return test, nil
}

// visibleEndpoint reads an endpoint the caller may see, or answers ENotFound.
func visibleEndpoint(ctx context.Context, q *dbq.Queries, id uuid.UUID) (dbq.WebhookEndpoint, error) {
	return owned(ctx,
		func(org uuid.UUID) (dbq.WebhookEndpoint, error) {
			return q.WebhookEndpointGetByID(ctx, dbq.WebhookEndpointGetByIDParams{OrganizationID: org, ID: id})
		},
		func() (dbq.WebhookEndpoint, error) { return q.WebhookEndpointGetByIDAnyOrganization(ctx, id) },
		"Webhook endpoint", id)
}

func webhookEndpointFromRow(r dbq.WebhookEndpoint) *core.WebhookEndpoint {
	return &core.WebhookEndpoint{
		ID: r.ID, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, OrganizationID: r.OrganizationID,
		URL: r.Url, Description: r.Description, EnabledEvents: r.EnabledEvents,
		Status: r.Status, DisabledReason: r.DisabledReason,
	}
}
