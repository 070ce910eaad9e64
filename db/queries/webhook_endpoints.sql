-- name: WebhookEndpointInsert :one
INSERT INTO webhook_endpoints (id, organization_id, url, description, enabled_events, secret, status)
VALUES (@id, @organization_id, @url, @description, @enabled_events, @secret, 'enabled')
RETURNING *;

-- name: WebhookEndpointGetByID :one
SELECT * FROM webhook_endpoints WHERE organization_id = @organization_id AND id = @id;

-- name: WebhookEndpointGetByIDAnyOrganization :one
-- The operator's read: any organization.
SELECT * FROM webhook_endpoints WHERE id = @id;

-- name: WebhookEndpointList :many
-- Keyset pagination in id (UUIDv7, creation) order within one organization.
SELECT * FROM webhook_endpoints
WHERE organization_id = @organization_id
  AND (sqlc.narg(after)::uuid IS NULL OR id > sqlc.narg(after))
ORDER BY id
LIMIT @row_limit;

-- name: WebhookEndpointListAnyOrganization :many
-- The operator's list: every organization, in id order.
SELECT * FROM webhook_endpoints
WHERE (sqlc.narg(after)::uuid IS NULL OR id > sqlc.narg(after))
ORDER BY id
LIMIT @row_limit;

-- name: WebhookEndpointDelete :one
DELETE FROM webhook_endpoints WHERE organization_id = @organization_id AND id = @id RETURNING *;

-- name: WebhookEndpointMarkSucceeded :exec
-- Records a successful attempt that ended at @succeeded_at (attempts end in any order).
UPDATE webhook_endpoints SET last_success_at = greatest(last_success_at, @succeeded_at::timestamptz)
WHERE organization_id = @organization_id AND id = @id;

-- name: WebhookEndpointDisable :one
-- Disables the endpoint after delivery @delivery_id failed its last attempt, when no attempt to
-- the endpoint has succeeded, and it was not enabled again, since that delivery's first attempt
-- began; returns no row otherwise (or when it is disabled already).
UPDATE webhook_endpoints e SET status = 'disabled', disabled_reason = @disabled_reason, updated_at = now()
WHERE e.organization_id = @organization_id AND e.id = @id AND e.status = 'enabled'
  AND (greatest(e.last_success_at, e.enabled_at) IS NULL
       OR greatest(e.last_success_at, e.enabled_at) < (SELECT min(a.attempted_at) FROM webhook_delivery_attempts a
                                                      WHERE a.organization_id = @organization_id AND a.event_id = @event_id::uuid AND a.delivery_id = @delivery_id::uuid))
RETURNING *;
