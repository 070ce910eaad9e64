-- +goose Up
-- Who suspended a subscription's service and who cancelled it, so an organization cannot undo
-- the operator's decision (DESIGN.md §3, issue 21 item 6): the kind of principal, as audit
-- events name it. Internal: the API's subscription object does not show them; the audit trail
-- records them with the state.
ALTER TABLE subscriptions
    ADD COLUMN suspended_by text CHECK (suspended_by IN ('organization', 'connected_business', 'operator')),
    ADD COLUMN cancelled_by text CHECK (cancelled_by IN ('organization', 'connected_business', 'operator'));

-- Existing suspensions and cancellations take the actor of the audit event that made them;
-- one without an event is held as the operator's, the side that can always lift it.
UPDATE subscriptions s SET suspended_by = coalesce((
        SELECT a.actor_type FROM audit_events a
        WHERE a.resource_type = 'subscription' AND a.resource_id = s.id::text AND a.action = 'subscription.suspended'
          AND a.actor_type <> 'system'
        ORDER BY a.id DESC LIMIT 1), 'operator')
WHERE service_status = 'suspended';
UPDATE subscriptions s SET cancelled_by = coalesce((
        SELECT a.actor_type FROM audit_events a
        WHERE a.resource_type = 'subscription' AND a.resource_id = s.id::text
          AND a.action IN ('subscription.cancelled', 'subscription.terminated') AND a.actor_type <> 'system'
        ORDER BY a.id DESC LIMIT 1), 'operator')
WHERE commercial_status = 'cancelled';

ALTER TABLE subscriptions
    ADD CONSTRAINT subscriptions_suspended_by CHECK ((service_status = 'suspended') = (suspended_by IS NOT NULL)),
    ADD CONSTRAINT subscriptions_cancelled_by CHECK ((commercial_status = 'cancelled') = (cancelled_by IS NOT NULL));

-- +goose Down
ALTER TABLE subscriptions
    DROP CONSTRAINT subscriptions_cancelled_by,
    DROP CONSTRAINT subscriptions_suspended_by,
    DROP COLUMN cancelled_by,
    DROP COLUMN suspended_by;
