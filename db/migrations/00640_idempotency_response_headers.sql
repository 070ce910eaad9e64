-- +goose Up
-- A replay answers as the first response did, its headers too: a token response's
-- Cache-Control: no-store and Pragma: no-cache (RFC 6749 §5.1), an invalid_client's Basic
-- challenge (§5.2), a problem's Cache-Control. The headers the handler set, as a JSON object
-- of arrays (Go's http.Header); none on records of the releases before this one.
ALTER TABLE idempotency_keys ADD COLUMN response_headers jsonb NOT NULL DEFAULT '{}';

-- +goose Down
ALTER TABLE idempotency_keys DROP COLUMN response_headers;
