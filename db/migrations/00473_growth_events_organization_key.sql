-- +goose Up
-- growth_events is keyed (organization_id, id) like the other partitioned tables (issue 29,
-- distribution-ready schema); id, the partition key, stays in it.
--
-- PostgreSQL cannot build the index of a partitioned table concurrently, so the key is put
-- together by hand: the parent's key is declared ONLY on the parent, and each partition's
-- index is attached to it. A partition's index is the one named <partition>_organization_key
-- when an operator built it beforehand, CONCURRENTLY (docs/operations.md: "Before upgrading to
-- the organization keys"); otherwise it is built here, and ingestion (the growth batcher's
-- COPY) waits for that build.

-- A long transaction holding one of these tables makes the migration fail after 10 s (the next
-- start retries it) instead of queueing every writer of the tables it already locked.
SET LOCAL lock_timeout = '10s';

-- +goose StatementBegin
DO $$
DECLARE
    part record;
    prebuilt text;
BEGIN
    ALTER TABLE growth_events DROP CONSTRAINT growth_events_pkey;
    ALTER TABLE ONLY growth_events ADD CONSTRAINT growth_events_pkey PRIMARY KEY (organization_id, id);
    FOR part IN SELECT i.inhrelid::regclass::text AS name FROM pg_inherits i WHERE i.inhparent = 'growth_events'::regclass LOOP
        prebuilt := part.name || '_organization_key';
        IF NOT EXISTS (SELECT 1 FROM pg_index x WHERE x.indexrelid = to_regclass(prebuilt) AND x.indisvalid) THEN
            EXECUTE format('DROP INDEX IF EXISTS %I', prebuilt); -- an invalid leftover of a failed build
            EXECUTE format('CREATE UNIQUE INDEX %I ON %I (organization_id, id)', prebuilt, part.name);
        END IF;
        EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I PRIMARY KEY USING INDEX %I', part.name, part.name || '_pkey', prebuilt);
        EXECUTE format('ALTER INDEX growth_events_pkey ATTACH PARTITION %I', part.name || '_pkey');
    END LOOP;
END $$;
-- +goose StatementEnd

-- +goose Down
ALTER TABLE growth_events DROP CONSTRAINT growth_events_pkey;
ALTER TABLE growth_events ADD PRIMARY KEY (id);
