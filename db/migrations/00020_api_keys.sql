-- +goose Up
-- API keys. The secret half of a key is never stored: only its SHA-256 (secret_hash), and
-- the secret is a 200-bit random value, so a fast hash is enough to make the column useless
-- to a reader of the database. The public prefix identifies the key for lookups.
CREATE TABLE api_keys (
    id                uuid        PRIMARY KEY,
    organization_id   uuid        NOT NULL REFERENCES organizations (id),
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    name              text        NOT NULL CHECK (name <> ''),
    prefix            text        NOT NULL UNIQUE,
    secret_hash       bytea       NOT NULL CHECK (length(secret_hash) = 32),
    environment       text        NOT NULL CHECK (environment IN ('sandbox', 'production')),
    scopes            text[]      NOT NULL CHECK (cardinality(scopes) > 0),
    allowed_origins   text[]      NOT NULL DEFAULT '{}',
    allowed_ips       text[]      NOT NULL DEFAULT '{}',
    rate_limit_policy text        CHECK (rate_limit_policy IN ('standard', 'strict')),
    created_by        text        NOT NULL,
    last_used_at      timestamptz,
    expires_at        timestamptz,
    revoked_at        timestamptz,
    replaced_by       uuid        REFERENCES api_keys (id)
);

CREATE INDEX api_keys_organization_id_id ON api_keys (organization_id, id);

-- OAuth 2.0 access tokens issued to API keys (client credentials). Opaque; stored hashed.
CREATE TABLE oauth_tokens (
    id              uuid        PRIMARY KEY,
    organization_id uuid        NOT NULL REFERENCES organizations (id),
    api_key_id      uuid        NOT NULL REFERENCES api_keys (id),
    token_hash      bytea       NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    scopes          text[]      NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    expires_at      timestamptz NOT NULL
);

CREATE INDEX oauth_tokens_expires_at ON oauth_tokens (expires_at);

-- +goose Down
DROP TABLE oauth_tokens;
DROP TABLE api_keys;
