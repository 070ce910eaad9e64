-- +goose Up
-- The append-only tables request_logs, audit_events and growth_events are partitioned by time,
-- so that retention drops whole partitions instead of deleting rows (docs/design.md,
-- "Partitions and retention"; postgres.MaintainPartitions creates and drops them).
--
-- The partition key is the id: a UUIDv7, whose first 48 bits are the milliseconds since the
-- epoch at which the row was written, and PostgreSQL compares uuids byte by byte. A time
-- range is therefore a range of ids, bounded by time_partition_bound(t): the least UUIDv7 of
-- instant t. Every query of these tables is a keyset walk of id (id < cursor, id >= floor),
-- so they prune partitions as they are, and every primary key holds the partition key:
-- request_logs and audit_events are keyed (organization_id, id), growth_events id.
--
-- The rows stored so far are not copied: each table becomes the first partition of its
-- partitioned table, "<table>_legacy", holding every id below the start of tomorrow (request
-- logs, daily partitions) or of next month (audit and growth events, monthly partitions).
-- Attaching it reads the table once to check that bound; it is dropped like any partition
-- when its newest possible row is past retention. Migrate then creates the partitions ahead.
--
-- audit_events.organization_id was NULL for provider-wide events; a primary key cannot hold
-- NULL, so they are stored under the nil UUID (as request_logs stores the operator's own
-- requests) and the service shows it as null.

-- +goose StatementBegin
CREATE FUNCTION time_partition_bound(t timestamptz) RETURNS uuid
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT (lpad(to_hex(floor(extract(epoch FROM t) * 1000)::bigint), 12, '0') || '00000000000000000000')::uuid
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION time_partition_bound(timestamptz) IS
    'The least UUIDv7 of instant t: the bound of the id-range partitions that hold rows written from t on.';

-- request_logs: already keyed (organization_id, id).
ALTER TABLE request_logs RENAME TO request_logs_legacy;
ALTER INDEX request_logs_pkey RENAME TO request_logs_legacy_pkey;
CREATE TABLE request_logs (LIKE request_logs_legacy INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
    PARTITION BY RANGE (id);
ALTER TABLE request_logs ADD CONSTRAINT request_logs_pkey PRIMARY KEY (organization_id, id);

-- audit_events: provider-wide events under the nil UUID, keyed (organization_id, id) like
-- request_logs; the key serves an organization's trail, audit_events_id the operator's.
UPDATE audit_events SET organization_id = '00000000-0000-0000-0000-000000000000' WHERE organization_id IS NULL;
ALTER TABLE audit_events RENAME TO audit_events_legacy;
ALTER TABLE audit_events_legacy
    ALTER COLUMN organization_id SET NOT NULL,
    DROP CONSTRAINT audit_events_pkey,
    ADD CONSTRAINT audit_events_legacy_pkey PRIMARY KEY (organization_id, id);
DROP INDEX audit_events_organization_id_id;
ALTER INDEX audit_events_resource RENAME TO audit_events_legacy_resource;
CREATE INDEX audit_events_legacy_id ON audit_events_legacy (id);
CREATE TABLE audit_events (LIKE audit_events_legacy INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
    PARTITION BY RANGE (id);
ALTER TABLE audit_events ADD CONSTRAINT audit_events_pkey PRIMARY KEY (organization_id, id);
CREATE INDEX audit_events_id ON audit_events (id);
CREATE INDEX audit_events_resource ON audit_events (resource_type, resource_id);

-- Expand, not contract: the previous release inserts provider-wide events with a NULL
-- organization_id, and serves beside this one during a rolling deploy. Until the next
-- release drops this trigger, NULL is stored as the nil UUID.
-- +goose StatementBegin
CREATE FUNCTION audit_events_provider_wide() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.organization_id := coalesce(NEW.organization_id, '00000000-0000-0000-0000-000000000000');
    RETURN NEW;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER audit_events_provider_wide BEFORE INSERT ON audit_events
    FOR EACH ROW WHEN (NEW.organization_id IS NULL) EXECUTE FUNCTION audit_events_provider_wide();

-- growth_events: its rollup trigger moves to the partitioned table, which sees every row
-- routed to any partition.
DROP TRIGGER growth_events_rollup ON growth_events;
ALTER TABLE growth_events RENAME TO growth_events_legacy;
ALTER INDEX growth_events_pkey RENAME TO growth_events_legacy_pkey;
ALTER INDEX growth_events_summary RENAME TO growth_events_legacy_summary;
ALTER INDEX growth_events_organization_summary RENAME TO growth_events_legacy_organization_summary;
ALTER INDEX growth_events_future RENAME TO growth_events_legacy_future;
CREATE TABLE growth_events (LIKE growth_events_legacy INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
    PARTITION BY RANGE (id);
ALTER TABLE growth_events ADD CONSTRAINT growth_events_pkey PRIMARY KEY (id);
CREATE INDEX growth_events_summary ON growth_events (occurred_at)
    INCLUDE (traffic_type, event_name, organization_id, anonymous_id, product, source);
CREATE INDEX growth_events_organization_summary ON growth_events (organization_id, occurred_at)
    INCLUDE (traffic_type, event_name, anonymous_id, product, source);
CREATE INDEX growth_events_future ON growth_events (occurred_at)
    INCLUDE (traffic_type, event_name, organization_id, anonymous_id)
    WHERE occurred_at > received_at;
CREATE TRIGGER growth_events_rollup AFTER INSERT ON growth_events
    REFERENCING NEW TABLE AS new_events FOR EACH STATEMENT EXECUTE FUNCTION growth_rollup();

-- +goose StatementBegin
DO $$
DECLARE
    tomorrow   uuid := time_partition_bound(date_trunc('day', now(), 'UTC') + interval '1 day');
    next_month uuid := time_partition_bound(date_trunc('month', now(), 'UTC') + interval '1 month');
BEGIN
    EXECUTE format('ALTER TABLE request_logs ATTACH PARTITION request_logs_legacy FOR VALUES FROM (MINVALUE) TO (%L)', tomorrow);
    EXECUTE format('ALTER TABLE audit_events ATTACH PARTITION audit_events_legacy FOR VALUES FROM (MINVALUE) TO (%L)', next_month);
    EXECUTE format('ALTER TABLE growth_events ATTACH PARTITION growth_events_legacy FOR VALUES FROM (MINVALUE) TO (%L)', next_month);
END;
$$;
-- +goose StatementEnd

-- +goose Down
-- Back to plain tables, the rows copied (the partitions are dropped with their parents).
CREATE TABLE request_logs_plain (LIKE request_logs INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
INSERT INTO request_logs_plain SELECT * FROM request_logs;
DROP TABLE request_logs;
ALTER TABLE request_logs_plain RENAME TO request_logs;
ALTER TABLE request_logs ADD CONSTRAINT request_logs_pkey PRIMARY KEY (organization_id, id);

DROP TRIGGER audit_events_provider_wide ON audit_events;
DROP FUNCTION audit_events_provider_wide();
CREATE TABLE audit_events_plain (LIKE audit_events INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
INSERT INTO audit_events_plain SELECT * FROM audit_events;
DROP TABLE audit_events;
ALTER TABLE audit_events_plain RENAME TO audit_events;
ALTER TABLE audit_events ALTER COLUMN organization_id DROP NOT NULL;
UPDATE audit_events SET organization_id = NULL WHERE organization_id = '00000000-0000-0000-0000-000000000000';
ALTER TABLE audit_events ADD CONSTRAINT audit_events_pkey PRIMARY KEY (id);
CREATE INDEX audit_events_organization_id_id ON audit_events (organization_id, id DESC);
CREATE INDEX audit_events_resource ON audit_events (resource_type, resource_id);

CREATE TABLE growth_events_plain (LIKE growth_events INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
INSERT INTO growth_events_plain SELECT * FROM growth_events;
DROP TABLE growth_events;
ALTER TABLE growth_events_plain RENAME TO growth_events;
ALTER TABLE growth_events ADD CONSTRAINT growth_events_pkey PRIMARY KEY (id);
CREATE INDEX growth_events_summary ON growth_events (occurred_at)
    INCLUDE (traffic_type, event_name, organization_id, anonymous_id, product, source);
CREATE INDEX growth_events_organization_summary ON growth_events (organization_id, occurred_at)
    INCLUDE (traffic_type, event_name, anonymous_id, product, source);
CREATE INDEX growth_events_future ON growth_events (occurred_at)
    INCLUDE (traffic_type, event_name, organization_id, anonymous_id)
    WHERE occurred_at > received_at;
CREATE TRIGGER growth_events_rollup AFTER INSERT ON growth_events
    REFERENCING NEW TABLE AS new_events FOR EACH STATEMENT EXECUTE FUNCTION growth_rollup();

DROP FUNCTION time_partition_bound(timestamptz);
