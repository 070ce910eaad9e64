-- +goose Up
-- Secret rotation: the secret replaced by rotate-secret, sealed like the current one, signs
-- deliveries beside it until previous_secret_expires_at (the grace period); a rotation with no
-- grace period keeps none. enabled_at is when a disabled endpoint was enabled again: the run of
-- failures that disables an endpoint starts no earlier than it.
ALTER TABLE webhook_endpoints
    ADD COLUMN previous_secret            bytea,
    ADD COLUMN previous_secret_expires_at timestamptz,
    ADD COLUMN enabled_at                 timestamptz,
    ADD CONSTRAINT webhook_endpoints_previous_secret_expires
        CHECK ((previous_secret IS NULL) = (previous_secret_expires_at IS NULL));

-- +goose Down
ALTER TABLE webhook_endpoints
    DROP CONSTRAINT webhook_endpoints_previous_secret_expires,
    DROP COLUMN enabled_at,
    DROP COLUMN previous_secret_expires_at,
    DROP COLUMN previous_secret;
