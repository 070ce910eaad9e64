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
SELECT * FROM support_cases WHERE id = @id;

-- name: SupportCaseGetByIDForUpdate :one
SELECT * FROM support_cases WHERE id = @id FOR UPDATE;

-- name: SupportCaseList :many
-- Keyset pagination in id (UUIDv7, creation) order within one organization.
SELECT * FROM support_cases
WHERE organization_id = @organization_id
  AND (sqlc.narg(status)::text IS NULL OR status = sqlc.narg(status))
  AND (sqlc.narg(after)::uuid IS NULL OR id > sqlc.narg(after))
ORDER BY id
LIMIT @row_limit;

-- name: SupportCaseClose :one
-- resolved_at keeps the time a case was resolved, if it was before being closed.
UPDATE support_cases
SET status = 'closed', resolved_at = coalesce(resolved_at, now()), updated_at = now()
WHERE id = @id
RETURNING *;
