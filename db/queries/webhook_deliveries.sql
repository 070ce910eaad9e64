-- name: WebhookDeliveryInsert :exec
INSERT INTO webhook_deliveries (id, organization_id, event_id, endpoint_id, status)
VALUES (@id, @organization_id, @event_id, @endpoint_id, 'pending');

-- name: WebhookDeliveryStartAttempt :one
-- Counts the attempt of a pending delivery that its job is about to make. Nothing happens when
-- the delivery is finished or gone (deleted with its endpoint), or was queued again (resend,
-- recover) since the job was: the job has nothing to do.
UPDATE webhook_deliveries
SET attempts = attempts + 1, updated_at = now()
WHERE organization_id = @organization_id AND event_id = @event_id AND id = @id
  AND status = 'pending' AND requeues = @requeues
RETURNING *;

-- name: WebhookDeliveryGetForSend :one
-- What one attempt sends: the event and the endpoint's address, secret and status, and the
-- secret it replaced while that one's grace period lasts (NULL otherwise).
SELECT sqlc.embed(webhook_events), webhook_endpoints.url, webhook_endpoints.secret, webhook_endpoints.status AS endpoint_status,
       (CASE WHEN webhook_endpoints.previous_secret_expires_at > now() THEN webhook_endpoints.previous_secret END)::bytea AS previous_secret
FROM webhook_deliveries
JOIN webhook_events ON webhook_events.organization_id = webhook_deliveries.organization_id AND webhook_events.id = webhook_deliveries.event_id
JOIN webhook_endpoints ON webhook_endpoints.organization_id = webhook_deliveries.organization_id AND webhook_endpoints.id = webhook_deliveries.endpoint_id
WHERE webhook_deliveries.organization_id = @organization_id AND webhook_deliveries.event_id = @event_id AND webhook_deliveries.id = @id;

-- name: WebhookDeliveryFinishAttempt :one
-- Records the outcome of attempt @attempts: the delivery is done (@status succeeded, failed or
-- abandoned) or pending again at @next_attempt_at. Nothing happens when the delivery is gone
-- (its endpoint was deleted) or a later attempt has started since (a job rescued after its
-- process died while the attempt was in flight).
UPDATE webhook_deliveries
SET status          = @status,
    next_attempt_at = @next_attempt_at,
    last_error      = @last_error,
    completed_at    = CASE WHEN @status = 'pending' THEN NULL ELSE now() END,
    updated_at      = now()
WHERE organization_id = @organization_id AND event_id = @event_id AND id = @id AND attempts = @attempts AND status = 'pending'
RETURNING *;

-- name: WebhookDeliveryAbandonByEndpoint :exec
-- A disabled endpoint receives nothing more. The deliveries stay, abandoned, until their
-- events' partitions are dropped: recover queues them again.
UPDATE webhook_deliveries
SET status = 'abandoned', last_error = 'The endpoint was disabled.', completed_at = now(), updated_at = now()
WHERE organization_id = @organization_id AND endpoint_id = @endpoint_id AND status = 'pending';

-- name: WebhookDeliveryAttemptInsert :exec
INSERT INTO webhook_delivery_attempts (id, organization_id, event_id, delivery_id, attempt, attempted_at, succeeded, status_code, latency_ms, error, response_body)
VALUES (@id, @organization_id, @event_id, @delivery_id, @attempt, @attempted_at, @succeeded, @status_code, @latency_ms, @error, @response_body);
