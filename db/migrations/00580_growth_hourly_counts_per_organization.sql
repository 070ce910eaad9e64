-- +goose Up
-- The growth summary within 1.2x at 10 million events (issue 29), after 00560's daily
-- rollups: two parts of its cost still grew with the events.
--
-- 1. growth_hourly_counts per organization. The summary sums whole days from the daily counts
--    and read the window's partial first day from growth_events: up to half a day of the
--    organization's events. Now it reads the whole hours of that day from here and at most
--    half an hour of events at the boundary (postgres.spanCounts); the provider-wide summary
--    sums the same rows over organizations.
--
--    The hourly counts were provider-wide (00101). They become per organization, rather than
--    a table added beside them, so that the trigger keeps as many count tables as before.
--    The previous release reads them only summed over hours, which the per-organization rows
--    answer the same; growth_hourly_counts_hour serves its range over hours and this build's
--    provider-wide reads. The key leaves the count out (no INCLUDE) and new pages keep room
--    (fillfactor 70), so the trigger's updates of the current hour can stay on their page
--    without touching an index (HOT): this build reads at most half a day of hours, from the
--    heap, which the backfill writes in hour order.
--
--    The backfill rebuilds the counts from the stored events: hours whose events retention
--    has already dropped keep no hourly counts (the daily ones stay).
--
-- 2. Events dated after their arrival. The last sightings leave them out (a sighting in the
--    future would hide the visitor's earlier ones), so the summary looked each of the
--    window's up by key: one in ten thousand events in the benchmark, a thousand lookups for
--    a year at 10 million. Now they wait in growth_pending_sightings until their time comes,
--    and the next insert statement's trigger, whichever organization it is for, folds those
--    due into the last sightings as if they had just arrived. The summary looks up only the
--    pending ones in its window: those that came due since the last insert.
--
-- 3. Monthly counts (growth_monthly_counts, growth_provider_monthly_counts). A year summed
--    365 days of every key: 64,000 rows for the benchmark's big organization, which fills
--    every day's keys at 10 million events and few at 10 thousand. Now a window sums whole
--    months, and the days (at most half a month), hours and events at its start
--    (postgres.summaryLevels). Their keys leave the count out and their pages keep room, as
--    the hourly counts'. The backfill sums the daily counts.

SET LOCAL lock_timeout = '10s';
SET LOCAL work_mem = '256MB';
-- The backfill must see every event: writers wait until the migration commits.
LOCK TABLE growth_events IN SHARE MODE;

TRUNCATE growth_hourly_counts;
ALTER TABLE growth_hourly_counts
    DROP CONSTRAINT growth_hourly_counts_hour_internal_dimension_key_key,
    ADD COLUMN organization_id text NOT NULL;

-- growth_month is the UTC month of at.
CREATE FUNCTION growth_month(at timestamptz) RETURNS timestamptz LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN date_trunc('month', at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
CREATE TABLE growth_monthly_counts (
    organization_id text        NOT NULL,
    month           timestamptz NOT NULL,
    internal        boolean     NOT NULL,
    dimension       text        NOT NULL CHECK (dimension IN ('event_name', 'product', 'source')),
    key             text,
    events          bigint      NOT NULL,
    UNIQUE NULLS NOT DISTINCT (organization_id, month, internal, dimension, key)
) WITH (fillfactor = 70);
CREATE TABLE growth_provider_monthly_counts (
    month     timestamptz NOT NULL,
    internal  boolean     NOT NULL,
    dimension text        NOT NULL CHECK (dimension IN ('event_name', 'product', 'source')),
    key       text,
    events    bigint      NOT NULL,
    UNIQUE NULLS NOT DISTINCT (month, internal, dimension, key)
) WITH (fillfactor = 70);
INSERT INTO growth_monthly_counts (organization_id, month, internal, dimension, key, events)
SELECT organization_id, growth_month(day), internal, dimension, key, sum(events) FROM growth_daily_counts
GROUP BY 1, 2, 3, 4, 5 ORDER BY 2, 1, 3, 4, 5;
INSERT INTO growth_provider_monthly_counts (month, internal, dimension, key, events)
SELECT growth_month(day), internal, dimension, key, sum(events) FROM growth_provider_daily_counts
GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4;

CREATE TABLE growth_pending_sightings (
    organization_id text        NOT NULL,
    id              uuid        NOT NULL,
    occurred_at     timestamptz NOT NULL,
    event_name      text        NOT NULL,
    traffic_type    text        NOT NULL,
    anonymous_id    text,
    PRIMARY KEY (organization_id, id)
);
CREATE INDEX growth_pending_sightings_occurred_at ON growth_pending_sightings (occurred_at);
INSERT INTO growth_pending_sightings (organization_id, id, occurred_at, event_name, traffic_type, anonymous_id)
SELECT organization_id, id, occurred_at, event_name, traffic_type, anonymous_id FROM growth_events
WHERE occurred_at > received_at;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION growth_rollup() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    due growth_pending_sightings[]; -- events dated after their arrival whose time has come
BEGIN
    INSERT INTO growth_pending_sightings (organization_id, id, occurred_at, event_name, traffic_type, anonymous_id)
    SELECT organization_id, id, occurred_at, event_name, traffic_type, anonymous_id FROM new_events
    WHERE occurred_at > received_at;
    IF EXISTS (SELECT FROM growth_pending_sightings WHERE occurred_at <= now()) THEN
        -- Another inserting transaction may be folding some: it keeps them (SKIP LOCKED).
        WITH folded AS (
            DELETE FROM growth_pending_sightings
            WHERE (organization_id, id) IN (
                SELECT organization_id, id FROM growth_pending_sightings WHERE occurred_at <= now()
                FOR UPDATE SKIP LOCKED)
            RETURNING *
        )
        SELECT array_agg(folded) INTO due FROM folded;
    END IF;

    -- Rows are upserted in key order, so concurrent inserts lock them in the same order.
    -- Counts: one pass over the new events, at the finest grain, then summed to each table.
    WITH e AS (
        SELECT organization_id,
               date_bin('1 hour', occurred_at, timestamptz '2000-01-01 00:00:00+00') AS hour,
               traffic_type IN ('employee', 'internal', 'synthetic', 'automated_qa', 'load_test') AS internal,
               d.dimension, d.key, count(*) AS events
        FROM new_events
        CROSS JOIN LATERAL (VALUES ('event_name', event_name), ('product', product), ('source', source)) AS d (dimension, key)
        GROUP BY 1, 2, 3, 4, 5
    ), hourly AS (
        INSERT INTO growth_hourly_counts AS c (organization_id, hour, internal, dimension, key, events)
        SELECT organization_id, hour, internal, dimension, key, events FROM e
        ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT (organization_id, hour, internal, dimension, key) DO UPDATE SET events = c.events + excluded.events
    ), provider AS (
        INSERT INTO growth_provider_daily_counts AS c (day, internal, dimension, key, events)
        SELECT growth_day(hour), internal, dimension, key, sum(events) FROM e
        GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        ON CONFLICT (day, internal, dimension, key) DO UPDATE SET events = c.events + excluded.events
    ), monthly AS (
        INSERT INTO growth_monthly_counts AS c (organization_id, month, internal, dimension, key, events)
        SELECT organization_id, growth_month(hour), internal, dimension, key, sum(events) FROM e
        GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT (organization_id, month, internal, dimension, key) DO UPDATE SET events = c.events + excluded.events
    ), provider_monthly AS (
        INSERT INTO growth_provider_monthly_counts AS c (month, internal, dimension, key, events)
        SELECT growth_month(hour), internal, dimension, key, sum(events) FROM e
        GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        ON CONFLICT (month, internal, dimension, key) DO UPDATE SET events = c.events + excluded.events
    )
    INSERT INTO growth_daily_counts AS c (organization_id, day, internal, dimension, key, events)
    SELECT organization_id, growth_day(hour), internal, dimension, key, sum(events) FROM e
    GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (organization_id, day, internal, dimension, key) DO UPDATE SET events = c.events + excluded.events;

    -- Last sightings (events dated after their arrival are left to growth_events_future) and
    -- the moves of their days. An update happens only when a sighting is later than the last.
    WITH seen AS (
        SELECT organization_id, anonymous_id,
               max(occurred_at) FILTER (WHERE traffic_type NOT IN ('employee', 'internal', 'synthetic', 'automated_qa', 'load_test')) AS last_external,
               max(occurred_at) AS last_any
        FROM (SELECT organization_id, event_name, traffic_type, anonymous_id, occurred_at FROM new_events WHERE occurred_at <= received_at
              UNION ALL SELECT organization_id, event_name, traffic_type, anonymous_id, occurred_at FROM unnest(due)) seen_events
        WHERE anonymous_id IS NOT NULL
        GROUP BY 1, 2
    ), provider AS (
        INSERT INTO growth_visitors AS v (anonymous_id, last_external, last_any)
        SELECT anonymous_id, max(last_external), max(last_any) FROM seen
        GROUP BY 1 ORDER BY 1
        ON CONFLICT (anonymous_id) DO UPDATE
        SET prev_external = v.last_external, prev_any = v.last_any,
            last_external = greatest(v.last_external, excluded.last_external), last_any = greatest(v.last_any, excluded.last_any)
        WHERE excluded.last_any > v.last_any OR excluded.last_external > coalesce(v.last_external, '-infinity')
        RETURNING v.prev_external, v.last_external, v.prev_any, v.last_any
    ), provider_days AS (
        INSERT INTO growth_visitor_days AS d (day, any_traffic, visitors)
        SELECT m.day, m.any_traffic, sum(m.delta) FROM provider, growth_moves(prev_external, last_external, prev_any, last_any) m
        WHERE m.day IS NOT NULL
        GROUP BY 1, 2 HAVING sum(m.delta) <> 0 ORDER BY 1, 2
        ON CONFLICT (day, any_traffic) DO UPDATE SET visitors = d.visitors + excluded.visitors
    ), organization AS (
        INSERT INTO growth_organization_visitors AS v (organization_id, anonymous_id, last_external, last_any)
        SELECT organization_id, anonymous_id, last_external, last_any FROM seen
        ORDER BY 1, 2
        ON CONFLICT (organization_id, anonymous_id) DO UPDATE
        SET prev_external = v.last_external, prev_any = v.last_any,
            last_external = greatest(v.last_external, excluded.last_external), last_any = greatest(v.last_any, excluded.last_any)
        WHERE excluded.last_any > v.last_any OR excluded.last_external > coalesce(v.last_external, '-infinity')
        RETURNING v.organization_id, v.prev_external, v.last_external, v.prev_any, v.last_any
    )
    INSERT INTO growth_organization_visitor_days AS d (organization_id, day, any_traffic, visitors)
    SELECT organization_id, m.day, m.any_traffic, sum(m.delta) FROM organization, growth_moves(prev_external, last_external, prev_any, last_any) m
    WHERE m.day IS NOT NULL
    GROUP BY 1, 2, 3 HAVING sum(m.delta) <> 0 ORDER BY 1, 2, 3
    ON CONFLICT (organization_id, day, any_traffic) DO UPDATE SET visitors = d.visitors + excluded.visitors;

    INSERT INTO growth_organizations AS o (organization_id, last_external, last_any)
    SELECT organization_id,
           max(occurred_at) FILTER (WHERE traffic_type NOT IN ('employee', 'internal', 'synthetic', 'automated_qa', 'load_test')),
           max(occurred_at)
    FROM (SELECT organization_id, event_name, traffic_type, anonymous_id, occurred_at FROM new_events WHERE occurred_at <= received_at
          UNION ALL SELECT organization_id, event_name, traffic_type, anonymous_id, occurred_at FROM unnest(due)) seen_events
    GROUP BY organization_id
    ORDER BY organization_id
    ON CONFLICT (organization_id) DO UPDATE
    SET last_external = greatest(o.last_external, excluded.last_external), last_any = greatest(o.last_any, excluded.last_any);

    -- actor: 'a:' || anonymous_id, or 'o:' || organization_id for events without a visitor.
    WITH seen AS (
        SELECT organization_id, event_name, coalesce('a:' || anonymous_id, 'o:' || organization_id) AS actor,
               max(occurred_at) FILTER (WHERE traffic_type NOT IN ('employee', 'internal', 'synthetic', 'automated_qa', 'load_test')) AS last_external,
               max(occurred_at) AS last_any
        FROM (SELECT organization_id, event_name, traffic_type, anonymous_id, occurred_at FROM new_events WHERE occurred_at <= received_at
              UNION ALL SELECT organization_id, event_name, traffic_type, anonymous_id, occurred_at FROM unnest(due)) seen_events
        GROUP BY 1, 2, 3
    ), provider AS (
        INSERT INTO growth_actors AS a (event_name, actor, last_external, last_any)
        SELECT event_name, actor, max(last_external), max(last_any) FROM seen
        GROUP BY 1, 2 ORDER BY 1, 2
        ON CONFLICT (event_name, actor) DO UPDATE
        SET prev_external = a.last_external, prev_any = a.last_any,
            last_external = greatest(a.last_external, excluded.last_external), last_any = greatest(a.last_any, excluded.last_any)
        WHERE excluded.last_any > a.last_any OR excluded.last_external > coalesce(a.last_external, '-infinity')
        RETURNING a.event_name, a.prev_external, a.last_external, a.prev_any, a.last_any
    ), provider_days AS (
        INSERT INTO growth_actor_days AS d (event_name, day, any_traffic, actors)
        SELECT event_name, m.day, m.any_traffic, sum(m.delta) FROM provider, growth_moves(prev_external, last_external, prev_any, last_any) m
        WHERE m.day IS NOT NULL
        GROUP BY 1, 2, 3 HAVING sum(m.delta) <> 0 ORDER BY 1, 2, 3
        ON CONFLICT (event_name, day, any_traffic) DO UPDATE SET actors = d.actors + excluded.actors
    ), organization AS (
        INSERT INTO growth_organization_actors AS a (organization_id, event_name, actor, last_external, last_any)
        SELECT organization_id, event_name, actor, last_external, last_any FROM seen
        WHERE event_name IN ('page_view', 'signup_started', 'organization_created', 'sandbox_provisioned', 'credential_created',
                             'first_request', 'first_success', 'plan_selected', 'subscription_active')
        ORDER BY 1, 2, 3
        ON CONFLICT (organization_id, event_name, actor) DO UPDATE
        SET prev_external = a.last_external, prev_any = a.last_any,
            last_external = greatest(a.last_external, excluded.last_external), last_any = greatest(a.last_any, excluded.last_any)
        WHERE excluded.last_any > a.last_any OR excluded.last_external > coalesce(a.last_external, '-infinity')
        RETURNING a.organization_id, a.event_name, a.prev_external, a.last_external, a.prev_any, a.last_any
    )
    INSERT INTO growth_organization_actor_days AS d (organization_id, event_name, day, any_traffic, actors)
    SELECT organization_id, event_name, m.day, m.any_traffic, sum(m.delta) FROM organization, growth_moves(prev_external, last_external, prev_any, last_any) m
    WHERE m.day IS NOT NULL
    GROUP BY 1, 2, 3, 4 HAVING sum(m.delta) <> 0 ORDER BY 1, 2, 3, 4
    ON CONFLICT (organization_id, event_name, day, any_traffic) DO UPDATE SET actors = d.actors + excluded.actors;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

INSERT INTO growth_hourly_counts (organization_id, hour, internal, dimension, key, events)
SELECT organization_id, date_bin('1 hour', occurred_at, timestamptz '2000-01-01 00:00:00+00'), internal, d.dimension, d.key, count(*)
FROM (SELECT organization_id, occurred_at, event_name, product, source,
             traffic_type IN ('employee', 'internal', 'synthetic', 'automated_qa', 'load_test') AS internal
      FROM growth_events) g
CROSS JOIN LATERAL (VALUES ('event_name', event_name), ('product', product), ('source', source)) AS d (dimension, key)
GROUP BY 1, 2, 3, 4, 5
ORDER BY 2, 1, 3, 4, 5;
-- Room on the pages written from now on (the backfilled hours are full: they seldom change).
ALTER TABLE growth_hourly_counts SET (fillfactor = 70),
    ADD CONSTRAINT growth_hourly_counts_key UNIQUE NULLS NOT DISTINCT (organization_id, hour, internal, dimension, key);
CREATE INDEX growth_hourly_counts_hour ON growth_hourly_counts (hour);

-- A statement inserting no event runs the trigger, which folds the pending sightings already
-- due into the last sightings.
INSERT INTO growth_events (id, organization_id, occurred_at, event_name, traffic_type) SELECT NULL, NULL, NULL, NULL, NULL WHERE false;
ANALYZE growth_hourly_counts, growth_pending_sightings, growth_monthly_counts, growth_provider_monthly_counts;

-- +goose Down
SET LOCAL lock_timeout = '10s';
LOCK TABLE growth_events IN SHARE MODE;
-- The function of 00560.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION growth_rollup() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Rows are upserted in key order, so concurrent inserts lock them in the same order.
    -- Counts: one pass over the new events, at the finest grain, then summed to each table.
    WITH e AS (
        SELECT organization_id,
               date_bin('1 hour', occurred_at, timestamptz '2000-01-01 00:00:00+00') AS hour,
               traffic_type IN ('employee', 'internal', 'synthetic', 'automated_qa', 'load_test') AS internal,
               d.dimension, d.key, count(*) AS events
        FROM new_events
        CROSS JOIN LATERAL (VALUES ('event_name', event_name), ('product', product), ('source', source)) AS d (dimension, key)
        GROUP BY 1, 2, 3, 4, 5
    ), hourly AS (
        INSERT INTO growth_hourly_counts AS c (hour, internal, dimension, key, events)
        SELECT hour, internal, dimension, key, sum(events) FROM e
        GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        ON CONFLICT (hour, internal, dimension, key) DO UPDATE SET events = c.events + excluded.events
    ), provider AS (
        INSERT INTO growth_provider_daily_counts AS c (day, internal, dimension, key, events)
        SELECT growth_day(hour), internal, dimension, key, sum(events) FROM e
        GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        ON CONFLICT (day, internal, dimension, key) DO UPDATE SET events = c.events + excluded.events
    )
    INSERT INTO growth_daily_counts AS c (organization_id, day, internal, dimension, key, events)
    SELECT organization_id, growth_day(hour), internal, dimension, key, sum(events) FROM e
    GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (organization_id, day, internal, dimension, key) DO UPDATE SET events = c.events + excluded.events;

    -- Last sightings (events dated after their arrival are left to growth_events_future) and
    -- the moves of their days. An update happens only when a sighting is later than the last.
    WITH seen AS (
        SELECT organization_id, anonymous_id,
               max(occurred_at) FILTER (WHERE traffic_type NOT IN ('employee', 'internal', 'synthetic', 'automated_qa', 'load_test')) AS last_external,
               max(occurred_at) AS last_any
        FROM new_events
        WHERE anonymous_id IS NOT NULL AND occurred_at <= received_at
        GROUP BY 1, 2
    ), provider AS (
        INSERT INTO growth_visitors AS v (anonymous_id, last_external, last_any)
        SELECT anonymous_id, max(last_external), max(last_any) FROM seen
        GROUP BY 1 ORDER BY 1
        ON CONFLICT (anonymous_id) DO UPDATE
        SET prev_external = v.last_external, prev_any = v.last_any,
            last_external = greatest(v.last_external, excluded.last_external), last_any = greatest(v.last_any, excluded.last_any)
        WHERE excluded.last_any > v.last_any OR excluded.last_external > coalesce(v.last_external, '-infinity')
        RETURNING v.prev_external, v.last_external, v.prev_any, v.last_any
    ), provider_days AS (
        INSERT INTO growth_visitor_days AS d (day, any_traffic, visitors)
        SELECT m.day, m.any_traffic, sum(m.delta) FROM provider, growth_moves(prev_external, last_external, prev_any, last_any) m
        WHERE m.day IS NOT NULL
        GROUP BY 1, 2 HAVING sum(m.delta) <> 0 ORDER BY 1, 2
        ON CONFLICT (day, any_traffic) DO UPDATE SET visitors = d.visitors + excluded.visitors
    ), organization AS (
        INSERT INTO growth_organization_visitors AS v (organization_id, anonymous_id, last_external, last_any)
        SELECT organization_id, anonymous_id, last_external, last_any FROM seen
        ORDER BY 1, 2
        ON CONFLICT (organization_id, anonymous_id) DO UPDATE
        SET prev_external = v.last_external, prev_any = v.last_any,
            last_external = greatest(v.last_external, excluded.last_external), last_any = greatest(v.last_any, excluded.last_any)
        WHERE excluded.last_any > v.last_any OR excluded.last_external > coalesce(v.last_external, '-infinity')
        RETURNING v.organization_id, v.prev_external, v.last_external, v.prev_any, v.last_any
    )
    INSERT INTO growth_organization_visitor_days AS d (organization_id, day, any_traffic, visitors)
    SELECT organization_id, m.day, m.any_traffic, sum(m.delta) FROM organization, growth_moves(prev_external, last_external, prev_any, last_any) m
    WHERE m.day IS NOT NULL
    GROUP BY 1, 2, 3 HAVING sum(m.delta) <> 0 ORDER BY 1, 2, 3
    ON CONFLICT (organization_id, day, any_traffic) DO UPDATE SET visitors = d.visitors + excluded.visitors;

    INSERT INTO growth_organizations AS o (organization_id, last_external, last_any)
    SELECT organization_id,
           max(occurred_at) FILTER (WHERE traffic_type NOT IN ('employee', 'internal', 'synthetic', 'automated_qa', 'load_test')),
           max(occurred_at)
    FROM new_events
    WHERE occurred_at <= received_at
    GROUP BY organization_id
    ORDER BY organization_id
    ON CONFLICT (organization_id) DO UPDATE
    SET last_external = greatest(o.last_external, excluded.last_external), last_any = greatest(o.last_any, excluded.last_any);

    -- actor: 'a:' || anonymous_id, or 'o:' || organization_id for events without a visitor.
    WITH seen AS (
        SELECT organization_id, event_name, coalesce('a:' || anonymous_id, 'o:' || organization_id) AS actor,
               max(occurred_at) FILTER (WHERE traffic_type NOT IN ('employee', 'internal', 'synthetic', 'automated_qa', 'load_test')) AS last_external,
               max(occurred_at) AS last_any
        FROM new_events
        WHERE occurred_at <= received_at
        GROUP BY 1, 2, 3
    ), provider AS (
        INSERT INTO growth_actors AS a (event_name, actor, last_external, last_any)
        SELECT event_name, actor, max(last_external), max(last_any) FROM seen
        GROUP BY 1, 2 ORDER BY 1, 2
        ON CONFLICT (event_name, actor) DO UPDATE
        SET prev_external = a.last_external, prev_any = a.last_any,
            last_external = greatest(a.last_external, excluded.last_external), last_any = greatest(a.last_any, excluded.last_any)
        WHERE excluded.last_any > a.last_any OR excluded.last_external > coalesce(a.last_external, '-infinity')
        RETURNING a.event_name, a.prev_external, a.last_external, a.prev_any, a.last_any
    ), provider_days AS (
        INSERT INTO growth_actor_days AS d (event_name, day, any_traffic, actors)
        SELECT event_name, m.day, m.any_traffic, sum(m.delta) FROM provider, growth_moves(prev_external, last_external, prev_any, last_any) m
        WHERE m.day IS NOT NULL
        GROUP BY 1, 2, 3 HAVING sum(m.delta) <> 0 ORDER BY 1, 2, 3
        ON CONFLICT (event_name, day, any_traffic) DO UPDATE SET actors = d.actors + excluded.actors
    ), organization AS (
        INSERT INTO growth_organization_actors AS a (organization_id, event_name, actor, last_external, last_any)
        SELECT organization_id, event_name, actor, last_external, last_any FROM seen
        WHERE event_name IN ('page_view', 'signup_started', 'organization_created', 'sandbox_provisioned', 'credential_created',
                             'first_request', 'first_success', 'plan_selected', 'subscription_active')
        ORDER BY 1, 2, 3
        ON CONFLICT (organization_id, event_name, actor) DO UPDATE
        SET prev_external = a.last_external, prev_any = a.last_any,
            last_external = greatest(a.last_external, excluded.last_external), last_any = greatest(a.last_any, excluded.last_any)
        WHERE excluded.last_any > a.last_any OR excluded.last_external > coalesce(a.last_external, '-infinity')
        RETURNING a.organization_id, a.event_name, a.prev_external, a.last_external, a.prev_any, a.last_any
    )
    INSERT INTO growth_organization_actor_days AS d (organization_id, event_name, day, any_traffic, actors)
    SELECT organization_id, event_name, m.day, m.any_traffic, sum(m.delta) FROM organization, growth_moves(prev_external, last_external, prev_any, last_any) m
    WHERE m.day IS NOT NULL
    GROUP BY 1, 2, 3, 4 HAVING sum(m.delta) <> 0 ORDER BY 1, 2, 3, 4
    ON CONFLICT (organization_id, event_name, day, any_traffic) DO UPDATE SET actors = d.actors + excluded.actors;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
DROP TABLE growth_pending_sightings, growth_monthly_counts, growth_provider_monthly_counts;
DROP FUNCTION growth_month(timestamptz);
CREATE TEMPORARY TABLE provider_hourly_counts ON COMMIT DROP AS
SELECT hour, internal, dimension, key, sum(events)::bigint AS events FROM growth_hourly_counts GROUP BY 1, 2, 3, 4;
TRUNCATE growth_hourly_counts;
DROP INDEX growth_hourly_counts_hour;
ALTER TABLE growth_hourly_counts DROP CONSTRAINT growth_hourly_counts_key, DROP COLUMN organization_id, RESET (fillfactor);
INSERT INTO growth_hourly_counts (hour, internal, dimension, key, events) SELECT * FROM provider_hourly_counts;
ALTER TABLE growth_hourly_counts
    ADD CONSTRAINT growth_hourly_counts_hour_internal_dimension_key_key UNIQUE NULLS NOT DISTINCT (hour, internal, dimension, key);
