-- name: RequestLogInsertBatch :copyfrom
INSERT INTO request_logs (
    id, organization_id, request_id, occurred_at, principal_type, key_prefix,
    method, path, route, status, latency_ms, error_code
) VALUES (
    @id, @organization_id, @request_id, @occurred_at, @principal_type, @key_prefix,
    @method, @path, @route, @status, @latency_ms, @error_code
);

-- name: RequestLogScanFloor :one
-- The id @skip rows below @before in the organization's newest-first order: a filtered list
-- examines the rows from before down to it and no further (core.FilterScanRows). Served by
-- the key's index alone; no row when fewer remain.
SELECT id FROM request_logs
WHERE organization_id = @organization_id AND id < @before
ORDER BY id DESC
OFFSET @skip LIMIT 1;

-- name: RequestLogList :many
-- Newest first: keyset pagination on id (UUIDv7, time-ordered) descending within one
-- organization; a NULL filter means "any". The page walks the range [floor, before) of the
-- key (the first page's before is the greatest id, and floor is RequestLogScanFloor or the
-- least id): never NULL, so that a cached generic plan bounds the walk as a custom one does.
SELECT * FROM request_logs
WHERE organization_id = @organization_id AND id < @before AND id >= @floor
  AND (sqlc.narg(status_min)::smallint IS NULL OR status >= sqlc.narg(status_min))
  AND (sqlc.narg(status_max)::smallint IS NULL OR status <= sqlc.narg(status_max))
  AND (sqlc.narg(method)::text IS NULL OR method = sqlc.narg(method))
  AND (sqlc.narg(path_prefix)::text IS NULL OR starts_with(path, sqlc.narg(path_prefix)))
  AND (sqlc.narg(since)::timestamptz IS NULL OR occurred_at >= sqlc.narg(since))
  AND (sqlc.narg(until)::timestamptz IS NULL OR occurred_at < sqlc.narg(until))
ORDER BY id DESC
LIMIT @row_limit;
