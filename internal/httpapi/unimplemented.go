package httpapi

import (
	"context"

	"github.com/provider/coreapi/gen/api"
)

// The operations below are in the v1 contract but their issues have not landed yet: each
// answers 501 not_implemented. Implementing one means moving it out of this file.

// ListAuditEvents answers 501 until it is implemented.
func (s *Server) ListAuditEvents(context.Context, api.ListAuditEventsRequestObject) (api.ListAuditEventsResponseObject, error) {
	return nil, errNotImplemented("listAuditEvents")
}

// CreateGrowthEvent answers 501 until it is implemented.
func (s *Server) CreateGrowthEvent(context.Context, api.CreateGrowthEventRequestObject) (api.CreateGrowthEventResponseObject, error) {
	return nil, errNotImplemented("createGrowthEvent")
}

// GetGrowthSummary answers 501 until it is implemented.
func (s *Server) GetGrowthSummary(context.Context, api.GetGrowthSummaryRequestObject) (api.GetGrowthSummaryResponseObject, error) {
	return nil, errNotImplemented("getGrowthSummary")
}

// CreateVerifiedLoginOnboarding answers 501 until it is implemented.
func (s *Server) CreateVerifiedLoginOnboarding(context.Context, api.CreateVerifiedLoginOnboardingRequestObject) (api.CreateVerifiedLoginOnboardingResponseObject, error) {
	return nil, errNotImplemented("createVerifiedLoginOnboarding")
}

// ListRequestLogs answers 501 until it is implemented.
func (s *Server) ListRequestLogs(context.Context, api.ListRequestLogsRequestObject) (api.ListRequestLogsResponseObject, error) {
	return nil, errNotImplemented("listRequestLogs")
}

// ListSupportCases answers 501 until it is implemented.
func (s *Server) ListSupportCases(context.Context, api.ListSupportCasesRequestObject) (api.ListSupportCasesResponseObject, error) {
	return nil, errNotImplemented("listSupportCases")
}

// CreateSupportCase answers 501 until it is implemented.
func (s *Server) CreateSupportCase(context.Context, api.CreateSupportCaseRequestObject) (api.CreateSupportCaseResponseObject, error) {
	return nil, errNotImplemented("createSupportCase")
}

// GetSupportCase answers 501 until it is implemented.
func (s *Server) GetSupportCase(context.Context, api.GetSupportCaseRequestObject) (api.GetSupportCaseResponseObject, error) {
	return nil, errNotImplemented("getSupportCase")
}

// CloseSupportCase answers 501 until it is implemented.
func (s *Server) CloseSupportCase(context.Context, api.CloseSupportCaseRequestObject) (api.CloseSupportCaseResponseObject, error) {
	return nil, errNotImplemented("closeSupportCase")
}
