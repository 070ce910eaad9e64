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

// ListApiKeys answers 501 until it is implemented.
func (s *Server) ListApiKeys(context.Context, api.ListApiKeysRequestObject) (api.ListApiKeysResponseObject, error) {
	return nil, errNotImplemented("listApiKeys")
}

// CreateApiKey answers 501 until it is implemented.
func (s *Server) CreateApiKey(context.Context, api.CreateApiKeyRequestObject) (api.CreateApiKeyResponseObject, error) {
	return nil, errNotImplemented("createApiKey")
}

// GetApiKey answers 501 until it is implemented.
func (s *Server) GetApiKey(context.Context, api.GetApiKeyRequestObject) (api.GetApiKeyResponseObject, error) {
	return nil, errNotImplemented("getApiKey")
}

// RevokeApiKey answers 501 until it is implemented.
func (s *Server) RevokeApiKey(context.Context, api.RevokeApiKeyRequestObject) (api.RevokeApiKeyResponseObject, error) {
	return nil, errNotImplemented("revokeApiKey")
}

// RotateApiKey answers 501 until it is implemented.
func (s *Server) RotateApiKey(context.Context, api.RotateApiKeyRequestObject) (api.RotateApiKeyResponseObject, error) {
	return nil, errNotImplemented("rotateApiKey")
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

// CreateGrowthEvent answers 501 until it is implemented.
func (s *Server) CreateGrowthEvent(context.Context, api.CreateGrowthEventRequestObject) (api.CreateGrowthEventResponseObject, error) {
	return nil, errNotImplemented("createGrowthEvent")
}

// GetGrowthSummary answers 501 until it is implemented.
func (s *Server) GetGrowthSummary(context.Context, api.GetGrowthSummaryRequestObject) (api.GetGrowthSummaryResponseObject, error) {
	return nil, errNotImplemented("getGrowthSummary")
}

// CreateOAuthToken answers 501 until it is implemented.
func (s *Server) CreateOAuthToken(context.Context, api.CreateOAuthTokenRequestObject) (api.CreateOAuthTokenResponseObject, error) {
	return nil, errNotImplemented("createOAuthToken")
}

// CreateVerifiedLoginOnboarding answers 501 until it is implemented.
func (s *Server) CreateVerifiedLoginOnboarding(context.Context, api.CreateVerifiedLoginOnboardingRequestObject) (api.CreateVerifiedLoginOnboardingResponseObject, error) {
	return nil, errNotImplemented("createVerifiedLoginOnboarding")
}

// ListRequestLogs answers 501 until it is implemented.
func (s *Server) ListRequestLogs(context.Context, api.ListRequestLogsRequestObject) (api.ListRequestLogsResponseObject, error) {
	return nil, errNotImplemented("listRequestLogs")
}

// ListSpendControls answers 501 until it is implemented.
func (s *Server) ListSpendControls(context.Context, api.ListSpendControlsRequestObject) (api.ListSpendControlsResponseObject, error) {
	return nil, errNotImplemented("listSpendControls")
}

// PutSpendControl answers 501 until it is implemented.
func (s *Server) PutSpendControl(context.Context, api.PutSpendControlRequestObject) (api.PutSpendControlResponseObject, error) {
	return nil, errNotImplemented("putSpendControl")
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
