-- +goose NO TRANSACTION
-- +goose Up
-- Request logs are only ever read per organization, newest first (RequestLogList), never by
-- id alone. Keying the table on (organization_id, id) lets one index serve those lists and
-- uniqueness both, so every logged request costs PostgreSQL one index insertion instead of
-- two (docs/performance.md, 8.). A backward scan of the key gives id DESC.
--
-- The table may be large and is written all the time, so the new key's index is built
-- without blocking writes, and the key is swapped in one statement (atomic, and brief).
-- Outside a transaction a failed step leaves the steps before it done; run again, the
-- migration skips building an index that exists.
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS request_logs_organization_id_id_key
    ON request_logs (organization_id, id);
ALTER TABLE request_logs
    DROP CONSTRAINT request_logs_pkey,
    ADD CONSTRAINT request_logs_pkey PRIMARY KEY USING INDEX request_logs_organization_id_id_key;
DROP INDEX CONCURRENTLY IF EXISTS request_logs_organization_id_id;

-- +goose Down
CREATE INDEX CONCURRENTLY IF NOT EXISTS request_logs_organization_id_id ON request_logs (organization_id, id DESC);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS request_logs_id_key ON request_logs (id);
ALTER TABLE request_logs
    DROP CONSTRAINT request_logs_pkey,
    ADD CONSTRAINT request_logs_pkey PRIMARY KEY USING INDEX request_logs_id_key;
