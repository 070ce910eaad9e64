-- +goose Up
-- Who suspended or closed a connected business, now that a closed business can be reopened
-- (the specification's transition table): an organization cannot undo the operator's decision
-- (DESIGN.md §3). The kind of principal, as audit events name it; null while the business is
-- active. Internal: the API's business does not show it; the audit trail records it.
ALTER TABLE connected_businesses
    ADD COLUMN lifecycle_decided_by text CHECK (lifecycle_decided_by IN ('organization', 'connected_business', 'operator'));

-- Existing suspensions and closures take the actor of the last update that audited them; one
-- without such an event is held as the operator's, the side that can always lift it.
UPDATE connected_businesses b SET lifecycle_decided_by = coalesce((
        SELECT a.actor_type FROM audit_events a
        WHERE a.resource_type = 'connected_business' AND a.resource_id = b.id::text
          AND a.action = 'connected_business.updated' AND a.actor_type <> 'system'
        ORDER BY a.id DESC LIMIT 1), 'operator')
WHERE lifecycle_status <> 'active';

ALTER TABLE connected_businesses
    ADD CONSTRAINT connected_businesses_lifecycle_decided_by CHECK ((lifecycle_status = 'active') = (lifecycle_decided_by IS NULL));

-- +goose Down
ALTER TABLE connected_businesses
    DROP CONSTRAINT connected_businesses_lifecycle_decided_by,
    DROP COLUMN lifecycle_decided_by;
