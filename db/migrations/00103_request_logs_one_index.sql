-- +goose Up
-- Request logs are only ever read per organization, newest first (RequestLogList), never by
-- id alone. Keying the table on (organization_id, id) lets one index serve those lists and
-- uniqueness both, so every logged request costs PostgreSQL one index insertion instead of
-- two (docs/performance.md, 8.). A backward scan of the key gives id DESC.
ALTER TABLE request_logs DROP CONSTRAINT request_logs_pkey;
ALTER TABLE request_logs ADD PRIMARY KEY (organization_id, id);
DROP INDEX request_logs_organization_id_id;

-- +goose Down
CREATE INDEX request_logs_organization_id_id ON request_logs (organization_id, id DESC);
ALTER TABLE request_logs DROP CONSTRAINT request_logs_pkey;
ALTER TABLE request_logs ADD PRIMARY KEY (id);
