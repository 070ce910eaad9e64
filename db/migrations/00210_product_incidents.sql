-- +goose Up
-- Incidents the operator declares on a product (issue 23, "Degraded"; docs/design.md, "Incidents
-- and degraded service"). While a product has an open incident, every live subscription of it
-- whose service runs is `degraded` instead of `active`. Not tenant-owned: an incident is the
-- provider's, readable by every organization like the catalogue.
CREATE TABLE product_incidents (
    id          uuid        PRIMARY KEY,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    product_id  uuid        NOT NULL REFERENCES products (id),
    summary     text        NOT NULL CHECK (char_length(summary) BETWEEN 1 AND 500),
    status      text        NOT NULL CHECK (status IN ('open', 'resolved')),
    opened_at   timestamptz NOT NULL,
    resolved_at timestamptz,
    CHECK ((status = 'resolved') = (resolved_at IS NOT NULL))
);

CREATE INDEX product_incidents_product_id ON product_incidents (product_id, id);
CREATE INDEX product_incidents_open ON product_incidents (product_id) WHERE status = 'open';

-- When a subscription's provisioning completed; null until it has. A subscription suspended
-- before it was ever provisioned returns to `provisioning` on resume (and its job runs again)
-- instead of becoming `active` unprovisioned. Internal: the API's subscription does not show it.
ALTER TABLE subscriptions ADD COLUMN provisioned_at timestamptz;

-- Existing subscriptions: the provisioning audit event says when; a running service without one
-- (none should exist) counts as provisioned when it started. A suspended or terminated
-- subscription without the event was never provisioned.
UPDATE subscriptions s SET provisioned_at = coalesce((
        SELECT min(a.occurred_at) FROM audit_events a
        WHERE a.resource_type = 'subscription' AND a.resource_id = s.id::text AND a.action = 'subscription.provisioned'),
    CASE WHEN s.service_status IN ('active', 'degraded') THEN s.started_at END)
WHERE s.service_status <> 'provisioning';

-- Only a provisioned service runs.
ALTER TABLE subscriptions
    ADD CONSTRAINT subscriptions_running_provisioned CHECK (service_status NOT IN ('active', 'degraded') OR provisioned_at IS NOT NULL);

-- +goose Down
ALTER TABLE subscriptions
    DROP CONSTRAINT subscriptions_running_provisioned,
    DROP COLUMN provisioned_at;
DROP TABLE product_incidents;
