package httpapi

import (
	"context"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/core"
)

// CreateTestClock implements POST /v1/test-clocks.
func (s *Server) CreateTestClock(ctx context.Context, req api.CreateTestClockRequestObject) (api.CreateTestClockResponseObject, error) {
	org, err := organizationNamed(ctx, req.Body.OrganizationId, "/organization_id")
	if err != nil {
		return nil, err
	}
	clock, err := s.cfg.Services.TestClocks.CreateTestClock(ctx, org, req.Body.FrozenTime)
	if err != nil {
		return nil, err
	}
	return api.CreateTestClock201JSONResponse{Body: toAPITestClock(clock)}, nil
}

// GetTestClock implements GET /v1/test-clocks/{id}.
func (s *Server) GetTestClock(ctx context.Context, req api.GetTestClockRequestObject) (api.GetTestClockResponseObject, error) {
	clock, err := s.cfg.Services.TestClocks.FindTestClockByID(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.GetTestClock200JSONResponse{Body: toAPITestClock(clock)}, nil
}

// AdvanceTestClock implements POST /v1/test-clocks/{id}/advance.
func (s *Server) AdvanceTestClock(ctx context.Context, req api.AdvanceTestClockRequestObject) (api.AdvanceTestClockResponseObject, error) {
	clock, err := s.cfg.Services.TestClocks.AdvanceTestClock(ctx, req.Id, req.Body.FrozenTime)
	if err != nil {
		return nil, err
	}
	return api.AdvanceTestClock200JSONResponse{Body: toAPITestClock(clock)}, nil
}

func toAPITestClock(c *core.TestClock) api.TestClock {
	return api.TestClock{
		Id:             c.ID,
		CreatedAt:      c.CreatedAt,
		UpdatedAt:      c.UpdatedAt,
		OrganizationId: c.OrganizationID.String(),
		FrozenTime:     c.FrozenTime,
	}
}
