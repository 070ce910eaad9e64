package httpapi

import (
	"context"

	"github.com/provider/coreapi/gen/api"
)

// The operations below are in the v1 contract but their issues have not landed yet: each
// answers 501 not_implemented. Implementing one means moving it out of this file.

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
