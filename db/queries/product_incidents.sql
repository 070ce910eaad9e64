-- Product incidents and what they do to subscriptions (docs/design.md, "Incidents and degraded
-- service"). Every change of a product's incidents holds the product row (ProductLockForIncidents),
-- and everything that starts a subscription's service (resume, the end of provisioning) holds it
-- shared (ProductLockForSubscription…) before locking the subscription: so the set of open
-- incidents cannot change between reading it and storing the service status it implies.

-- name: ProductLockForIncidents :one
-- Serialises the incident changes of one product against each other and against services
-- starting. NO KEY UPDATE: new subscriptions (whose foreign key takes KEY SHARE) are not held up.
SELECT id FROM products WHERE id = @id FOR NO KEY UPDATE;

-- name: ProductLockForSubscription :one
-- Holds the product of the organization's subscription shared, so its incidents stay as read
-- until the transaction ends. Another organization's subscription locks nothing.
SELECT p.id FROM products p JOIN subscriptions s ON s.product_id = p.id
WHERE s.organization_id = @organization_id AND s.id = @id
FOR SHARE OF p;

-- name: ProductLockForOrganization :exec
-- ProductLockForSubscription for every subscription of the organization, in product id order:
-- a test clock's advance, before it locks them all (SubscriptionLockByOrganization).
SELECT p.id FROM products p
WHERE p.id IN (SELECT s.product_id FROM subscriptions s WHERE s.organization_id = @organization_id)
ORDER BY p.id
FOR SHARE OF p;

-- name: ProductLockForSubscriptionAnyOrganization :one
-- The operator's ProductLockForSubscription: any organization.
SELECT p.id FROM products p JOIN subscriptions s ON s.product_id = p.id
WHERE s.id = @id
FOR SHARE OF p;

-- name: ProductIncidentInsert :one
-- created_at and updated_at are opened_at: one instant for the whole declaration.
INSERT INTO product_incidents (id, created_at, updated_at, product_id, summary, status, opened_at)
VALUES (@id, @opened_at, @opened_at, @product_id, @summary, 'open', @opened_at)
RETURNING *;

-- name: ProductIncidentGetByID :one
SELECT * FROM product_incidents WHERE product_id = @product_id AND id = @id;

-- name: ProductIncidentList :many
-- A keyset page of the product's incidents in id (declaration) order.
SELECT * FROM product_incidents
WHERE product_id = @product_id
  AND (sqlc.narg('after')::uuid IS NULL OR id > sqlc.narg('after')::uuid)
ORDER BY id
LIMIT @max_rows;

-- name: ProductIncidentListByStatus :many
-- ProductIncidentList of one status, served by the index (product_id, status, id) of
-- migration 00311 in any plan; after is the least id on the first page.
SELECT * FROM product_incidents
WHERE product_id = @product_id AND status = @status AND id > @after
ORDER BY id
LIMIT @max_rows;

-- name: ProductIncidentResolve :one
-- Under ProductLockForIncidents, which keeps the incident as the caller read it.
UPDATE product_incidents SET status = 'resolved', resolved_at = @resolved_at, updated_at = @resolved_at
WHERE product_id = @product_id AND id = @id
RETURNING *;

-- name: ProductIncidentOpenExists :one
SELECT EXISTS (SELECT 1 FROM product_incidents WHERE product_id = @product_id AND status = 'open');

-- name: SubscriptionLockByProductServiceAnyOrganization :many
-- Every subscription of the product, of any organization, whose service status is the given
-- one, locked in id order. A row a concurrent action changed is re-read after it commits and
-- left out when its status no longer matches.
SELECT * FROM subscriptions
WHERE product_id = @product_id AND service_status = @service_status
ORDER BY id
FOR UPDATE;

-- name: SubscriptionSetServiceAnyOrganization :many
-- Moves the subscriptions locked by SubscriptionLockByProductServiceAnyOrganization to another
-- service status in one statement.
UPDATE subscriptions SET service_status = @service_status, updated_at = @updated_at
WHERE id = ANY(@ids::uuid[])
RETURNING *;
