package httpapi

import (
	"context"
	"time"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/core"
)

// CreateWebhookEndpoint implements POST /v1/webhook-endpoints.
func (s *Server) CreateWebhookEndpoint(ctx context.Context, req api.CreateWebhookEndpointRequestObject) (api.CreateWebhookEndpointResponseObject, error) {
	b := req.Body
	org, err := organizationNamed(ctx, b.OrganizationId, "/organization_id")
	if err != nil {
		return nil, err
	}
	e, err := s.cfg.Services.Webhooks.CreateWebhookEndpoint(ctx, core.WebhookEndpointCreate{
		OrganizationID: org,
		URL:            b.Url,
		EnabledEvents:  eventTypeNames(b.EnabledEvents),
		Description:    valueOf(b.Description),
	})
	if err != nil {
		return nil, err
	}
	a := toAPIWebhookEndpoint(&e.WebhookEndpoint)
	return api.CreateWebhookEndpoint201JSONResponse{Body: api.WebhookEndpointWithSecret{
		Id: a.Id, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt, OrganizationId: a.OrganizationId,
		Url: a.Url, Description: a.Description, EnabledEvents: a.EnabledEvents,
		Status: a.Status, DisabledReason: a.DisabledReason, Secret: e.Secret,
	}}, nil
}

// ListWebhookEndpoints implements GET /v1/webhook-endpoints.
func (s *Server) ListWebhookEndpoints(ctx context.Context, req api.ListWebhookEndpointsRequestObject) (api.ListWebhookEndpointsResponseObject, error) {
	org, err := organizationParam(ctx, req.Params.OrganizationId)
	if err != nil {
		return nil, err
	}
	endpoints, next, err := s.cfg.Services.Webhooks.ListWebhookEndpoints(ctx, core.WebhookEndpointFilter{
		OrganizationID: org,
		Cursor:         req.Params.Cursor,
		Limit:          valueOr(req.Params.Limit, defaultLimit),
	})
	if err != nil {
		return nil, err
	}
	items := make([]api.WebhookEndpoint, len(endpoints))
	for i, e := range endpoints {
		items[i] = toAPIWebhookEndpoint(e)
	}
	return api.ListWebhookEndpoints200JSONResponse{Body: api.WebhookEndpointList{Items: items, NextCursor: nullableFrom(next)}}, nil
}

// GetWebhookEndpoint implements GET /v1/webhook-endpoints/{id}.
func (s *Server) GetWebhookEndpoint(ctx context.Context, req api.GetWebhookEndpointRequestObject) (api.GetWebhookEndpointResponseObject, error) {
	e, err := s.cfg.Services.Webhooks.FindWebhookEndpointByID(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.GetWebhookEndpoint200JSONResponse{Body: toAPIWebhookEndpoint(e)}, nil
}

// DeleteWebhookEndpoint implements DELETE /v1/webhook-endpoints/{id}.
func (s *Server) DeleteWebhookEndpoint(ctx context.Context, req api.DeleteWebhookEndpointRequestObject) (api.DeleteWebhookEndpointResponseObject, error) {
	if err := s.cfg.Services.Webhooks.DeleteWebhookEndpoint(ctx, req.Id); err != nil {
		return nil, err
	}
	return api.DeleteWebhookEndpoint204Response{}, nil
}

// SendWebhookEndpointTest implements POST /v1/webhook-endpoints/{id}/test.
func (s *Server) SendWebhookEndpointTest(ctx context.Context, req api.SendWebhookEndpointTestRequestObject) (api.SendWebhookEndpointTestResponseObject, error) {
	test, err := s.cfg.Services.Webhooks.SendWebhookTest(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.SendWebhookEndpointTest202JSONResponse{Body: api.WebhookTestResult{
		EventId: test.EventID, WebhookEndpointId: test.EndpointID,
		Type: api.WebhookEventType(test.Type), Status: api.WebhookTestStatusQueued,
	}}, nil
}

// UpdateWebhookEndpoint implements PATCH /v1/webhook-endpoints/{id}.
func (s *Server) UpdateWebhookEndpoint(ctx context.Context, req api.UpdateWebhookEndpointRequestObject) (api.UpdateWebhookEndpointResponseObject, error) {
	b := req.Body
	in := core.WebhookEndpointUpdate{
		URL:         presentField(b.Url),
		Description: patchField(b.Description),
		Status:      presentField(b.Status),
	}
	if b.EnabledEvents != nil {
		events := eventTypeNames(*b.EnabledEvents)
		in.EnabledEvents = core.Field[[]string]{Set: true, Value: &events}
	}
	e, err := s.cfg.Services.Webhooks.UpdateWebhookEndpoint(ctx, req.Id, in)
	if err != nil {
		return nil, err
	}
	return api.UpdateWebhookEndpoint200JSONResponse{Body: toAPIWebhookEndpoint(e)}, nil
}

// RotateWebhookEndpointSecret implements POST /v1/webhook-endpoints/{id}/rotate-secret.
func (s *Server) RotateWebhookEndpointSecret(ctx context.Context, req api.RotateWebhookEndpointSecretRequestObject) (api.RotateWebhookEndpointSecretResponseObject, error) {
	grace := core.DefaultWebhookSecretGrace
	if req.Body != nil && req.Body.GracePeriodSeconds != nil {
		grace = time.Duration(*req.Body.GracePeriodSeconds) * time.Second
	}
	r, err := s.cfg.Services.Webhooks.RotateWebhookSecret(ctx, req.Id, grace)
	if err != nil {
		return nil, err
	}
	return api.RotateWebhookEndpointSecret200JSONResponse{Body: api.WebhookSecretRotation{
		WebhookEndpointId: r.EndpointID, Secret: r.Secret, PreviousSecretExpiresAt: nullableFrom(r.PreviousSecretExpiresAt),
	}}, nil
}

// eventTypeNames are the names of the event types of a request.
func eventTypeNames(types []api.WebhookEventType) []string {
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = string(t)
	}
	return names
}

func toAPIWebhookEndpoint(e *core.WebhookEndpoint) api.WebhookEndpoint {
	events := make([]api.WebhookEventType, len(e.EnabledEvents))
	for i, ev := range e.EnabledEvents {
		events[i] = api.WebhookEventType(ev)
	}
	return api.WebhookEndpoint{
		Id: e.ID, CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt, OrganizationId: e.OrganizationID.String(),
		Url: e.URL, Description: nullableFrom(e.Description), EnabledEvents: events,
		Status: api.WebhookEndpointStatus(e.Status), DisabledReason: nullableFrom(e.DisabledReason),
	}
}
