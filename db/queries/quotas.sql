-- The counts the quotas bound (core.Quotas). Each is read in the transaction that would add
-- one more, after the row that owns the count is locked (QuotaLockOrganization, or the
-- connected business's row), so two concurrent creates cannot both see room for one. The
-- partial indexes of migration 00310 keep each count to the rows it counts.

-- name: QuotaLockOrganization :one
-- The organization is the tenant itself: the caller passes the organization it acts for.
-- NO KEY UPDATE: foreign keys to the organization (KEY SHARE) are not blocked by it.
SELECT id FROM organizations WHERE id = @id FOR NO KEY UPDATE;

-- name: QuotaCountAPIKeys :one
SELECT count(*) FROM api_keys
WHERE organization_id = @organization_id AND connected_business_id IS NULL
  AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now());

-- name: QuotaCountWebhookEndpoints :one
SELECT count(*) FROM webhook_endpoints WHERE organization_id = @organization_id;

-- name: QuotaCountConnectedBusinesses :one
SELECT count(*) FROM connected_businesses
WHERE organization_id = @organization_id AND lifecycle_status <> 'closed';

-- name: QuotaCountCredentials :one
SELECT count(*) FROM api_keys
WHERE organization_id = @organization_id AND connected_business_id = @connected_business_id
  AND revoked_at IS NULL;

-- name: QuotaCountOpenSupportCases :one
SELECT count(*) FROM support_cases
WHERE organization_id = @organization_id AND status NOT IN ('resolved', 'closed');
