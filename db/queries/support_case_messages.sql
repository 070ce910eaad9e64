-- name: SupportCaseMessageInsert :one
INSERT INTO support_case_messages (id, organization_id, support_case_id, author, body, created_at)
VALUES (@id, @organization_id, @support_case_id, @author, @body, @created_at)
RETURNING *;

-- name: SupportCaseMessageList :many
-- Keyset pagination in id (UUIDv7, creation) order within one case of one organization.
SELECT * FROM support_case_messages
WHERE organization_id = @organization_id AND support_case_id = @support_case_id
  AND (sqlc.narg(after)::uuid IS NULL OR id > sqlc.narg(after))
ORDER BY id
LIMIT @row_limit;
