-- name: AuditEventInsert :exec
INSERT INTO audit_events (
    id, organization_id, actor_type, actor_id, actor_key_prefix, action,
    resource_type, resource_id, request_id, before, after
) VALUES (
    @id, @organization_id, @actor_type, @actor_id, @actor_key_prefix, @action,
    @resource_type, @resource_id, @request_id, @before, @after
);

-- name: AuditEventListByResource :many
SELECT * FROM audit_events
WHERE resource_type = @resource_type AND resource_id = @resource_id
ORDER BY id;
