-- +goose Up
-- Request logs an integrator can debug with (issue 30): what was asked and answered.
--
-- request_logs gains what the list filters on: the API key behind the request, the
-- operation (operationId) the contract matched, and the Idempotency-Key sent. They are
-- nullable and have no default, so adding them rewrites no partition, and the previous
-- release's COPY (which names its columns) keeps working beside this one.
ALTER TABLE request_logs
    ADD COLUMN api_key_id uuid,
    ADD COLUMN operation text,
    ADD COLUMN idempotency_key text;

-- The operator reads any organization's log by its id alone (GET /v1/request-logs/{id}).
-- The id is the partition key, so the lookup prunes to one day's partition, and this index
-- finds the row there.
CREATE INDEX request_logs_id ON request_logs (id);

-- The bodies of a logged request and its response, redacted (core.RedactBody) and bounded
-- (core.RequestLogBodyLimit), under the same (organization_id, id) key as their log and
-- partitioned like it by day on that UUIDv7 id: postgres.MaintainPartitions creates its
-- partitions ahead and drops them with request_logs' retention. No foreign key: partitions
-- of the two tables are dropped apart, and a log whose bodies were not captured (an older
-- log, a stream) simply has none.
CREATE TABLE request_log_bodies (
    organization_id       uuid    NOT NULL,
    id                    uuid    NOT NULL,
    request_content_type  text,
    request_size          bigint  NOT NULL,
    request_body          text,
    request_truncated     boolean NOT NULL,
    request_omitted       text,
    response_content_type text,
    response_size         bigint  NOT NULL,
    response_body         text,
    response_truncated    boolean NOT NULL,
    response_omitted      text,
    PRIMARY KEY (organization_id, id)
) PARTITION BY RANGE (id);

-- +goose Down
DROP TABLE request_log_bodies;
DROP INDEX request_logs_id;
ALTER TABLE request_logs
    DROP COLUMN api_key_id,
    DROP COLUMN operation,
    DROP COLUMN idempotency_key;
