-- +goose Up
-- The append-only audit trail: every state change made through the API writes one row in
-- the same transaction as the change (see postgres.audit).
CREATE TABLE audit_events (
    id               uuid        PRIMARY KEY,
    occurred_at      timestamptz NOT NULL DEFAULT now(),
    organization_id  uuid,
    actor_type       text        NOT NULL CHECK (actor_type IN ('operator', 'organization', 'connected_business', 'system')),
    actor_id         text,
    actor_key_prefix text,
    action           text        NOT NULL CHECK (action ~ '^[a-z_]+\.[a-z_]+$'),
    resource_type    text        NOT NULL,
    resource_id      text        NOT NULL,
    request_id       text,
    before           jsonb,
    after            jsonb
);

CREATE INDEX audit_events_organization_id_id ON audit_events (organization_id, id DESC);
CREATE INDEX audit_events_resource ON audit_events (resource_type, resource_id);

-- +goose Down
DROP TABLE audit_events;
