package httpapi

import (
	"context"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/core"
)

// ListEvents implements GET /v1/events.
func (s *Server) ListEvents(ctx context.Context, req api.ListEventsRequestObject) (api.ListEventsResponseObject, error) {
	p := req.Params
	org, err := organizationParam(ctx, p.OrganizationId)
	if err != nil {
		return nil, err
	}
	events, next, err := s.cfg.Services.WebhookDeliveries.ListEvents(ctx, core.WebhookEventFilter{
		OrganizationID: org, Type: (*string)(p.Type), CreatedAfter: p.Since, CreatedBefore: p.Until,
		Cursor: p.Cursor, Limit: valueOr(p.Limit, defaultLimit),
	})
	if err != nil {
		return nil, err
	}
	items := make([]api.WebhookEvent, len(events))
	for i, e := range events {
		if items[i], err = toAPIWebhookEvent(e); err != nil {
			return nil, err
		}
	}
	return api.ListEvents200JSONResponse{Body: api.EventList{Items: items, NextCursor: nullableFrom(next)}}, nil
}

// GetEvent implements GET /v1/events/{id}.
func (s *Server) GetEvent(ctx context.Context, req api.GetEventRequestObject) (api.GetEventResponseObject, error) {
	e, err := s.cfg.Services.WebhookDeliveries.FindEventByID(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	body, err := toAPIWebhookEvent(e)
	if err != nil {
		return nil, err
	}
	return api.GetEvent200JSONResponse{Body: body}, nil
}

// ListWebhookDeliveries implements GET /v1/webhook-endpoints/{id}/deliveries.
func (s *Server) ListWebhookDeliveries(ctx context.Context, req api.ListWebhookDeliveriesRequestObject) (api.ListWebhookDeliveriesResponseObject, error) {
	p := req.Params
	deliveries, next, err := s.cfg.Services.WebhookDeliveries.ListDeliveries(ctx, core.WebhookDeliveryFilter{
		EndpointID: req.Id, Status: (*string)(p.Status), EventType: (*string)(p.EventType),
		Cursor: p.Cursor, Limit: valueOr(p.Limit, defaultLimit),
	})
	if err != nil {
		return nil, err
	}
	items := make([]api.WebhookDelivery, len(deliveries))
	for i, d := range deliveries {
		items[i] = toAPIWebhookDelivery(d)
	}
	return api.ListWebhookDeliveries200JSONResponse{Body: api.WebhookDeliveryList{Items: items, NextCursor: nullableFrom(next)}}, nil
}

// ResendWebhookDelivery implements POST /v1/webhook-endpoints/{id}/deliveries/{delivery_id}/resend.
func (s *Server) ResendWebhookDelivery(ctx context.Context, req api.ResendWebhookDeliveryRequestObject) (api.ResendWebhookDeliveryResponseObject, error) {
	n, err := s.cfg.Services.WebhookDeliveries.ResendDelivery(ctx, req.Id, req.DeliveryId)
	if err != nil {
		return nil, err
	}
	return api.ResendWebhookDelivery202JSONResponse{Body: api.WebhookDeliveriesQueued{Queued: n}}, nil
}

// RecoverWebhookDeliveries implements POST /v1/webhook-endpoints/{id}/recover.
func (s *Server) RecoverWebhookDeliveries(ctx context.Context, req api.RecoverWebhookDeliveriesRequestObject) (api.RecoverWebhookDeliveriesResponseObject, error) {
	n, err := s.cfg.Services.WebhookDeliveries.RecoverDeliveries(ctx, req.Id, req.Body.Since)
	if err != nil {
		return nil, err
	}
	return api.RecoverWebhookDeliveries202JSONResponse{Body: api.WebhookDeliveriesQueued{Queued: n}}, nil
}

// toAPIWebhookEvent is a stored event as its deliveries carry it: its data was rendered by
// the API's converters when it was published.
func toAPIWebhookEvent(e *core.WebhookEventRecord) (api.WebhookEvent, error) {
	out := api.WebhookEvent{Id: e.ID, Type: api.WebhookEventType(e.Type), CreatedAt: e.CreatedAt, OrganizationId: e.OrganizationID.String()}
	err := out.Data.UnmarshalJSON(e.Data)
	return out, err
}

func toAPIWebhookDelivery(d *core.WebhookDelivery) api.WebhookDelivery {
	attempts := make([]api.WebhookDeliveryAttempt, len(d.Attempts))
	for i, a := range d.Attempts {
		attempts[i] = api.WebhookDeliveryAttempt{
			Attempt: a.Attempt, AttemptedAt: a.AttemptedAt, Succeeded: a.Succeeded, ResponseStatus: nullableFrom(a.StatusCode),
			DurationMs: a.DurationMs, ResponseBodyPrefix: nullableFrom(a.ResponseBody), Error: nullableFrom(a.Error),
		}
	}
	return api.WebhookDelivery{
		Id: d.ID, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt, WebhookEndpointId: d.EndpointID, EventId: d.EventID,
		EventType: api.WebhookEventType(d.EventType), Status: api.WebhookDeliveryStatus(d.Status), AttemptCount: d.AttemptCount,
		NextAttemptAt: nullableFrom(d.NextAttemptAt), LastError: nullableFrom(d.LastError), CompletedAt: nullableFrom(d.CompletedAt),
		Attempts: attempts,
	}
}
