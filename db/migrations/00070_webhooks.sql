-- +goose Up
-- Webhook endpoints of organizations. The signing secret is sealed with the service's
-- encryption key (it must be read back to sign), never stored in clear. last_success_at is when
-- the latest successful attempt to the endpoint ended: it decides when an endpoint is disabled
-- for sustained failure.
CREATE TABLE webhook_endpoints (
    id              uuid        PRIMARY KEY,
    organization_id uuid        NOT NULL REFERENCES organizations (id),
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    url             text        NOT NULL CHECK (length(url) BETWEEN 1 AND 2048),
    description     text        CHECK (length(description) <= 500),
    enabled_events  text[]      NOT NULL CHECK (cardinality(enabled_events) >= 1),
    secret          bytea       NOT NULL,
    status          text        NOT NULL CHECK (status IN ('enabled', 'disabled')),
    disabled_reason text,
    last_success_at timestamptz,
    CHECK ((status = 'disabled') = (disabled_reason IS NOT NULL))
);

CREATE INDEX webhook_endpoints_organization_id_id ON webhook_endpoints (organization_id, id);

-- The outbox: every webhook event, written in the transaction of the change that caused it,
-- so no event is lost (the change committed) or invented (the change rolled back). data is the
-- documented schema of the event's type.
CREATE TABLE webhook_events (
    id              uuid        PRIMARY KEY,
    organization_id uuid        NOT NULL REFERENCES organizations (id),
    created_at      timestamptz NOT NULL DEFAULT now(),
    type            text        NOT NULL CHECK (type ~ '^[a-z_]+\.[a-z_]+$'),
    data            jsonb       NOT NULL CHECK (jsonb_typeof(data) = 'object')
);

CREATE INDEX webhook_events_organization_id_id ON webhook_events (organization_id, id);

-- One delivery per event and endpoint, written with the event. Workers claim due deliveries
-- with FOR UPDATE SKIP LOCKED and lease them by moving next_attempt_at past the attempt's
-- timeout, so no two workers send the same attempt and a crashed worker's attempt is retried.
-- Deleting an endpoint drops its deliveries.
CREATE TABLE webhook_deliveries (
    id              uuid        PRIMARY KEY,
    organization_id uuid        NOT NULL REFERENCES organizations (id),
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    event_id        uuid        NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
    endpoint_id     uuid        NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    -- pending: to be attempted at next_attempt_at; succeeded: a 2xx was received; failed: every
    -- attempt failed; abandoned: the endpoint was disabled before it succeeded.
    status          text        NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'abandoned')),
    attempts        integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_error      text,
    completed_at    timestamptz,
    UNIQUE (event_id, endpoint_id),
    CHECK ((status = 'pending') = (completed_at IS NULL))
);

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint_id ON webhook_deliveries (endpoint_id);

-- Every attempt of a delivery: what the receiver answered (status code, null when there was no
-- answer), how long it took, and the error.
CREATE TABLE webhook_delivery_attempts (
    id              uuid        PRIMARY KEY,
    organization_id uuid        NOT NULL REFERENCES organizations (id),
    delivery_id     uuid        NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    attempt         integer     NOT NULL CHECK (attempt >= 1),
    attempted_at    timestamptz NOT NULL,
    succeeded       boolean     NOT NULL,
    status_code     integer,
    latency_ms      integer     NOT NULL CHECK (latency_ms >= 0),
    error           text,
    UNIQUE (delivery_id, attempt)
);

-- +goose Down
DROP TABLE webhook_delivery_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_events;
DROP TABLE webhook_endpoints;
