-- name: RequestLogInsertBatch :copyfrom
INSERT INTO request_logs (
    id, organization_id, request_id, occurred_at, principal_type, key_prefix,
    method, path, route, status, latency_ms, error_code, api_key_id, operation, idempotency_key
) VALUES (
    @id, @organization_id, @request_id, @occurred_at, @principal_type, @key_prefix,
    @method, @path, @route, @status, @latency_ms, @error_code, @api_key_id, @operation, @idempotency_key
);

-- name: RequestLogBodiesInsertBatch :copyfrom
INSERT INTO request_log_bodies (
    organization_id, id,
    request_content_type, request_size, request_body, request_truncated, request_omitted,
    response_content_type, response_size, response_body, response_truncated, response_omitted
) VALUES (
    @organization_id, @id,
    @request_content_type, @request_size, @request_body, @request_truncated, @request_omitted,
    @response_content_type, @response_size, @response_body, @response_truncated, @response_omitted
);

-- name: RequestLogGet :one
-- One log of the organization (the operator's own requests: the nil UUID).
SELECT * FROM request_logs WHERE organization_id = @organization_id AND id = @id;

-- name: RequestLogGetAnyOrganization :one
-- The operator's read of any organization's log: served by request_logs_id in the one
-- partition the id falls in.
SELECT * FROM request_logs WHERE id = @id;

-- name: RequestLogBodiesGet :one
-- The bodies of one log of the organization; no row when none were captured.
SELECT * FROM request_log_bodies WHERE organization_id = @organization_id AND id = @id;

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
  AND (sqlc.narg(api_key_id)::uuid IS NULL OR api_key_id = sqlc.narg(api_key_id))
  AND (sqlc.narg(operation)::text IS NULL OR operation = sqlc.narg(operation))
  AND (sqlc.narg(idempotency_key)::text IS NULL OR idempotency_key = sqlc.narg(idempotency_key))
ORDER BY id DESC
LIMIT @row_limit;

-- name: KeysetListPlanSettings :exec
-- For a keyset list's transaction over a time-partitioned table: the cached generic plan,
-- whose bounds are parameters pruned at execution. Planning a custom plan for a table of
-- forty partitions costs about 3 ms whatever the rows, and PostgreSQL's choice between the
-- two flips with the table's size: at 10 thousand rows it kept the generic plan (0.4 ms),
-- at 10 million a custom one each time (2.5 ms), so the list slowed with the data.
SELECT set_config('plan_cache_mode', 'force_generic_plan', true);
