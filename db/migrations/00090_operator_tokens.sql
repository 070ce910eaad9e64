-- +goose Up
-- Operator tokens: the production operator credential of DESIGN.md §3, minted by
-- `coreapi operator-token` and shown once. Only the SHA-256 of a token is stored; a request's
-- token is found by that hash. Not tenant-owned: the operator acts for the provider.
CREATE TABLE operator_tokens (
    id           uuid        PRIMARY KEY,
    name         text        NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    token_hash   bytea       NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at   timestamptz
);

-- +goose Down
DROP TABLE operator_tokens;
