-- +goose Up
-- Spend controls: per organization and product, a monthly operation limit and a warning
-- threshold (DESIGN.md §8).
CREATE TABLE spend_controls (
    id                         uuid        PRIMARY KEY,
    organization_id            uuid        NOT NULL REFERENCES organizations (id),
    product                    text        NOT NULL CHECK (product IN ('einvoice', 'address', 'platform')),
    warning_threshold_percent  integer     NOT NULL CHECK (warning_threshold_percent BETWEEN 1 AND 100),
    monthly_budget_minor_units bigint      CHECK (monthly_budget_minor_units >= 0),
    hard_operation_limit       bigint      CHECK (hard_operation_limit >= 0),
    notification_recipients    text[]      NOT NULL,
    enabled                    boolean     NOT NULL,
    created_at                 timestamptz NOT NULL DEFAULT now(),
    updated_at                 timestamptz NOT NULL DEFAULT now(),
    UNIQUE (organization_id, product)
);

-- The operations of each organization, product and calendar month (UTC), incremented in the
-- transaction of every accepted operation. The row lock makes the count exact under any
-- concurrency: N parallel operations against a limit of L commit exactly L.
CREATE TABLE usage_counters (
    organization_id       uuid        NOT NULL REFERENCES organizations (id),
    product               text        NOT NULL,
    month                 date        NOT NULL,
    operations            bigint      NOT NULL CHECK (operations >= 0),
    warning_reached_at    timestamptz,
    hard_limit_reached_at timestamptz,
    PRIMARY KEY (organization_id, product, month)
);

-- +goose Down
DROP TABLE usage_counters;
DROP TABLE spend_controls;
