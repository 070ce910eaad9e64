-- name: WebhookEventInsert :one
INSERT INTO webhook_events (id, organization_id, type, data)
VALUES (@id, @organization_id, @type, @data)
RETURNING *;

-- name: WebhookEventGetByID :one
SELECT * FROM webhook_events WHERE organization_id = @organization_id AND id = @id;

-- name: WebhookEventSweep :execrows
-- Deletes at most @batch events older than @before whose deliveries are all finished (with
-- their deliveries and attempts), oldest first.
DELETE FROM webhook_events
WHERE id IN (
    SELECT e.id FROM webhook_events e
    WHERE e.created_at < @before
      AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status = 'pending')
    ORDER BY e.created_at
    LIMIT @batch
);

-- name: WebhookEventInsertListSubscribed :many
-- Stores a webhook event and answers, in the same statement, the enabled endpoints of its
-- organization that receive it: those subscribed to @type and to none of @except_types (the
-- endpoints a deprecated alias still reaches without a duplicate, when they name its successor).
WITH stored AS (
    INSERT INTO webhook_events (id, organization_id, type, data) VALUES (@id, @organization_id, @type, @data)
)
SELECT e.id FROM webhook_endpoints e
WHERE e.organization_id = @organization_id AND e.status = 'enabled' AND @type::text = ANY (e.enabled_events)
  AND NOT (e.enabled_events && @except_types::text[])
ORDER BY e.id;
