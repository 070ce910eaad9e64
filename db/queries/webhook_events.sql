-- name: WebhookEventInsert :one
INSERT INTO webhook_events (id, organization_id, type, data)
VALUES (@id, @organization_id, @type, @data)
RETURNING *;

-- name: WebhookEventGetByID :one
SELECT * FROM webhook_events WHERE organization_id = @organization_id AND id = @id;
