-- +goose Up
-- The scopes of the credential that sent the first request of a key. Every credential made
-- from one API key (the key and its access tokens) shares the key's records, so a replay is
-- served only to a credential holding all of these: a narrowed token must not receive what its
-- key was answered (a secret shown once among it), nor what it could not have asked for.
ALTER TABLE idempotency_keys ADD COLUMN principal_scopes text[];
-- Records made before: an API key's records require the key's scopes (the most its requests
-- could have held); the others (development and operator tokens, which hold every scope, and
-- the token endpoint, whose client authentication is part of the stored request) nothing.
UPDATE idempotency_keys SET principal_scopes = api_keys.scopes
FROM api_keys WHERE idempotency_keys.scope = 'api_key:' || api_keys.id::text;
UPDATE idempotency_keys SET principal_scopes = '{}' WHERE principal_scopes IS NULL;
ALTER TABLE idempotency_keys ALTER COLUMN principal_scopes SET NOT NULL;

-- +goose Down
ALTER TABLE idempotency_keys DROP COLUMN principal_scopes;
