-- name: AuditEventInsert :exec
INSERT INTO audit_events (
    id, organization_id, actor_type, actor_id, actor_key_prefix, action,
    resource_type, resource_id, request_id, before, after
) VALUES (
    @id, @organization_id, @actor_type, @actor_id, @actor_key_prefix, @action,
    @resource_type, @resource_id, @request_id, @before, @after
);

-- name: AuditEventScanFloor :one
-- The id @skip events below @before in the organization's newest-first order: a filtered list
-- examines the events from before down to it and no further (core.FilterScanRows).
SELECT id FROM audit_events
WHERE organization_id = @organization_id AND id < @before
ORDER BY id DESC
OFFSET @skip LIMIT 1;

-- name: AuditEventScanFloorAnyOrganization :one
-- The operator's trail: AuditEventScanFloor over every organization.
SELECT id FROM audit_events
WHERE id < @before
ORDER BY id DESC
OFFSET @skip LIMIT 1;

-- name: AuditEventList :many
-- Newest first: ids are UUIDv7, so id order is time order and the cursor is the last id seen.
-- The page walks the range [floor, before) of the key (RequestLogList says why neither is NULL).
SELECT * FROM audit_events
WHERE organization_id = @organization_id AND id < @before AND id >= @floor
  AND (sqlc.narg(resource_type)::text IS NULL OR resource_type = sqlc.narg(resource_type))
  AND (sqlc.narg(resource_id)::text IS NULL OR resource_id = sqlc.narg(resource_id))
  AND (sqlc.narg(action)::text IS NULL OR action = sqlc.narg(action))
  AND (sqlc.narg(since)::timestamptz IS NULL OR occurred_at >= sqlc.narg(since))
  AND (sqlc.narg(until)::timestamptz IS NULL OR occurred_at < sqlc.narg(until))
ORDER BY id DESC
LIMIT @row_limit;

-- name: AuditEventListAnyOrganization :many
-- The operator's trail: every organization.
-- Newest first: ids are UUIDv7, so id order is time order and the cursor is the last id seen.
SELECT * FROM audit_events
WHERE id < @before AND id >= @floor
  AND (sqlc.narg(resource_type)::text IS NULL OR resource_type = sqlc.narg(resource_type))
  AND (sqlc.narg(resource_id)::text IS NULL OR resource_id = sqlc.narg(resource_id))
  AND (sqlc.narg(action)::text IS NULL OR action = sqlc.narg(action))
  AND (sqlc.narg(since)::timestamptz IS NULL OR occurred_at >= sqlc.narg(since))
  AND (sqlc.narg(until)::timestamptz IS NULL OR occurred_at < sqlc.narg(until))
ORDER BY id DESC
LIMIT @row_limit;
