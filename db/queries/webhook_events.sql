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
