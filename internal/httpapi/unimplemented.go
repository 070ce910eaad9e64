package httpapi

import (
	"context"

	"github.com/provider/coreapi/gen/api"
)

// The operations below are in the v1 contract but their issues have not landed yet: each
// answers 501 not_implemented. Implementing one means moving it out of this file.

// ResolveShortAddress answers 501 until it is implemented.
func (s *Server) ResolveShortAddress(context.Context, api.ResolveShortAddressRequestObject) (api.ResolveShortAddressResponseObject, error) {
	return nil, errNotImplemented("resolveShortAddress")
}

// ListAuditEvents answers 501 until it is implemented.
func (s *Server) ListAuditEvents(context.Context, api.ListAuditEventsRequestObject) (api.ListAuditEventsResponseObject, error) {
	return nil, errNotImplemented("listAuditEvents")
}

// ListConnectedBusinesses answers 501 until it is implemented.
func (s *Server) ListConnectedBusinesses(context.Context, api.ListConnectedBusinessesRequestObject) (api.ListConnectedBusinessesResponseObject, error) {
	return nil, errNotImplemented("listConnectedBusinesses")
}

// CreateConnectedBusiness answers 501 until it is implemented.
func (s *Server) CreateConnectedBusiness(context.Context, api.CreateConnectedBusinessRequestObject) (api.CreateConnectedBusinessResponseObject, error) {
	return nil, errNotImplemented("createConnectedBusiness")
}

// GetConnectedBusiness answers 501 until it is implemented.
func (s *Server) GetConnectedBusiness(context.Context, api.GetConnectedBusinessRequestObject) (api.GetConnectedBusinessResponseObject, error) {
	return nil, errNotImplemented("getConnectedBusiness")
}

// UpdateConnectedBusiness answers 501 until it is implemented.
func (s *Server) UpdateConnectedBusiness(context.Context, api.UpdateConnectedBusinessRequestObject) (api.UpdateConnectedBusinessResponseObject, error) {
	return nil, errNotImplemented("updateConnectedBusiness")
}

// CreateConnectedBusinessCredential answers 501 until it is implemented.
func (s *Server) CreateConnectedBusinessCredential(context.Context, api.CreateConnectedBusinessCredentialRequestObject) (api.CreateConnectedBusinessCredentialResponseObject, error) {
	return nil, errNotImplemented("createConnectedBusinessCredential")
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

// ListSpendControls answers 501 until it is implemented.
func (s *Server) ListSpendControls(context.Context, api.ListSpendControlsRequestObject) (api.ListSpendControlsResponseObject, error) {
	return nil, errNotImplemented("listSpendControls")
}

// PutSpendControl answers 501 until it is implemented.
func (s *Server) PutSpendControl(context.Context, api.PutSpendControlRequestObject) (api.PutSpendControlResponseObject, error) {
	return nil, errNotImplemented("putSpendControl")
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

// GenerateSimplifiedInvoice answers 501 until it is implemented.
func (s *Server) GenerateSimplifiedInvoice(context.Context, api.GenerateSimplifiedInvoiceRequestObject) (api.GenerateSimplifiedInvoiceResponseObject, error) {
	return nil, errNotImplemented("generateSimplifiedInvoice")
}

// GetTaxInvoice answers 501 until it is implemented.
func (s *Server) GetTaxInvoice(context.Context, api.GetTaxInvoiceRequestObject) (api.GetTaxInvoiceResponseObject, error) {
	return nil, errNotImplemented("getTaxInvoice")
}

// GetUsage answers 501 until it is implemented.
func (s *Server) GetUsage(context.Context, api.GetUsageRequestObject) (api.GetUsageResponseObject, error) {
	return nil, errNotImplemented("getUsage")
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
