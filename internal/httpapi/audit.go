package httpapi

import (
	"context"
	"encoding/json"

	"github.com/oapi-codegen/nullable"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/core"
)

// ListAuditEvents implements GET /v1/audit-events.
func (s *Server) ListAuditEvents(ctx context.Context, req api.ListAuditEventsRequestObject) (api.ListAuditEventsResponseObject, error) {
	p := req.Params
	org, err := organizationParam(ctx, p.OrganizationId)
	if err != nil {
		return nil, err
	}
	f := core.AuditFilter{
		OrganizationID: org, ResourceID: p.ResourceId, Action: p.Action,
		Since: p.Since, Until: p.Until, Cursor: p.Cursor, Limit: valueOr(p.Limit, defaultLimit),
	}
	if p.ResourceType != nil {
		rt := string(*p.ResourceType)
		f.ResourceType = &rt
	}
	events, next, err := s.cfg.Services.Audit.ListAuditEvents(ctx, f)
	if err != nil {
		return nil, err
	}
	items := make([]api.AuditEvent, len(events))
	for i, e := range events {
		items[i] = api.AuditEvent{
			Id: e.ID, OccurredAt: e.OccurredAt, Action: e.Action, ResourceId: e.ResourceID,
			ResourceType:   api.AuditResourceType(e.ResourceType),
			OrganizationId: nullableFrom(stringOf(e.OrganizationID)),
			RequestId:      nullableFrom(e.RequestID),
			Actor: api.AuditActor{
				Type: api.PrincipalType(e.ActorType), Id: nullableFrom(e.ActorID), KeyPrefix: nullableFrom(e.ActorKeyPrefix),
			},
			Before: jsonObject(e.Before),
			After:  jsonObject(e.After),
		}
	}
	return api.ListAuditEvents200JSONResponse{Body: api.AuditEventList{Items: items, NextCursor: nullableFrom(next)}}, nil
}

// jsonObject decodes a stored JSON object for a response, null when there is none.
func jsonObject(raw json.RawMessage) nullable.Nullable[map[string]any] {
	var m map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil || m == nil {
		return null[map[string]any]()
	}
	return nullable.NewNullableWithValue(m)
}

func stringOf[T interface{ String() string }](v *T) *string {
	if v == nil {
		return nil
	}
	s := (*v).String()
	return &s
}
