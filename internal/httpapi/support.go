package httpapi

import (
	"bytes"
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
	return answerCase(c, err, func(body api.SupportCase) api.CreateSupportCaseResponseObject {
		return api.CreateSupportCase201JSONResponse{Body: body}
	})
}

// ListSupportCases implements GET /v1/support-cases.
func (s *Server) ListSupportCases(ctx context.Context, req api.ListSupportCasesRequestObject) (api.ListSupportCasesResponseObject, error) {
	org, err := core.OrganizationIn(ctx, req.Params.OrganizationId, "organization_id")
	if err != nil {
		return nil, err
	}
	cases, next, err := s.cfg.Services.SupportCases.ListSupportCases(ctx, core.SupportCaseFilter{
		OrganizationID: org,
		Status:         enumString(req.Params.Status),
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
	return answerCase(c, err, func(body api.SupportCase) api.GetSupportCaseResponseObject {
		return api.GetSupportCase200JSONResponse{Body: body}
	})
}

// CloseSupportCase implements POST /v1/support-cases/{id}/close.
func (s *Server) CloseSupportCase(ctx context.Context, req api.CloseSupportCaseRequestObject) (api.CloseSupportCaseResponseObject, error) {
	c, err := s.cfg.Services.SupportCases.CloseSupportCase(ctx, req.Id)
	return answerCase(c, err, func(body api.SupportCase) api.CloseSupportCaseResponseObject {
		return api.CloseSupportCase200JSONResponse{Body: body}
	})
}

// UpdateSupportCase implements PATCH /v1/support-cases/{id}.
func (s *Server) UpdateSupportCase(ctx context.Context, req api.UpdateSupportCaseRequestObject) (api.UpdateSupportCaseResponseObject, error) {
	b := req.Body
	team := patchField(b.AssignedTeam)
	c, err := s.cfg.Services.SupportCases.UpdateSupportCase(ctx, req.Id, core.SupportCaseUpdate{
		Status:       core.Field[string]{Set: b.Status != nil, Value: enumString(b.Status)},
		AssignedTeam: core.Field[string]{Set: team.Set, Value: enumString(team.Value)},
	})
	return answerCase(c, err, func(body api.SupportCase) api.UpdateSupportCaseResponseObject {
		return api.UpdateSupportCase200JSONResponse{Body: body}
	})
}

// CreateSupportCaseMessage implements POST /v1/support-cases/{id}/messages.
func (s *Server) CreateSupportCaseMessage(ctx context.Context, req api.CreateSupportCaseMessageRequestObject) (api.CreateSupportCaseMessageResponseObject, error) {
	m, err := s.cfg.Services.SupportCases.CreateSupportCaseMessage(ctx, req.Id, req.Body.Body)
	if err != nil {
		return nil, err
	}
	return api.CreateSupportCaseMessage201JSONResponse{Body: toAPISupportCaseMessage(m)}, nil
}

// ListSupportCaseMessages implements GET /v1/support-cases/{id}/messages.
func (s *Server) ListSupportCaseMessages(ctx context.Context, req api.ListSupportCaseMessagesRequestObject) (api.ListSupportCaseMessagesResponseObject, error) {
	messages, next, err := s.cfg.Services.SupportCases.ListSupportCaseMessages(ctx, core.SupportCaseMessageFilter{
		SupportCaseID: req.Id,
		Cursor:        req.Params.Cursor,
		Limit:         valueOr(req.Params.Limit, defaultLimit),
	})
	if err != nil {
		return nil, err
	}
	items := make([]api.SupportCaseMessage, len(messages))
	for i, m := range messages {
		items[i] = toAPISupportCaseMessage(m)
	}
	return api.ListSupportCaseMessages200JSONResponse{Body: api.SupportCaseMessageList{Items: items, NextCursor: nullableFrom(next)}}, nil
}

func toAPISupportCaseMessage(m *core.SupportCaseMessage) api.SupportCaseMessage {
	return api.SupportCaseMessage{
		Id: m.ID, SupportCaseId: m.SupportCaseID, Author: api.SupportCaseMessageAuthor(m.Author), Body: m.Body, CreatedAt: m.CreatedAt,
	}
}

// enumString is the string of an optional enum value; nil when absent.
func enumString[T ~string](v *T) *string {
	if v == nil {
		return nil
	}
	s := string(*v)
	return &s
}

// answerCase renders the case a service call returned, or passes its error on; wrap makes
// the operation's response object of the rendering.
func answerCase[R any](c *core.SupportCase, err error, wrap func(api.SupportCase) R) (R, error) {
	var none R
	if err != nil {
		return none, err
	}
	body, err := toAPISupportCase(c)
	if err != nil {
		return none, err
	}
	return wrap(body), nil
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
//
// The values are the generated unions' raw JSON, escapes as the client wrote them, and a lone
// surrogate (\ud800) is no character: jsonb refuses it. Reading the values as every other text
// field is read (U+FFFD in its place) and writing them again keeps such a body storable;
// numbers keep their text.
func flatObject[V any](m *map[string]V) (json.RawMessage, error) {
	if m == nil {
		return nil, nil
	}
	raw, err := json.Marshal(*m)
	if err != nil || !bytes.Contains(raw, []byte(`\ud`)) && !bytes.Contains(raw, []byte(`\uD`)) {
		return raw, err // no escape of a surrogate (\ud800-\udfff): stored as it is
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var values map[string]any
	if err := dec.Decode(&values); err != nil {
		return nil, err
	}
	return json.Marshal(values)
}
