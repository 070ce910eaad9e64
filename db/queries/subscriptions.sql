-- name: SubscriptionInsert :one
-- created_at and updated_at are started_at: one instant for the whole creation.
INSERT INTO subscriptions (
    id, created_at, updated_at, organization_id, product_id, plan_id, commercial_status, service_status,
    billing_status, provisioning_request_id, requested_configuration, started_at, billing_anchor_at, renews_at
) VALUES (
    @id, @started_at, @started_at, @organization_id, @product_id, @plan_id, @commercial_status, @service_status,
    @billing_status, @provisioning_request_id, @requested_configuration, @started_at, @billing_anchor_at, @renews_at
)
RETURNING *;

-- name: SubscriptionGetByID :one
-- The subscription, within one organization (organization principals).
SELECT * FROM subscriptions WHERE organization_id = @organization_id AND id = @id;

-- name: SubscriptionGetByIDAnyOrganization :one
-- The operator's read: any organization.
SELECT * FROM subscriptions WHERE id = @id;

-- name: SubscriptionGetByIDForUpdate :one
-- As SubscriptionGetByID, locking the row until the transaction ends so lifecycle actions on
-- one subscription run one after another. Another organization's row is not locked. NO KEY
-- UPDATE (the id never changes) leaves rows that refer to the subscription free to be written
-- meanwhile: a job holding the subscription's invoice and inserting such a row would otherwise
-- wait for this lock while this transaction waits for the invoice, a deadlock.
SELECT * FROM subscriptions WHERE organization_id = @organization_id AND id = @id FOR NO KEY UPDATE;

-- name: SubscriptionGetByIDForUpdateAnyOrganization :one
-- The operator's lock: any organization.
SELECT * FROM subscriptions WHERE id = @id FOR NO KEY UPDATE;

-- name: SubscriptionListByOrganization :many
SELECT * FROM subscriptions WHERE organization_id = @organization_id ORDER BY id;

-- name: SubscriptionGetLiveByProduct :one
SELECT * FROM subscriptions
WHERE organization_id = @organization_id AND product_id = @product_id AND service_status <> 'terminated'
LIMIT 1;

-- name: SubscriptionUpdateState :one
-- Stores the state a lifecycle action computed from the locked row; updated_at is the instant
-- the action took effect (the one of suspended_at or terminated_at, when it sets them).
UPDATE subscriptions SET
    plan_id           = @plan_id,
    commercial_status = @commercial_status,
    service_status    = @service_status,
    billing_status    = @billing_status,
    billing_anchor_at = @billing_anchor_at,
    renews_at         = @renews_at,
    service_ends_at   = @service_ends_at,
    suspended_at      = @suspended_at,
    suspended_by      = @suspended_by,
    terminated_at     = @terminated_at,
    cancelled_by      = @cancelled_by,
    provisioned_at    = @provisioned_at,
    usage_since       = @usage_since,
    updated_at        = @updated_at
WHERE organization_id = @organization_id AND id = @id
RETURNING *;
