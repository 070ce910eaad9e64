-- +goose Up
-- Daily rollups of growth_events, so that a growth summary's cost follows the days of its
-- window rather than its events (issue 29: within 1.2x at 10 million events), for one
-- organization as for the whole provider. The summary's window always ends now, so:
--
-- * events per dimension are sums of whole days, with the partial first and last days read
--   from growth_events (at most half a day: the shorter side of the first day's boundary);
-- * distinct visitors and funnel actors in the window are those last seen at or after since.
--   Each is counted on the day it was last seen (the *_days tables); when it is seen again
--   later the trigger moves it from its old day to its new one. A window's distinct count is
--   the sum over the days after its first, plus the few last seen on the first day after
--   since (an index range on the last-seen time).
--
-- Everything is kept by growth_events' statement trigger in the transaction of the insert,
-- whichever binary writes (the previous release included). growth_hourly_counts stays kept
-- for the previous release, which reads it; this one no longer does.
--
-- prev_external / prev_any hold a last-seen time's value before the trigger's latest update
-- of the row: RETURNING gives only the new row, and the move from the old day needs the old.
-- A backdated event (older than the last sighting) changes no row, so no day.

SET LOCAL lock_timeout = '10s';
SET LOCAL work_mem = '256MB';
-- The backfill must see every event: writers wait until the migration commits.
LOCK TABLE growth_events IN SHARE MODE;

-- Events per UTC day of one organization, and of every organization.
CREATE TABLE growth_daily_counts (
    organization_id text        NOT NULL,
    day             timestamptz NOT NULL,
    internal        boolean     NOT NULL,
    dimension       text        NOT NULL CHECK (dimension IN ('event_name', 'product', 'source')),
    key             text,       -- NULL: events without a product or source
    events          bigint      NOT NULL,
    UNIQUE NULLS NOT DISTINCT (organization_id, day, internal, dimension, key) INCLUDE (events)
);
CREATE TABLE growth_provider_daily_counts (
    day       timestamptz NOT NULL,
    internal  boolean     NOT NULL,
    dimension text        NOT NULL CHECK (dimension IN ('event_name', 'product', 'source')),
    key       text,
    events    bigint      NOT NULL,
    UNIQUE NULLS NOT DISTINCT (day, internal, dimension, key) INCLUDE (events)
);

-- When each visitor and funnel actor was last seen in one organization (growth_visitors and
-- growth_actors are the provider-wide ones). Actors are kept for the funnel's steps only
-- (core.GrowthFunnel), which is all the summary counts them for.
CREATE TABLE growth_organization_visitors (
    organization_id text        NOT NULL,
    anonymous_id    text        NOT NULL,
    last_external   timestamptz,
    last_any        timestamptz NOT NULL,
    prev_external   timestamptz,
    prev_any        timestamptz,
    PRIMARY KEY (organization_id, anonymous_id)
);
CREATE TABLE growth_organization_actors (
    organization_id text        NOT NULL,
    event_name      text        NOT NULL,
    actor           text        NOT NULL,
    last_external   timestamptz,
    last_any        timestamptz NOT NULL,
    prev_external   timestamptz,
    prev_any        timestamptz,
    PRIMARY KEY (organization_id, event_name, actor)
);
CREATE INDEX growth_organization_visitors_last_external ON growth_organization_visitors (organization_id, last_external);
CREATE INDEX growth_organization_visitors_last_any ON growth_organization_visitors (organization_id, last_any);
CREATE INDEX growth_organization_actors_last_external ON growth_organization_actors (organization_id, event_name, last_external);
CREATE INDEX growth_organization_actors_last_any ON growth_organization_actors (organization_id, event_name, last_any);
ALTER TABLE growth_visitors ADD COLUMN prev_external timestamptz, ADD COLUMN prev_any timestamptz;
ALTER TABLE growth_actors ADD COLUMN prev_external timestamptz, ADD COLUMN prev_any timestamptz;

-- How many visitors and actors were last seen on each UTC day: any_traffic false counts by
-- last_external, true by last_any. The counts are in the keys (INCLUDE) here and in the daily
-- counts, so that a window's sum is an index-only range.
CREATE TABLE growth_visitor_days (
    day         timestamptz NOT NULL,
    any_traffic boolean     NOT NULL,
    visitors    bigint      NOT NULL,
    PRIMARY KEY (any_traffic, day) INCLUDE (visitors)
);
CREATE TABLE growth_actor_days (
    event_name  text        NOT NULL,
    day         timestamptz NOT NULL,
    any_traffic boolean     NOT NULL,
    actors      bigint      NOT NULL,
    PRIMARY KEY (event_name, any_traffic, day) INCLUDE (actors)
);
CREATE TABLE growth_organization_visitor_days (
    organization_id text        NOT NULL,
    day             timestamptz NOT NULL,
    any_traffic     boolean     NOT NULL,
    visitors        bigint      NOT NULL,
    PRIMARY KEY (organization_id, any_traffic, day) INCLUDE (visitors)
);
CREATE TABLE growth_organization_actor_days (
    organization_id text        NOT NULL,
    event_name      text        NOT NULL,
    day             timestamptz NOT NULL,
    any_traffic     boolean     NOT NULL,
    actors          bigint      NOT NULL,
    PRIMARY KEY (organization_id, event_name, any_traffic, day) INCLUDE (actors)
);

-- growth_day is the UTC day of at (date_bin, not the session time zone).
CREATE FUNCTION growth_day(at timestamptz) RETURNS timestamptz LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN date_bin('1 day', at, timestamptz '2000-01-01 00:00:00+00');

-- growth_moves are the day counts' changes for rows whose last sightings went from prev_* to
-- last_*: -1 on the old day, +1 on the new (nothing for a NULL: not seen in that class).
-- +goose StatementBegin
CREATE FUNCTION growth_moves(prev_external timestamptz, last_external timestamptz, prev_any timestamptz, last_any timestamptz)
    RETURNS TABLE (day timestamptz, any_traffic boolean, delta int) LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    VALUES (growth_day(prev_external), false, -1), (growth_day(last_external), false, 1),
           (growth_day(prev_any), true, -1), (growth_day(last_any), true, 1)
$$;
-- +goose StatementEnd

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

-- The events stored so far.
INSERT INTO growth_daily_counts (organization_id, day, internal, dimension, key, events)
SELECT organization_id, growth_day(occurred_at), internal, d.dimension, d.key, count(*)
FROM (SELECT organization_id, occurred_at, event_name, product, source,
             traffic_type IN ('employee', 'internal', 'synthetic', 'automated_qa', 'load_test') AS internal
      FROM growth_events) g
CROSS JOIN LATERAL (VALUES ('event_name', event_name), ('product', product), ('source', source)) AS d (dimension, key)
GROUP BY 1, 2, 3, 4, 5;
INSERT INTO growth_provider_daily_counts (day, internal, dimension, key, events)
SELECT day, internal, dimension, key, sum(events) FROM growth_daily_counts GROUP BY 1, 2, 3, 4;

INSERT INTO growth_organization_visitors (organization_id, anonymous_id, last_external, last_any)
SELECT organization_id, anonymous_id,
       max(occurred_at) FILTER (WHERE traffic_type NOT IN ('employee', 'internal', 'synthetic', 'automated_qa', 'load_test')), max(occurred_at)
FROM growth_events WHERE anonymous_id IS NOT NULL AND occurred_at <= received_at GROUP BY 1, 2;
INSERT INTO growth_organization_actors (organization_id, event_name, actor, last_external, last_any)
SELECT organization_id, event_name, coalesce('a:' || anonymous_id, 'o:' || organization_id),
       max(occurred_at) FILTER (WHERE traffic_type NOT IN ('employee', 'internal', 'synthetic', 'automated_qa', 'load_test')), max(occurred_at)
FROM growth_events
WHERE occurred_at <= received_at
  AND event_name IN ('page_view', 'signup_started', 'organization_created', 'sandbox_provisioned', 'credential_created',
                     'first_request', 'first_success', 'plan_selected', 'subscription_active')
GROUP BY 1, 2, 3;

INSERT INTO growth_visitor_days (day, any_traffic, visitors)
SELECT m.day, m.any_traffic, sum(m.delta) FROM growth_visitors, growth_moves(NULL, last_external, NULL, last_any) m
WHERE m.day IS NOT NULL GROUP BY 1, 2;
INSERT INTO growth_actor_days (event_name, day, any_traffic, actors)
SELECT event_name, m.day, m.any_traffic, sum(m.delta) FROM growth_actors, growth_moves(NULL, last_external, NULL, last_any) m
WHERE m.day IS NOT NULL GROUP BY 1, 2, 3;
INSERT INTO growth_organization_visitor_days (organization_id, day, any_traffic, visitors)
SELECT organization_id, m.day, m.any_traffic, sum(m.delta) FROM growth_organization_visitors, growth_moves(NULL, last_external, NULL, last_any) m
WHERE m.day IS NOT NULL GROUP BY 1, 2, 3;
INSERT INTO growth_organization_actor_days (organization_id, event_name, day, any_traffic, actors)
SELECT organization_id, event_name, m.day, m.any_traffic, sum(m.delta) FROM growth_organization_actors, growth_moves(NULL, last_external, NULL, last_any) m
WHERE m.day IS NOT NULL GROUP BY 1, 2, 3, 4;

ANALYZE growth_daily_counts, growth_provider_daily_counts, growth_organization_visitors, growth_organization_actors,
    growth_visitor_days, growth_actor_days, growth_organization_visitor_days, growth_organization_actor_days;

-- +goose Down
-- The previous release's function (migration 00101).
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION growth_rollup() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO growth_hourly_counts AS c (hour, internal, dimension, key, events)
    SELECT hour, internal, dimension, key, count(*)
    FROM (
        SELECT date_bin('1 hour', occurred_at, timestamptz '2000-01-01 00:00:00+00') AS hour,
               traffic_type IN ('employee', 'internal', 'synthetic', 'automated_qa', 'load_test') AS internal,
               d.dimension, d.key
        FROM new_events
        CROSS JOIN LATERAL (VALUES ('event_name', event_name), ('product', product), ('source', source)) AS d (dimension, key)
    ) e
    GROUP BY hour, internal, dimension, key
    ORDER BY hour, internal, dimension, key
    ON CONFLICT (hour, internal, dimension, key) DO UPDATE SET events = c.events + excluded.events;

    INSERT INTO growth_visitors AS v (anonymous_id, last_external, last_any)
    SELECT anonymous_id,
           max(occurred_at) FILTER (WHERE traffic_type NOT IN ('employee', 'internal', 'synthetic', 'automated_qa', 'load_test')),
           max(occurred_at)
    FROM new_events
    WHERE anonymous_id IS NOT NULL AND occurred_at <= received_at
    GROUP BY anonymous_id
    ORDER BY anonymous_id
    ON CONFLICT (anonymous_id) DO UPDATE
    SET last_external = greatest(v.last_external, excluded.last_external), last_any = greatest(v.last_any, excluded.last_any);

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

    INSERT INTO growth_actors AS a (event_name, actor, last_external, last_any)
    SELECT event_name, coalesce('a:' || anonymous_id, 'o:' || organization_id),
           max(occurred_at) FILTER (WHERE traffic_type NOT IN ('employee', 'internal', 'synthetic', 'automated_qa', 'load_test')),
           max(occurred_at)
    FROM new_events
    WHERE occurred_at <= received_at
    GROUP BY 1, 2
    ORDER BY 1, 2
    ON CONFLICT (event_name, actor) DO UPDATE
    SET last_external = greatest(a.last_external, excluded.last_external), last_any = greatest(a.last_any, excluded.last_any);
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
DROP TABLE growth_organization_actor_days, growth_organization_visitor_days, growth_actor_days, growth_visitor_days;
ALTER TABLE growth_actors DROP COLUMN prev_external, DROP COLUMN prev_any;
ALTER TABLE growth_visitors DROP COLUMN prev_external, DROP COLUMN prev_any;
DROP TABLE growth_organization_actors, growth_organization_visitors, growth_provider_daily_counts, growth_daily_counts;
DROP FUNCTION growth_moves(timestamptz, timestamptz, timestamptz, timestamptz);
DROP FUNCTION growth_day(timestamptz);
