-- name: ConnectedBusinessInsert :one
INSERT INTO connected_businesses (
    id, organization_id, external_reference, display_name, legal_name_ar, legal_name_en,
    vat_reference, commercial_registration_reference, national_address_reference, lifecycle_status
) VALUES (
    @id, @organization_id, @external_reference, @display_name, @legal_name_ar, @legal_name_en,
    @vat_reference, @commercial_registration_reference, @national_address_reference, 'active'
)
RETURNING *;

-- name: ConnectedBusinessGetByID :one
SELECT * FROM connected_businesses WHERE organization_id = @organization_id AND id = @id;

-- name: ConnectedBusinessGetByIDAnyOrganization :one
-- The operator's read: any organization.
SELECT * FROM connected_businesses WHERE id = @id;

-- name: ConnectedBusinessGetByIDForUpdate :one
-- Another organization's business is not found, and so not locked.
SELECT * FROM connected_businesses WHERE organization_id = @organization_id AND id = @id FOR UPDATE;

-- name: ConnectedBusinessGetByIDForUpdateAnyOrganization :one
-- The operator's lock: any organization.
SELECT * FROM connected_businesses WHERE id = @id FOR UPDATE;

-- name: ConnectedBusinessList :many
SELECT * FROM connected_businesses
WHERE organization_id = @organization_id
  AND (sqlc.narg(after)::uuid IS NULL OR id > sqlc.narg(after))
ORDER BY id
LIMIT @row_limit;

-- name: ConnectedBusinessListAnyOrganization :many
-- The operator's list: every organization, in id order.
SELECT * FROM connected_businesses
WHERE (sqlc.narg(after)::uuid IS NULL OR id > sqlc.narg(after))
ORDER BY id
LIMIT @row_limit;

-- name: ConnectedBusinessUpdate :one
UPDATE connected_businesses
SET display_name = @display_name, legal_name_ar = @legal_name_ar, legal_name_en = @legal_name_en,
    vat_reference = @vat_reference, lifecycle_status = @lifecycle_status,
    lifecycle_decided_by = @lifecycle_decided_by, updated_at = now()
WHERE organization_id = @organization_id AND id = @id
RETURNING *;

-- name: ServiceResourceInsert :one
INSERT INTO service_resources (id, organization_id, connected_business_id, product, capability_id, lifecycle_status)
VALUES (@id, @organization_id, @connected_business_id, @product, @capability_id, @lifecycle_status)
RETURNING *;

-- name: ServiceResourceListByBusiness :many
SELECT * FROM service_resources
WHERE organization_id = @organization_id AND connected_business_id = @connected_business_id
ORDER BY product;

-- name: ServiceResourceSetStatusByBusiness :exec
UPDATE service_resources SET lifecycle_status = @lifecycle_status, updated_at = now()
WHERE organization_id = @organization_id AND connected_business_id = @connected_business_id;
