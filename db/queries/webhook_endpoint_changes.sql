-- name: WebhookEndpointGetForUpdate :one
-- Locks an endpoint of the organization for a change (updateWebhookEndpoint, rotate-secret).
SELECT * FROM webhook_endpoints WHERE organization_id = @organization_id AND id = @id FOR UPDATE;

-- name: WebhookEndpointUpdate :one
-- Writes a changed endpoint. @reenabled says the change enables a disabled endpoint: its run of
-- failures starts again now (enabled_at; see WebhookEndpointDisable).
UPDATE webhook_endpoints
SET url             = @url,
    description     = @description,
    enabled_events  = @enabled_events,
    status          = @status,
    disabled_reason = @disabled_reason,
    enabled_at      = CASE WHEN @reenabled::boolean THEN now() ELSE enabled_at END,
    updated_at      = now()
WHERE organization_id = @organization_id AND id = @id
RETURNING *;

-- name: WebhookEndpointRotateSecret :one
-- Replaces the signing secret; @previous_secret (NULL: none) keeps signing beside it for
-- @grace_microseconds (NULL with it) from now(): the database's clock, which the delivery's
-- read of the secrets compares the expiry with, so the application's clock cannot lengthen
-- or shorten the grace.
UPDATE webhook_endpoints
SET secret                     = @secret,
    previous_secret            = sqlc.narg(previous_secret),
    previous_secret_expires_at = now() + sqlc.narg(grace_microseconds)::bigint * interval '1 microsecond',
    updated_at                 = now()
WHERE organization_id = @organization_id AND id = @id
RETURNING *;

-- name: WebhookEndpointDisableGone :one
-- Disables an endpoint whose receiver answered 410 Gone; no row when it is disabled already.
UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = @disabled_reason, updated_at = now()
WHERE organization_id = @organization_id AND id = @id AND status = 'enabled'
RETURNING *;
