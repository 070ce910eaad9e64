package httpapi

import (
	"context"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/core"
)

// OpenProductIncident implements POST /v1/products/{id}/incidents.
func (s *Server) OpenProductIncident(ctx context.Context, req api.OpenProductIncidentRequestObject) (api.OpenProductIncidentResponseObject, error) {
	inc, err := s.cfg.Services.Incidents.OpenIncident(ctx, req.Id, req.Body.Summary)
	if err != nil {
		return nil, err
	}
	return api.OpenProductIncident201JSONResponse{Body: toAPIIncident(inc)}, nil
}

// ResolveProductIncident implements POST /v1/products/{id}/incidents/{incident_id}/resolve.
func (s *Server) ResolveProductIncident(ctx context.Context, req api.ResolveProductIncidentRequestObject) (api.ResolveProductIncidentResponseObject, error) {
	inc, err := s.cfg.Services.Incidents.ResolveIncident(ctx, req.Id, req.IncidentId)
	if err != nil {
		return nil, err
	}
	return api.ResolveProductIncident200JSONResponse{Body: toAPIIncident(inc)}, nil
}

// GetProductIncident implements GET /v1/products/{id}/incidents/{incident_id}.
func (s *Server) GetProductIncident(ctx context.Context, req api.GetProductIncidentRequestObject) (api.GetProductIncidentResponseObject, error) {
	inc, err := s.cfg.Services.Incidents.FindIncident(ctx, req.Id, req.IncidentId)
	if err != nil {
		return nil, err
	}
	return api.GetProductIncident200JSONResponse{Body: toAPIIncident(inc)}, nil
}

// ListProductIncidents implements GET /v1/products/{id}/incidents.
func (s *Server) ListProductIncidents(ctx context.Context, req api.ListProductIncidentsRequestObject) (api.ListProductIncidentsResponseObject, error) {
	f := core.IncidentFilter{Cursor: req.Params.Cursor, Limit: valueOr(req.Params.Limit, defaultLimit)}
	if req.Params.Status != nil {
		f.Status = string(*req.Params.Status)
	}
	page, err := s.cfg.Services.Incidents.ListIncidents(ctx, req.Id, f)
	if err != nil {
		return nil, err
	}
	items := make([]api.ProductIncident, len(page.Items))
	for i, inc := range page.Items {
		items[i] = toAPIIncident(inc)
	}
	return api.ListProductIncidents200JSONResponse{Body: api.ProductIncidentList{Items: items, NextCursor: nullableFrom(page.NextCursor)}}, nil
}

func toAPIIncident(i *core.Incident) api.ProductIncident {
	return api.ProductIncident{
		Id:         i.ID,
		CreatedAt:  i.CreatedAt,
		UpdatedAt:  i.UpdatedAt,
		ProductId:  i.ProductID,
		Summary:    i.Summary,
		Status:     api.ProductIncidentStatus(i.Status),
		OpenedAt:   i.OpenedAt,
		ResolvedAt: nullableFrom(i.ResolvedAt),
	}
}
