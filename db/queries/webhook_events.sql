-- name: WebhookEventInsert :one
INSERT INTO webhook_events (id, organization_id, type, data)
VALUES (@id, @organization_id, @type, @data)
RETURNING *;

-- name: WebhookEventGetByID :one
SELECT * FROM webhook_events WHERE organization_id = @organization_id AND id = @id;

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
