-- name: WebhookDeliveryInsert :exec
INSERT INTO webhook_deliveries (id, organization_id, event_id, endpoint_id, status)
VALUES (@id, @organization_id, @event_id, @endpoint_id, 'pending');

-- name: WebhookDeliveryClaim :many
-- Claims up to @batch due deliveries: deliveries other workers hold are skipped, and each
-- claimed one is leased (next_attempt_at moves @lease_seconds ahead) and its attempt counted
-- before the claiming transaction commits, so no other worker sends the same attempt. A worker
-- that dies mid-attempt leaves the lease to expire and the delivery to be attempted again.
WITH due AS (
    SELECT id FROM webhook_deliveries
    WHERE status = 'pending' AND next_attempt_at <= now()
    ORDER BY next_attempt_at, id
    LIMIT @batch
    FOR UPDATE SKIP LOCKED
)
UPDATE webhook_deliveries d
SET attempts = d.attempts + 1,
    next_attempt_at = now() + make_interval(secs => @lease_seconds::float8),
    updated_at = now()
FROM due
WHERE d.id = due.id
RETURNING d.*;

-- name: WebhookDeliveryGetForSend :one
-- What one attempt sends: the event and the endpoint's address, secret and status.
SELECT sqlc.embed(webhook_events), webhook_endpoints.url, webhook_endpoints.secret, webhook_endpoints.status AS endpoint_status
FROM webhook_deliveries
JOIN webhook_events ON webhook_events.id = webhook_deliveries.event_id
JOIN webhook_endpoints ON webhook_endpoints.id = webhook_deliveries.endpoint_id
WHERE webhook_deliveries.id = @id;

-- name: WebhookDeliveryFinishAttempt :one
-- Records the outcome of attempt @attempts: the delivery is done (@status succeeded, failed or
-- abandoned) or pending again at @next_attempt_at. Nothing happens when the delivery is gone
-- (its endpoint was deleted) or another worker has claimed a later attempt since.
UPDATE webhook_deliveries
SET status          = @status,
    next_attempt_at = @next_attempt_at,
    last_error      = @last_error,
    completed_at    = CASE WHEN @status = 'pending' THEN NULL ELSE now() END,
    updated_at      = now()
WHERE id = @id AND attempts = @attempts AND status = 'pending'
RETURNING *;

-- name: WebhookDeliveryAbandonByEndpoint :exec
-- A disabled endpoint receives nothing more.
UPDATE webhook_deliveries
SET status = 'abandoned', last_error = 'The endpoint was disabled.', completed_at = now(), updated_at = now()
WHERE organization_id = @organization_id AND endpoint_id = @endpoint_id AND status = 'pending';

-- name: WebhookDeliveryAttemptInsert :exec
INSERT INTO webhook_delivery_attempts (id, organization_id, delivery_id, attempt, attempted_at, succeeded, status_code, latency_ms, error)
VALUES (@id, @organization_id, @delivery_id, @attempt, @attempted_at, @succeeded, @status_code, @latency_ms, @error);
