-- name: WebhookEventList :many
-- An organization's events, newest first (keyset pages on id, a UUIDv7). The page walks the
-- ids [floor, before): never NULL, so that the plan prunes the daily partitions outside them
-- (a cached generic plan at run time). Go narrows them to the created_after/created_before
-- window (eventIDWindow), and the created_at conditions keep their exact meaning.
SELECT * FROM webhook_events
WHERE organization_id = @organization_id AND id < @before AND id >= @floor
  AND (sqlc.narg(type)::text IS NULL OR type = sqlc.narg(type))
  AND (sqlc.narg(created_after)::timestamptz IS NULL OR created_at >= sqlc.narg(created_after))
  AND (sqlc.narg(created_before)::timestamptz IS NULL OR created_at < sqlc.narg(created_before))
ORDER BY id DESC
LIMIT @row_limit;

-- name: WebhookEventListAnyOrganization :many
-- The operator's list: every organization's events, newest first, within [floor, before)
-- like WebhookEventList (served by webhook_events_id).
SELECT * FROM webhook_events
WHERE id < @before AND id >= @floor
  AND (sqlc.narg(type)::text IS NULL OR type = sqlc.narg(type))
  AND (sqlc.narg(created_after)::timestamptz IS NULL OR created_at >= sqlc.narg(created_after))
  AND (sqlc.narg(created_before)::timestamptz IS NULL OR created_at < sqlc.narg(created_before))
ORDER BY id DESC
LIMIT @row_limit;

-- name: WebhookEventGetByIDAnyOrganization :one
-- The operator's read: any organization.
SELECT * FROM webhook_events WHERE id = @id;

-- name: WebhookDeliveryList :many
-- The deliveries to one endpoint, newest first (keyset pages on id), with their event's type.
SELECT d.id, d.created_at, d.updated_at, d.event_id, d.endpoint_id, d.status, d.attempts,
       d.next_attempt_at, d.last_error, d.completed_at, e.type AS event_type
FROM webhook_deliveries d
JOIN webhook_events e ON e.organization_id = d.organization_id AND e.id = d.event_id
WHERE d.organization_id = @organization_id AND d.endpoint_id = @endpoint_id
  AND (sqlc.narg(statuses)::text[] IS NULL OR d.status = ANY (sqlc.narg(statuses)::text[]))
  AND (sqlc.narg(event_type)::text IS NULL OR e.type = sqlc.narg(event_type))
  AND (sqlc.narg(before)::uuid IS NULL OR d.id < sqlc.narg(before))
ORDER BY d.id DESC
LIMIT @row_limit;

-- name: WebhookDeliveryAttemptList :many
-- The latest @per_delivery attempts of each of the deliveries @delivery_ids of events
-- @event_ids (pairwise), newest first: each found in its event's partition by the unique key.
SELECT a.delivery_id, a.attempt, a.attempted_at, a.succeeded, a.status_code, a.latency_ms, a.error, a.response_body
FROM (SELECT unnest(@delivery_ids::uuid[]) AS id, unnest(@event_ids::uuid[]) AS event_id) AS ids
CROSS JOIN LATERAL (
    SELECT x.delivery_id, x.attempt, x.attempted_at, x.succeeded, x.status_code, x.latency_ms, x.error, x.response_body
    FROM webhook_delivery_attempts x
    WHERE x.organization_id = @organization_id AND x.event_id = ids.event_id AND x.delivery_id = ids.id
    ORDER BY x.attempt DESC
    LIMIT @per_delivery
) a
ORDER BY a.delivery_id, a.attempt DESC;

-- name: WebhookDeliveryResend :one
-- Queues delivery @id for an attempt now. A finished delivery gets that one attempt; a pending
-- one keeps its schedule. requeues changes, so the job queued before does nothing. The client
-- names the delivery alone: one probe of webhook_deliveries_id per partition.
UPDATE webhook_deliveries
SET status          = 'pending',
    requeues        = requeues + 1,
    attempt_limit   = CASE WHEN status = 'pending' THEN attempt_limit ELSE attempts + 1 END,
    next_attempt_at = now(),
    completed_at    = NULL,
    updated_at      = now()
WHERE organization_id = @organization_id AND endpoint_id = @endpoint_id AND id = @id
RETURNING *;

-- name: WebhookDeliveryRecover :many
-- Queues again, each with a fresh schedule of @schedule attempts, the deliveries to an
-- endpoint created at or after @since that did not succeed: failed, or abandoned when the
-- endpoint was disabled. Pending ones are queued already and stay as they are.
UPDATE webhook_deliveries
SET status          = 'pending',
    requeues        = requeues + 1,
    attempt_limit   = attempts + @schedule::integer,
    next_attempt_at = now(),
    completed_at    = NULL,
    updated_at      = now()
WHERE organization_id = @organization_id AND endpoint_id = @endpoint_id
  AND status IN ('failed', 'abandoned') AND created_at >= @since
RETURNING id, event_id, requeues;

-- name: WebhookEventListMissedByEndpoint :many
-- The events an endpoint has no delivery of, created at or after @since and after the endpoint,
-- of the types @event_types it subscribes to: those published while it was disabled. @floor
-- is the least id of that window (eventIDWindow): the partitions before it are pruned.
-- webhook_endpoint.test events belong to the endpoint they were sent to.
SELECT e.id FROM webhook_events e
WHERE e.organization_id = @organization_id AND e.id >= @floor
  AND e.created_at >= @since AND e.created_at >= @endpoint_created_at
  AND e.type = ANY (@event_types::text[]) AND e.type <> 'webhook_endpoint.test'
  AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d
                  WHERE d.organization_id = @organization_id AND d.event_id = e.id AND d.endpoint_id = @endpoint_id)
ORDER BY e.id;

-- name: WebhookDeliveryInsertRecovered :many
-- Deliveries @ids of events @event_ids (pairwise) to an endpoint, queued by recover with a
-- schedule of @schedule attempts; returns those inserted. An event the endpoint has a delivery
-- of already (inserted by a concurrent recover since this one listed the missed events) is
-- skipped: it is that recover's to send.
INSERT INTO webhook_deliveries (id, organization_id, event_id, endpoint_id, status, attempt_limit)
SELECT unnest(@ids::uuid[]), @organization_id, unnest(@event_ids::uuid[]), @endpoint_id, 'pending', @schedule::integer
ON CONFLICT (organization_id, event_id, endpoint_id) DO NOTHING
RETURNING id, event_id;

-- name: WebhookEventStream :many
-- The event stream's look for new events: the organization's events above @after not yet sent
-- (@sent), oldest first; served by (organization_id, id).
SELECT * FROM webhook_events
WHERE organization_id = @organization_id AND id > @after
  AND (sqlc.narg(types)::text[] IS NULL OR type = ANY (sqlc.narg(types)::text[]))
  AND NOT (id = ANY (@sent::uuid[]))
ORDER BY id
LIMIT @row_limit;
