-- name: APIKeyInsert :one
INSERT INTO api_keys (
    id, organization_id, name, prefix, secret_hash, environment, scopes,
    allowed_origins, allowed_ips, rate_limit_policy, created_by, expires_at,
    connected_business_id, service_resource_id
) VALUES (
    @id, @organization_id, @name, @prefix, @secret_hash, @environment, @scopes,
    @allowed_origins, @allowed_ips, @rate_limit_policy, @created_by, @expires_at,
    @connected_business_id, @service_resource_id
)
RETURNING *;

-- name: APIKeyInsertReplacement :one
-- The replacement of a rotated key: new key material, and every binding of the key it replaces
-- (organization, name, environment, scopes, restrictions, expiry, connected business and its
-- service resource), copied in the database so that no binding can be left behind.
INSERT INTO api_keys (
    id, organization_id, name, prefix, secret_hash, environment, scopes,
    allowed_origins, allowed_ips, rate_limit_policy, created_by, expires_at,
    connected_business_id, service_resource_id
)
SELECT @id::uuid, organization_id, name, @prefix::text, @secret_hash::bytea, environment, scopes,
    allowed_origins, allowed_ips, rate_limit_policy, @created_by::text, expires_at,
    connected_business_id, service_resource_id
FROM api_keys WHERE api_keys.organization_id = @organization_id AND api_keys.id = @replaces::uuid
RETURNING *;

-- name: APIKeyGetByID :one
SELECT * FROM api_keys WHERE organization_id = @organization_id AND id = @id;

-- name: APIKeyGetByIDAnyOrganization :one
-- The operator's read: any organization.
SELECT * FROM api_keys WHERE id = @id;

-- name: APIKeyGetByIDForUpdate :one
-- Another organization's key is not found, and so not locked.
SELECT * FROM api_keys WHERE organization_id = @organization_id AND id = @id FOR UPDATE;

-- name: APIKeyGetByIDForUpdateAnyOrganization :one
-- The operator's lock: any organization.
SELECT * FROM api_keys WHERE id = @id FOR UPDATE;

-- name: APIKeyGetByPrefix :one
-- With the state of the connected business a credential belongs to (null for other keys).
SELECT sqlc.embed(api_keys), connected_businesses.lifecycle_status AS business_status
FROM api_keys LEFT JOIN connected_businesses ON connected_businesses.organization_id = api_keys.organization_id
    AND connected_businesses.id = api_keys.connected_business_id
WHERE api_keys.prefix = @prefix;

-- name: APIKeyList :many
-- Keyset pagination in id (UUIDv7, creation) order within one organization.
SELECT * FROM api_keys
WHERE organization_id = @organization_id
  AND (sqlc.narg(after)::uuid IS NULL OR id > sqlc.narg(after))
ORDER BY id
LIMIT @row_limit;

-- name: APIKeyListAnyOrganization :many
-- The operator's list: every organization, in id order.
SELECT * FROM api_keys
WHERE (sqlc.narg(after)::uuid IS NULL OR id > sqlc.narg(after))
ORDER BY id
LIMIT @row_limit;

-- name: APIKeyRevoke :one
UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()), updated_at = now()
WHERE organization_id = @organization_id AND id = @id
RETURNING *;

-- name: APIKeyReplace :one
-- The rotated key keeps working until expires_at (the grace period), never longer than before.
UPDATE api_keys
SET expires_at = CASE WHEN expires_at IS NULL OR expires_at > @expires_at::timestamptz THEN @expires_at::timestamptz ELSE expires_at END,
    replaced_by = @replaced_by, updated_at = now()
WHERE organization_id = @organization_id AND id = @id
RETURNING *;

-- name: APIKeyTouch :exec
-- Maintained at most once a minute per key, so authentication is not a write per request.
UPDATE api_keys SET last_used_at = now()
WHERE id = @id AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute');

-- name: OAuthTokenInsert :one
INSERT INTO oauth_tokens (id, organization_id, api_key_id, token_hash, scopes, expires_at)
VALUES (@id, @organization_id, @api_key_id, @token_hash, @scopes, @expires_at)
RETURNING *;

-- name: OAuthTokenGetByHash :one
-- A token dies with its key: it is returned with the key, whose state the caller checks.
SELECT sqlc.embed(oauth_tokens), sqlc.embed(api_keys), connected_businesses.lifecycle_status AS business_status
FROM oauth_tokens
JOIN api_keys ON api_keys.organization_id = oauth_tokens.organization_id AND api_keys.id = oauth_tokens.api_key_id
LEFT JOIN connected_businesses ON connected_businesses.organization_id = api_keys.organization_id
    AND connected_businesses.id = api_keys.connected_business_id
WHERE oauth_tokens.token_hash = @token_hash;
