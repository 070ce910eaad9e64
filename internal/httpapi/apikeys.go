package httpapi

import (
	"context"
	"time"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/core"
)

// defaultLimit is the page size of lists whose limit is omitted (documented in openapi.yaml).
const defaultLimit = 50

// CreateApiKey implements POST /v1/api-keys.
func (s *Server) CreateApiKey(ctx context.Context, req api.CreateApiKeyRequestObject) (api.CreateApiKeyResponseObject, error) {
	b := req.Body
	scopes := make([]string, len(b.Scopes))
	for i, sc := range b.Scopes {
		scopes[i] = string(sc)
	}
	org, err := core.OrganizationIn(ctx, b.OrganizationId, "/organization_id")
	if err != nil {
		return nil, err
	}
	key, err := s.cfg.Services.APIKeys.CreateAPIKey(ctx, core.APIKeyCreate{
		OrganizationID:  org,
		Name:            b.Name,
		Environment:     string(b.Environment),
		Scopes:          scopes,
		AllowedOrigins:  deref(b.AllowedOrigins),
		AllowedIPs:      deref(b.AllowedIps),
		RateLimitPolicy: valueOf(b.RateLimitPolicy),
		ExpiresAt:       valueOf(b.ExpiresAt),
	})
	if err != nil {
		return nil, err
	}
	return api.CreateApiKey201JSONResponse{Body: toAPIKeyWithSecret(key)}, nil
}

// ListApiKeys implements GET /v1/api-keys.
func (s *Server) ListApiKeys(ctx context.Context, req api.ListApiKeysRequestObject) (api.ListApiKeysResponseObject, error) {
	org, err := organizationParam(ctx, req.Params.OrganizationId)
	if err != nil {
		return nil, err
	}
	keys, next, err := s.cfg.Services.APIKeys.ListAPIKeys(ctx, core.APIKeyFilter{
		OrganizationID: org,
		Cursor:         req.Params.Cursor,
		Limit:          valueOr(req.Params.Limit, defaultLimit),
	})
	if err != nil {
		return nil, err
	}
	items := make([]api.ApiKey, len(keys))
	for i, k := range keys {
		items[i] = toAPIKey(k)
	}
	return api.ListApiKeys200JSONResponse{Body: api.ApiKeyList{Items: items, NextCursor: nullableFrom(next)}}, nil
}

// GetApiKey implements GET /v1/api-keys/{id}.
func (s *Server) GetApiKey(ctx context.Context, req api.GetApiKeyRequestObject) (api.GetApiKeyResponseObject, error) {
	key, err := s.cfg.Services.APIKeys.FindAPIKeyByID(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.GetApiKey200JSONResponse{Body: toAPIKey(key)}, nil
}

// RevokeApiKey implements POST /v1/api-keys/{id}/revoke.
func (s *Server) RevokeApiKey(ctx context.Context, req api.RevokeApiKeyRequestObject) (api.RevokeApiKeyResponseObject, error) {
	key, err := s.cfg.Services.APIKeys.RevokeAPIKey(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.RevokeApiKey200JSONResponse{Body: toAPIKey(key)}, nil
}

// RotateApiKey implements POST /v1/api-keys/{id}/rotate.
func (s *Server) RotateApiKey(ctx context.Context, req api.RotateApiKeyRequestObject) (api.RotateApiKeyResponseObject, error) {
	var grace time.Duration
	if req.Body != nil && req.Body.GracePeriodSeconds != nil {
		grace = time.Duration(*req.Body.GracePeriodSeconds) * time.Second
	}
	key, err := s.cfg.Services.APIKeys.RotateAPIKey(ctx, req.Id, grace)
	if err != nil {
		return nil, err
	}
	return api.RotateApiKey201JSONResponse{Body: toAPIKeyWithSecret(key)}, nil
}

func toAPIKey(k *core.APIKey) api.ApiKey {
	scopes := make([]api.Scope, len(k.Scopes))
	for i, sc := range k.Scopes {
		scopes[i] = api.Scope(sc)
	}
	return api.ApiKey{
		Id:              k.ID,
		CreatedAt:       k.CreatedAt,
		UpdatedAt:       k.UpdatedAt,
		OrganizationId:  k.OrganizationID.String(),
		Name:            k.Name,
		Prefix:          k.Prefix,
		Environment:     api.ApiKeyEnvironment(k.Environment),
		Scopes:          scopes,
		AllowedOrigins:  k.AllowedOrigins,
		AllowedIps:      k.AllowedIPs,
		RateLimitPolicy: nullableFrom(k.RateLimitPolicy),
		Status:          api.ApiKeyStatus(k.Status(time.Now())),
		CreatedBy:       k.CreatedBy,
		LastUsedAt:      nullableFrom(k.LastUsedAt),
		ExpiresAt:       nullableFrom(k.ExpiresAt),
		RevokedAt:       nullableFrom(k.RevokedAt),
	}
}

func toAPIKeyWithSecret(k *core.NewAPIKey) api.ApiKeyWithSecret {
	a := toAPIKey(&k.APIKey)
	return api.ApiKeyWithSecret{
		Id: a.Id, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt, OrganizationId: a.OrganizationId,
		Name: a.Name, Prefix: a.Prefix, Environment: a.Environment, Scopes: a.Scopes,
		AllowedOrigins: a.AllowedOrigins, AllowedIps: a.AllowedIps, RateLimitPolicy: a.RateLimitPolicy,
		Status: api.ApiKeyStatus(a.Status), CreatedBy: a.CreatedBy, LastUsedAt: a.LastUsedAt,
		ExpiresAt: a.ExpiresAt, RevokedAt: a.RevokedAt,
		Secret: k.Secret, FullKey: k.FullKey,
	}
}
