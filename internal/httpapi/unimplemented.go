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

// ListPlans answers 501 until it is implemented.
func (s *Server) ListPlans(context.Context, api.ListPlansRequestObject) (api.ListPlansResponseObject, error) {
	return nil, errNotImplemented("listPlans")
}

// ListProducts answers 501 until it is implemented.
func (s *Server) ListProducts(context.Context, api.ListProductsRequestObject) (api.ListProductsResponseObject, error) {
	return nil, errNotImplemented("listProducts")
}

// GetProduct answers 501 until it is implemented.
func (s *Server) GetProduct(context.Context, api.GetProductRequestObject) (api.GetProductResponseObject, error) {
	return nil, errNotImplemented("getProduct")
}

// ListRequestLogs answers 501 until it is implemented.
func (s *Server) ListRequestLogs(context.Context, api.ListRequestLogsRequestObject) (api.ListRequestLogsResponseObject, error) {
	return nil, errNotImplemented("listRequestLogs")
}

// ListSubscriptions answers 501 until it is implemented.
func (s *Server) ListSubscriptions(context.Context, api.ListSubscriptionsRequestObject) (api.ListSubscriptionsResponseObject, error) {
	return nil, errNotImplemented("listSubscriptions")
}

// CreateSubscription answers 501 until it is implemented.
func (s *Server) CreateSubscription(context.Context, api.CreateSubscriptionRequestObject) (api.CreateSubscriptionResponseObject, error) {
	return nil, errNotImplemented("createSubscription")
}

// GetSubscription answers 501 until it is implemented.
func (s *Server) GetSubscription(context.Context, api.GetSubscriptionRequestObject) (api.GetSubscriptionResponseObject, error) {
	return nil, errNotImplemented("getSubscription")
}

// CancelSubscription answers 501 until it is implemented.
func (s *Server) CancelSubscription(context.Context, api.CancelSubscriptionRequestObject) (api.CancelSubscriptionResponseObject, error) {
	return nil, errNotImplemented("cancelSubscription")
}

// ChangeSubscriptionPlan answers 501 until it is implemented.
func (s *Server) ChangeSubscriptionPlan(context.Context, api.ChangeSubscriptionPlanRequestObject) (api.ChangeSubscriptionPlanResponseObject, error) {
	return nil, errNotImplemented("changeSubscriptionPlan")
}

// ReactivateSubscription answers 501 until it is implemented.
func (s *Server) ReactivateSubscription(context.Context, api.ReactivateSubscriptionRequestObject) (api.ReactivateSubscriptionResponseObject, error) {
	return nil, errNotImplemented("reactivateSubscription")
}

// ResumeSubscription answers 501 until it is implemented.
func (s *Server) ResumeSubscription(context.Context, api.ResumeSubscriptionRequestObject) (api.ResumeSubscriptionResponseObject, error) {
	return nil, errNotImplemented("resumeSubscription")
}

// SelectSubscriptionPlan answers 501 until it is implemented.
func (s *Server) SelectSubscriptionPlan(context.Context, api.SelectSubscriptionPlanRequestObject) (api.SelectSubscriptionPlanResponseObject, error) {
	return nil, errNotImplemented("selectSubscriptionPlan")
}

// SuspendSubscription answers 501 until it is implemented.
func (s *Server) SuspendSubscription(context.Context, api.SuspendSubscriptionRequestObject) (api.SuspendSubscriptionResponseObject, error) {
	return nil, errNotImplemented("suspendSubscription")
}

// TerminateSubscription answers 501 until it is implemented.
func (s *Server) TerminateSubscription(context.Context, api.TerminateSubscriptionRequestObject) (api.TerminateSubscriptionResponseObject, error) {
	return nil, errNotImplemented("terminateSubscription")
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

// ListWebhookEndpoints answers 501 until it is implemented.
func (s *Server) ListWebhookEndpoints(context.Context, api.ListWebhookEndpointsRequestObject) (api.ListWebhookEndpointsResponseObject, error) {
	return nil, errNotImplemented("listWebhookEndpoints")
}

// CreateWebhookEndpoint answers 501 until it is implemented.
func (s *Server) CreateWebhookEndpoint(context.Context, api.CreateWebhookEndpointRequestObject) (api.CreateWebhookEndpointResponseObject, error) {
	return nil, errNotImplemented("createWebhookEndpoint")
}

// DeleteWebhookEndpoint answers 501 until it is implemented.
func (s *Server) DeleteWebhookEndpoint(context.Context, api.DeleteWebhookEndpointRequestObject) (api.DeleteWebhookEndpointResponseObject, error) {
	return nil, errNotImplemented("deleteWebhookEndpoint")
}

// GetWebhookEndpoint answers 501 until it is implemented.
func (s *Server) GetWebhookEndpoint(context.Context, api.GetWebhookEndpointRequestObject) (api.GetWebhookEndpointResponseObject, error) {
	return nil, errNotImplemented("getWebhookEndpoint")
}

// SendWebhookEndpointTest answers 501 until it is implemented.
func (s *Server) SendWebhookEndpointTest(context.Context, api.SendWebhookEndpointTestRequestObject) (api.SendWebhookEndpointTestResponseObject, error) {
	return nil, errNotImplemented("sendWebhookEndpointTest")
}
