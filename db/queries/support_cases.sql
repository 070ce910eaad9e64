-- name: SupportCaseInsert :one
INSERT INTO support_cases (
    id, organization_id, product_id, resource_id, severity, category, status, assigned_team,
    opened_at, subject, description, request_id, environment, diagnostics
) VALUES (
    @id, @organization_id, @product_id, @resource_id, @severity, @category, 'open', @assigned_team,
    now(), @subject, @description, @request_id, @environment, @diagnostics
)
RETURNING *;

-- name: SupportCaseGetByID :one
SELECT * FROM support_cases WHERE organization_id = @organization_id AND id = @id;

-- name: SupportCaseGetByIDAnyOrganization :one
-- The operator's read: any organization.
SELECT * FROM support_cases WHERE id = @id;

-- name: SupportCaseGetByIDForUpdate :one
-- Another organization's case is not found, and so not locked.
SELECT * FROM support_cases WHERE organization_id = @organization_id AND id = @id FOR UPDATE;

-- name: SupportCaseGetByIDForUpdateAnyOrganization :one
-- The operator's lock: any organization.
SELECT * FROM support_cases WHERE id = @id FOR UPDATE;

-- name: SupportCaseList :many
-- Keyset pagination in id (UUIDv7, creation) order within one organization.
SELECT * FROM support_cases
WHERE organization_id = @organization_id
  AND (sqlc.narg(after)::uuid IS NULL OR id > sqlc.narg(after))
ORDER BY id
LIMIT @row_limit;

-- name: SupportCaseListByStatus :many
-- SupportCaseList of one status: a query of its own, whose every condition is one of the
-- index (organization_id, status, id) in any plan, so the filter never walks the other cases.
-- after is the least id on the first page.
SELECT * FROM support_cases
WHERE organization_id = @organization_id AND status = @status AND id > @after
ORDER BY id
LIMIT @row_limit;

-- name: SupportCaseUpdateState :one
-- Stores the workflow state a move computed from the locked row (core.SupportCase.Apply);
-- updated_at is the instant the move took effect.
UPDATE support_cases SET
    status        = @status,
    assigned_team = @assigned_team,
    resolved_at   = @resolved_at,
    updated_at    = @updated_at
WHERE organization_id = @organization_id AND id = @id
RETURNING *;

-- name: SupportCaseProductKnown :one
-- A case may name a catalogue product by id or code.
SELECT EXISTS (SELECT 1 FROM products WHERE id::text = lower(@product::text) OR code = @product::text);

-- name: SupportCaseResourceOwned :one
-- The resources a case can be about: anything with an id the organization owns.
SELECT EXISTS (SELECT 1 FROM api_keys WHERE id = @resource_id::uuid AND organization_id = @owner_id::uuid)
    OR EXISTS (SELECT 1 FROM service_resources WHERE id = @resource_id::uuid AND organization_id = @owner_id::uuid)
    OR EXISTS (SELECT 1 FROM subscriptions WHERE id = @resource_id::uuid AND organization_id = @owner_id::uuid)
    OR EXISTS (SELECT 1 FROM billing_invoices WHERE id = @resource_id::uuid AND organization_id = @owner_id::uuid)
    OR EXISTS (SELECT 1 FROM connected_businesses WHERE id = @resource_id::uuid AND organization_id = @owner_id::uuid)
    OR EXISTS (SELECT 1 FROM tax_invoices WHERE id = @resource_id::uuid AND organization_id = @owner_id::uuid);
