-- name: RequestLogInsertBatch :copyfrom
INSERT INTO request_logs (
    id, organization_id, request_id, occurred_at, principal_type, key_prefix,
    method, path, route, status, latency_ms, error_code
) VALUES (
    @id, @organization_id, @request_id, @occurred_at, @principal_type, @key_prefix,
    @method, @path, @route, @status, @latency_ms, @error_code
);

-- name: RequestLogList :many
-- Newest first: keyset pagination on id (UUIDv7, time-ordered) descending within one
-- organization; a NULL filter means "any".
SELECT * FROM request_logs
WHERE organization_id = @organization_id
  AND (sqlc.narg(before)::uuid IS NULL OR id < sqlc.narg(before))
  AND (sqlc.narg(status_min)::smallint IS NULL OR status >= sqlc.narg(status_min))
  AND (sqlc.narg(status_max)::smallint IS NULL OR status <= sqlc.narg(status_max))
  AND (sqlc.narg(method)::text IS NULL OR method = sqlc.narg(method))
  AND (sqlc.narg(path_prefix)::text IS NULL OR starts_with(path, sqlc.narg(path_prefix)))
  AND (sqlc.narg(since)::timestamptz IS NULL OR occurred_at >= sqlc.narg(since))
  AND (sqlc.narg(until)::timestamptz IS NULL OR occurred_at < sqlc.narg(until))
ORDER BY id DESC
LIMIT @row_limit;
