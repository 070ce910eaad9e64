-- +goose Up
-- One row per request that reached authentication successfully, written in batches off the
-- request path (postgres.RequestLogWriter). organization_id is the principal's organization;
-- the operator's own requests are kept under the nil UUID, so the column stays NOT NULL and
-- every query filters on it (DESIGN.md §11), and the API shows it as null.
CREATE TABLE request_logs (
    id              uuid        PRIMARY KEY,
    organization_id uuid        NOT NULL,
    request_id      text        NOT NULL,
    occurred_at     timestamptz NOT NULL,
    principal_type  text        NOT NULL CHECK (principal_type IN ('operator', 'organization', 'connected_business', 'system')),
    key_prefix      text,
    method          text        NOT NULL,
    path            text        NOT NULL,
    route           text,
    status          smallint    NOT NULL CHECK (status BETWEEN 100 AND 599),
    latency_ms      bigint      NOT NULL CHECK (latency_ms >= 0),
    error_code      text
);

-- Lists are per organization, newest first.
CREATE INDEX request_logs_organization_id_id ON request_logs (organization_id, id DESC);

-- +goose Down
DROP TABLE request_logs;
