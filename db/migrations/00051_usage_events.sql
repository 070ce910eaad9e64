-- +goose Up
-- One row per accepted product operation (an invoice generated, a short address resolved),
-- written in the operation's transaction by postgres.recordUsage. Spend controls count these
-- per organization, product and calendar month (UTC).
CREATE TABLE usage_events (
    id              uuid        PRIMARY KEY,
    organization_id uuid        NOT NULL REFERENCES organizations (id),
    product         text        NOT NULL CHECK (product IN ('einvoice', 'address', 'platform')),
    occurred_at     timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX usage_events_organization_product_occurred ON usage_events (organization_id, product, occurred_at);

-- +goose Down
DROP TABLE usage_events;
