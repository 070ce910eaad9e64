package httpapi

import (
	"context"
	"encoding/json"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/core"
)

// CreateSupportCase implements POST /v1/support-cases.
func (s *Server) CreateSupportCase(ctx context.Context, req api.CreateSupportCaseRequestObject) (api.CreateSupportCaseResponseObject, error) {
	b := req.Body
	diagnostics, err := flatObject(b.Diagnostics)
	if err != nil {
		return nil, err
	}
	org, err := core.OrganizationIn(ctx, b.OrganizationId, "/organization_id")
	if err != nil {
		return nil, err
	}
	c, err := s.cfg.Services.SupportCases.CreateSupportCase(ctx, core.SupportCaseCreate{
		OrganizationID: org,
		Subject:        b.Subject,
		Description:    b.Description,
		Severity:       string(b.Severity),
		Category:       string(b.Category),
		ProductID:      valueOf(b.ProductId),
		ResourceID:     valueOf(b.ResourceId),
		RequestID:      valueOf(b.RequestId),
		Environment:    valueOf(b.Environment),
		Diagnostics:    diagnostics,
	})
	if err != nil {
		return nil, err
	}
	body, err := toAPISupportCase(c)
	if err != nil {
		return nil, err
	}
	return api.CreateSupportCase201JSONResponse{Body: body}, nil
}

// ListSupportCases implements GET /v1/support-cases.
func (s *Server) ListSupportCases(ctx context.Context, req api.ListSupportCasesRequestObject) (api.ListSupportCasesResponseObject, error) {
	var status *string
	if req.Params.Status != nil {
		v := string(*req.Params.Status)
		status = &v
	}
	org, err := core.OrganizationIn(ctx, req.Params.OrganizationId, "organization_id")
	if err != nil {
		return nil, err
	}
	cases, next, err := s.cfg.Services.SupportCases.ListSupportCases(ctx, core.SupportCaseFilter{
		OrganizationID: org,
		Status:         status,
		Cursor:         req.Params.Cursor,
		Limit:          valueOr(req.Params.Limit, defaultLimit),
	})
	if err != nil {
		return nil, err
	}
	items := make([]api.SupportCase, len(cases))
	for i, c := range cases {
		if items[i], err = toAPISupportCase(c); err != nil {
			return nil, err
		}
	}
	return api.ListSupportCases200JSONResponse{Body: api.SupportCaseList{Items: items, NextCursor: nullableFrom(next)}}, nil
}

// GetSupportCase implements GET /v1/support-cases/{id}.
func (s *Server) GetSupportCase(ctx context.Context, req api.GetSupportCaseRequestObject) (api.GetSupportCaseResponseObject, error) {
	c, err := s.cfg.Services.SupportCases.FindSupportCaseByID(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	body, err := toAPISupportCase(c)
	if err != nil {
		return nil, err
	}
	return api.GetSupportCase200JSONResponse{Body: body}, nil
}

// CloseSupportCase implements POST /v1/support-cases/{id}/close.
func (s *Server) CloseSupportCase(ctx context.Context, req api.CloseSupportCaseRequestObject) (api.CloseSupportCaseResponseObject, error) {
	c, err := s.cfg.Services.SupportCases.CloseSupportCase(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	body, err := toAPISupportCase(c)
	if err != nil {
		return nil, err
	}
	return api.CloseSupportCase200JSONResponse{Body: body}, nil
}

func toAPISupportCase(c *core.SupportCase) (api.SupportCase, error) {
	var diagnostics map[string]api.DiagnosticValue
	if err := json.Unmarshal(c.Diagnostics, &diagnostics); err != nil {
		return api.SupportCase{}, err
	}
	var team *api.SupportTeam
	if c.AssignedTeam != nil {
		t := api.SupportTeam(*c.AssignedTeam)
		team = &t
	}
	return api.SupportCase{
		Id:             c.ID,
		CreatedAt:      c.CreatedAt,
		UpdatedAt:      c.UpdatedAt,
		OrganizationId: c.OrganizationID.String(),
		ProductId:      nullableFrom(c.ProductID),
		ResourceId:     nullableFrom(c.ResourceID),
		Severity:       api.SupportCaseSeverity(c.Severity),
		Category:       api.SupportCaseCategory(c.Category),
		Status:         api.SupportCaseStatus(c.Status),
		AssignedTeam:   nullableFrom(team),
		OpenedAt:       c.OpenedAt,
		ResolvedAt:     nullableFrom(c.ResolvedAt),
		Subject:        nullableFrom(c.Subject),
		Description:    nullableFrom(c.Description),
		RequestId:      nullableFrom(c.RequestID),
		Environment:    nullableFrom(c.Environment),
		Diagnostics:    &diagnostics,
	}, nil
}

// flatObject encodes an optional map of flat values (diagnostics, properties) for storage;
// nil when absent. The document has already refused nested values.
func flatObject[V any](m *map[string]V) (json.RawMessage, error) {
	if m == nil {
		return nil, nil
	}
	return json.Marshal(*m)
}
