-- name: IdempotencyLockTry :one
-- Serialises requests with one key across every server process; released at transaction end.
SELECT pg_try_advisory_xact_lock(hashtextextended(@lock_key::text, 0));

-- name: IdempotencyKeyGet :one
SELECT * FROM idempotency_keys
WHERE scope = @scope AND key = @key AND expires_at > now();

-- name: IdempotencyKeyPut :exec
-- Replaces an expired record of the same key, if one is still there.
INSERT INTO idempotency_keys (
    scope, key, organization_id, principal_scopes, method, path, request_hash,
    response_status, response_content_type, response_headers, response_body, expires_at
) VALUES (
    @scope, @key, @organization_id, @principal_scopes, @method, @path, @request_hash,
    @response_status, @response_content_type, @response_headers, @response_body, @expires_at
)
ON CONFLICT (scope, key) DO UPDATE SET
    organization_id = EXCLUDED.organization_id, principal_scopes = EXCLUDED.principal_scopes, method = EXCLUDED.method, path = EXCLUDED.path,
    request_hash = EXCLUDED.request_hash, response_status = EXCLUDED.response_status,
    response_content_type = EXCLUDED.response_content_type, response_headers = EXCLUDED.response_headers,
    response_body = EXCLUDED.response_body,
    created_at = now(), expires_at = EXCLUDED.expires_at;

-- name: IdempotencyKeyDeleteExpired :execrows
DELETE FROM idempotency_keys
WHERE ctid IN (SELECT ctid FROM idempotency_keys WHERE expires_at <= now() LIMIT @batch);
