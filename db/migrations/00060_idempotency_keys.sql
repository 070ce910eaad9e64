-- +goose Up
-- Completed responses of POST requests sent with an Idempotency-Key, replayed for 24 hours.
-- A row is written in the same transaction as the request's effect (postgres.IdempotencyService),
-- so an effect never exists without its record. Response bodies may hold secrets shown once
-- (API keys, tokens), so they are stored encrypted (AES-256-GCM, key from configuration).
CREATE TABLE idempotency_keys (
    scope                 text        NOT NULL, -- the principal that sent the key
    key                   text        NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    organization_id       uuid,
    method                text        NOT NULL,
    path                  text        NOT NULL,
    request_hash          bytea       NOT NULL,
    response_status       integer     NOT NULL CHECK (response_status BETWEEN 200 AND 499),
    response_content_type text        NOT NULL,
    response_body         bytea       NOT NULL,
    created_at            timestamptz NOT NULL DEFAULT now(),
    expires_at            timestamptz NOT NULL,
    PRIMARY KEY (scope, key)
);

CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at);

-- +goose Down
DROP TABLE idempotency_keys;
