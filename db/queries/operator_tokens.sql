-- name: OperatorTokenInsert :one
INSERT INTO operator_tokens (id, name, token_hash, created_at)
VALUES (@id, @name, @token_hash, @created_at)
RETURNING *;

-- name: OperatorTokenGetByHash :one
SELECT * FROM operator_tokens WHERE token_hash = @token_hash;

-- name: OperatorTokenList :many
SELECT * FROM operator_tokens ORDER BY id;

-- name: OperatorTokenTouch :exec
UPDATE operator_tokens SET last_used_at = now() WHERE id = @id;

-- name: OperatorTokenRevoke :one
-- Revoking twice keeps the first instant.
UPDATE operator_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE id = @id
RETURNING *;
