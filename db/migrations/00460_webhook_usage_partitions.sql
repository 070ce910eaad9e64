-- +goose Up
-- Webhook events with their deliveries and attempts, and usage events, are partitioned by
-- time like request_logs (migration 00390; docs/design.md "Partitions and retention"), so
-- that retention drops whole partitions instead of the batched delete sweep.
--
-- webhook_events is partitioned by day on its UUIDv7 id. A delivery is updated for days after
-- its event (retries, resend, recover creates deliveries for old events), so deliveries and
-- attempts are partitioned by their EVENT's id, with the same daily bounds: an event, its
-- deliveries and their attempts always sit in partitions of the same day, and
-- postgres.MaintainPartitions drops the three together (attempts, then deliveries, then
-- events), never while one of the day's deliveries is pending. Attempts gain event_id for it.
--
-- Keys hold organization_id and the partition key (a distributed PostgreSQL shards by
-- organization): events (organization_id, id), deliveries (organization_id, event_id, id),
-- attempts (organization_id, event_id, id); the foreign keys between them carry both.
--
-- usage_events is partitioned by month on its id (when the usage was recorded), keyed
-- (organization_id, id).
--
-- As in 00390, the rows stored so far are not copied: each table becomes the first partition
-- ("<table>_legacy") of its partitioned table, bounded by the start of tomorrow (webhook
-- tables) or of next month (usage events).

-- The foreign keys between the webhook tables are rebuilt on the partitioned tables.
ALTER TABLE webhook_delivery_attempts DROP CONSTRAINT webhook_delivery_attempts_delivery_id_fkey;
ALTER TABLE webhook_deliveries
    DROP CONSTRAINT webhook_deliveries_event_id_fkey,
    DROP CONSTRAINT webhook_deliveries_endpoint_id_fkey;

-- The deliveries' endpoint key carries the organization too.
ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_endpoints_organization_id_id_key UNIQUE (organization_id, id);
DROP INDEX webhook_endpoints_organization_id_id;

-- An attempt's event: its delivery's.
ALTER TABLE webhook_delivery_attempts ADD COLUMN event_id uuid;
UPDATE webhook_delivery_attempts a SET event_id = d.event_id FROM webhook_deliveries d WHERE d.id = a.delivery_id;
DELETE FROM webhook_delivery_attempts WHERE event_id IS NULL; -- none: the delivery cascaded

-- webhook_events
ALTER TABLE webhook_events RENAME TO webhook_events_legacy;
ALTER TABLE webhook_events_legacy DROP CONSTRAINT webhook_events_pkey;
DROP INDEX webhook_events_organization_id_id; -- the new key's index replaces it
ALTER TABLE webhook_events_legacy DROP CONSTRAINT webhook_events_organization_id_fkey;
ALTER INDEX webhook_events_organization_id_type_id RENAME TO webhook_events_legacy_organization_id_type_id;
ALTER INDEX webhook_events_created_at RENAME TO webhook_events_legacy_created_at;
CREATE TABLE webhook_events (LIKE webhook_events_legacy INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
    PARTITION BY RANGE (id);
ALTER TABLE webhook_events
    ADD CONSTRAINT webhook_events_pkey PRIMARY KEY (organization_id, id),
    ADD CONSTRAINT webhook_events_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations (id);
CREATE INDEX webhook_events_organization_id_type_id ON webhook_events (organization_id, type, id);
-- The operator's reads of every organization's events (the key leads with the organization).
CREATE INDEX webhook_events_id ON webhook_events (id);
-- Only the previous release's sweep reads by created_at; the next release drops this index.
CREATE INDEX webhook_events_created_at ON webhook_events (created_at);

-- webhook_deliveries
ALTER TABLE webhook_deliveries RENAME TO webhook_deliveries_legacy;
ALTER TABLE webhook_deliveries_legacy
    DROP CONSTRAINT webhook_deliveries_pkey,
    DROP CONSTRAINT webhook_deliveries_event_id_endpoint_id_key,
    DROP CONSTRAINT webhook_deliveries_organization_id_fkey;
ALTER INDEX webhook_deliveries_endpoint_id_id RENAME TO webhook_deliveries_legacy_endpoint_id_id;
ALTER INDEX webhook_deliveries_endpoint_unsucceeded RENAME TO webhook_deliveries_legacy_endpoint_unsucceeded;
CREATE TABLE webhook_deliveries (LIKE webhook_deliveries_legacy INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
    PARTITION BY RANGE (event_id);
ALTER TABLE webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (organization_id, event_id, id),
    ADD CONSTRAINT webhook_deliveries_event_id_endpoint_id_key UNIQUE (organization_id, event_id, endpoint_id);
CREATE INDEX webhook_deliveries_endpoint_id_id ON webhook_deliveries (endpoint_id, id);
CREATE INDEX webhook_deliveries_endpoint_unsucceeded ON webhook_deliveries (endpoint_id, id) WHERE status <> 'succeeded';
-- A delivery read by its id alone (resend, and the jobs queued by the previous release, which
-- do not carry the event): one probe per partition.
CREATE INDEX webhook_deliveries_id ON webhook_deliveries (id);
-- Whether a day's partition still holds a pending delivery (it is then not dropped).
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (event_id) WHERE status = 'pending';

-- webhook_delivery_attempts
ALTER TABLE webhook_delivery_attempts RENAME TO webhook_delivery_attempts_legacy;
ALTER TABLE webhook_delivery_attempts_legacy
    ALTER COLUMN event_id SET NOT NULL,
    DROP CONSTRAINT webhook_delivery_attempts_pkey,
    DROP CONSTRAINT webhook_delivery_attempts_delivery_id_attempt_key,
    DROP CONSTRAINT webhook_delivery_attempts_organization_id_fkey;
CREATE TABLE webhook_delivery_attempts (LIKE webhook_delivery_attempts_legacy INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
    PARTITION BY RANGE (event_id);
ALTER TABLE webhook_delivery_attempts
    ADD CONSTRAINT webhook_delivery_attempts_pkey PRIMARY KEY (organization_id, event_id, id),
    ADD CONSTRAINT webhook_delivery_attempts_delivery_id_attempt_key UNIQUE (organization_id, event_id, delivery_id, attempt);

-- usage_events
ALTER TABLE usage_events RENAME TO usage_events_legacy;
ALTER TABLE usage_events_legacy
    DROP CONSTRAINT usage_events_pkey,
    DROP CONSTRAINT usage_events_organization_id_fkey;
ALTER INDEX usage_events_organization_product_occurred RENAME TO usage_events_legacy_organization_product_occurred;
CREATE TABLE usage_events (LIKE usage_events_legacy INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
    PARTITION BY RANGE (id);
ALTER TABLE usage_events
    ADD CONSTRAINT usage_events_pkey PRIMARY KEY (organization_id, id),
    ADD CONSTRAINT usage_events_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations (id);
CREATE INDEX usage_events_organization_product_occurred ON usage_events (organization_id, product, occurred_at);

-- +goose StatementBegin
DO $$
DECLARE
    tomorrow   uuid := time_partition_bound(date_trunc('day', now(), 'UTC') + interval '1 day');
    next_month uuid := time_partition_bound(date_trunc('month', now(), 'UTC') + interval '1 month');
BEGIN
    EXECUTE format('ALTER TABLE webhook_events ATTACH PARTITION webhook_events_legacy FOR VALUES FROM (MINVALUE) TO (%L)', tomorrow);
    EXECUTE format('ALTER TABLE webhook_deliveries ATTACH PARTITION webhook_deliveries_legacy FOR VALUES FROM (MINVALUE) TO (%L)', tomorrow);
    EXECUTE format('ALTER TABLE webhook_delivery_attempts ATTACH PARTITION webhook_delivery_attempts_legacy FOR VALUES FROM (MINVALUE) TO (%L)', tomorrow);
    EXECUTE format('ALTER TABLE usage_events ATTACH PARTITION usage_events_legacy FOR VALUES FROM (MINVALUE) TO (%L)', next_month);
END;
$$;
-- +goose StatementEnd

ALTER TABLE webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations (id),
    ADD CONSTRAINT webhook_deliveries_event_id_fkey FOREIGN KEY (organization_id, event_id)
        REFERENCES webhook_events (organization_id, id) ON DELETE CASCADE,
    ADD CONSTRAINT webhook_deliveries_endpoint_id_fkey FOREIGN KEY (organization_id, endpoint_id)
        REFERENCES webhook_endpoints (organization_id, id) ON DELETE CASCADE;
ALTER TABLE webhook_delivery_attempts
    ADD CONSTRAINT webhook_delivery_attempts_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations (id),
    ADD CONSTRAINT webhook_delivery_attempts_delivery_id_fkey FOREIGN KEY (organization_id, event_id, delivery_id)
        REFERENCES webhook_deliveries (organization_id, event_id, id) ON DELETE CASCADE;

-- Expand, not contract: the previous release, serving beside this one during a rolling
-- deploy, records attempts without their event_id. A NULL partition key is routed to the
-- DEFAULT partition, whose trigger stores the attempt again with its delivery's event_id (in
-- that day's partition) and keeps nothing itself: the DEFAULT partition stays empty, so
-- creating partitions beside it reads nothing. The next release drops it and makes event_id
-- NOT NULL.
CREATE TABLE webhook_delivery_attempts_unrouted PARTITION OF webhook_delivery_attempts DEFAULT;
-- +goose StatementBegin
CREATE FUNCTION webhook_delivery_attempts_route() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.event_id IS NOT NULL THEN -- an event whose day has no partition: refused, as without a DEFAULT
        RAISE EXCEPTION 'no partition of webhook_delivery_attempts for event %', NEW.event_id
            USING ERRCODE = 'check_violation';
    END IF;
    NEW.event_id := (SELECT d.event_id FROM webhook_deliveries d
                     WHERE d.organization_id = NEW.organization_id AND d.id = NEW.delivery_id);
    IF NEW.event_id IS NOT NULL THEN
        INSERT INTO webhook_delivery_attempts SELECT NEW.*;
    END IF;
    RETURN NULL; -- a delivery that is gone (its endpoint deleted) keeps no attempt
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER webhook_delivery_attempts_route BEFORE INSERT ON webhook_delivery_attempts_unrouted
    FOR EACH ROW EXECUTE FUNCTION webhook_delivery_attempts_route();

-- +goose Down
-- Back to plain tables, the rows copied (the partitions are dropped with their parents).
DROP TABLE webhook_delivery_attempts_unrouted;
DROP FUNCTION webhook_delivery_attempts_route();

CREATE TABLE usage_events_plain (LIKE usage_events INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
INSERT INTO usage_events_plain SELECT * FROM usage_events;
DROP TABLE usage_events;
ALTER TABLE usage_events_plain RENAME TO usage_events;
ALTER TABLE usage_events
    ADD CONSTRAINT usage_events_pkey PRIMARY KEY (id),
    ADD CONSTRAINT usage_events_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations (id);
CREATE INDEX usage_events_organization_product_occurred ON usage_events (organization_id, product, occurred_at);

CREATE TABLE webhook_events_plain (LIKE webhook_events INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
CREATE TABLE webhook_deliveries_plain (LIKE webhook_deliveries INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
CREATE TABLE webhook_delivery_attempts_plain (LIKE webhook_delivery_attempts INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
INSERT INTO webhook_events_plain SELECT * FROM webhook_events;
INSERT INTO webhook_deliveries_plain SELECT * FROM webhook_deliveries;
INSERT INTO webhook_delivery_attempts_plain SELECT * FROM webhook_delivery_attempts;
DROP TABLE webhook_delivery_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_events;
ALTER TABLE webhook_events_plain RENAME TO webhook_events;
ALTER TABLE webhook_deliveries_plain RENAME TO webhook_deliveries;
ALTER TABLE webhook_delivery_attempts_plain RENAME TO webhook_delivery_attempts;
ALTER TABLE webhook_delivery_attempts DROP COLUMN event_id;

ALTER TABLE webhook_endpoints DROP CONSTRAINT webhook_endpoints_organization_id_id_key;
CREATE INDEX IF NOT EXISTS webhook_endpoints_organization_id_id ON webhook_endpoints (organization_id, id);

ALTER TABLE webhook_events
    ADD CONSTRAINT webhook_events_pkey PRIMARY KEY (id),
    ADD CONSTRAINT webhook_events_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations (id);
CREATE INDEX webhook_events_organization_id_id ON webhook_events (organization_id, id);
CREATE INDEX webhook_events_organization_id_type_id ON webhook_events (organization_id, type, id);
CREATE INDEX webhook_events_created_at ON webhook_events (created_at);

ALTER TABLE webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id),
    ADD CONSTRAINT webhook_deliveries_event_id_endpoint_id_key UNIQUE (event_id, endpoint_id),
    ADD CONSTRAINT webhook_deliveries_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations (id),
    ADD CONSTRAINT webhook_deliveries_event_id_fkey FOREIGN KEY (event_id) REFERENCES webhook_events (id) ON DELETE CASCADE,
    ADD CONSTRAINT webhook_deliveries_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints (id) ON DELETE CASCADE;
CREATE INDEX webhook_deliveries_endpoint_id_id ON webhook_deliveries (endpoint_id, id);
CREATE INDEX webhook_deliveries_endpoint_unsucceeded ON webhook_deliveries (endpoint_id, id) WHERE status <> 'succeeded';

ALTER TABLE webhook_delivery_attempts
    ADD CONSTRAINT webhook_delivery_attempts_pkey PRIMARY KEY (id),
    ADD CONSTRAINT webhook_delivery_attempts_delivery_id_attempt_key UNIQUE (delivery_id, attempt),
    ADD CONSTRAINT webhook_delivery_attempts_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations (id),
    ADD CONSTRAINT webhook_delivery_attempts_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES webhook_deliveries (id) ON DELETE CASCADE;
