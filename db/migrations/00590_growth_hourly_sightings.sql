-- +goose Up
-- The growth summary within 1.2x at 10 million events (issue 29), after 00580: the visitors
-- and funnel actors last seen on since's day still grew with the events. The summary sums
-- the *_days tables from the day start nearest to since and counted the last sightings
-- between that and since on the last-seen indexes: up to half a day of them, about 4,000
-- funnel actors of the benchmark's big organization at 10 million events and a few at 10
-- thousand.
--
-- Now the visitors and actors are also counted by the UTC hour of their last sighting (the
-- *_hours tables, beside the *_days ones): the summary sums the days, adds or takes off the
-- whole hours between the nearest day start and the nearest hour start (at most 12 of
-- them), and counts on the index only the last sightings between that hour and since (at most
-- half an hour: postgres.sinceLevels).
--
-- The trigger computes each row's moves once by hour and sums them by day for the *_days
-- tables. Their keys leave the count out and new pages keep room (fillfactor 70), so that
-- updates can stay on their page (HOT) as the hourly counts' do; the summary reads at most
-- 12 rows of each from the heap. A row whose count falls to zero stays, as in the *_days.

SET LOCAL lock_timeout = '10s';
SET LOCAL work_mem = '256MB';
-- The backfill must see every last sighting: writers wait until the migration commits.
LOCK TABLE growth_events IN SHARE MODE;

CREATE TABLE growth_visitor_hours (
    hour        timestamptz NOT NULL,
    any_traffic boolean     NOT NULL,
    visitors    bigint      NOT NULL,
    PRIMARY KEY (any_traffic, hour)
) WITH (fillfactor = 70);
CREATE TABLE growth_actor_hours (
    event_name  text        NOT NULL,
    hour        timestamptz NOT NULL,
    any_traffic boolean     NOT NULL,
    actors      bigint      NOT NULL,
    PRIMARY KEY (event_name, any_traffic, hour)
) WITH (fillfactor = 70);
CREATE TABLE growth_organization_visitor_hours (
    organization_id text        NOT NULL,
    hour            timestamptz NOT NULL,
    any_traffic     boolean     NOT NULL,
    visitors        bigint      NOT NULL,
    PRIMARY KEY (organization_id, any_traffic, hour)
) WITH (fillfactor = 70);
CREATE TABLE growth_organization_actor_hours (
    organization_id text        NOT NULL,
    event_name      text        NOT NULL,
    hour            timestamptz NOT NULL,
    any_traffic     boolean     NOT NULL,
    actors          bigint      NOT NULL,
    PRIMARY KEY (organization_id, event_name, any_traffic, hour)
) WITH (fillfactor = 70);

-- growth_hour_moves is growth_moves (00560) by UTC hour: -1 on the old hour, +1 on the new.
-- +goose StatementBegin
CREATE FUNCTION growth_hour_moves(prev_external timestamptz, last_external timestamptz, prev_any timestamptz, last_any timestamptz)
    RETURNS TABLE (hour timestamptz, any_traffic boolean, delta int) LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    VALUES (date_bin('1 hour', prev_external, timestamptz '2000-01-01 00:00:00+00'), false, -1),
           (date_bin('1 hour', last_external, timestamptz '2000-01-01 00:00:00+00'), false, 1),
           (date_bin('1 hour', prev_any, timestamptz '2000-01-01 00:00:00+00'), true, -1),
           (date_bin('1 hour', last_any, timestamptz '2000-01-01 00:00:00+00'), true, 1)
$$;
-- +goose StatementEnd

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

    -- Last sightings (events dated after their arrival wait in growth_pending_sightings) and
    -- the moves of their hours and days, summed from one set of hourly moves. An update
    -- happens only when a sighting is later than the last.
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
    ), provider_moves AS (
        SELECT m.hour, m.any_traffic, sum(m.delta) AS delta FROM provider, growth_hour_moves(prev_external, last_external, prev_any, last_any) m
        WHERE m.hour IS NOT NULL
        GROUP BY 1, 2 HAVING sum(m.delta) <> 0
    ), provider_hours AS (
        INSERT INTO growth_visitor_hours AS h (hour, any_traffic, visitors)
        SELECT hour, any_traffic, delta FROM provider_moves
        ORDER BY 1, 2
        ON CONFLICT (any_traffic, hour) DO UPDATE SET visitors = h.visitors + excluded.visitors
    ), provider_days AS (
        INSERT INTO growth_visitor_days AS d (day, any_traffic, visitors)
        SELECT growth_day(hour), any_traffic, sum(delta) FROM provider_moves
        GROUP BY 1, 2 HAVING sum(delta) <> 0 ORDER BY 1, 2
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
    ), organization_moves AS (
        SELECT organization_id, m.hour, m.any_traffic, sum(m.delta) AS delta FROM organization, growth_hour_moves(prev_external, last_external, prev_any, last_any) m
        WHERE m.hour IS NOT NULL
        GROUP BY 1, 2, 3 HAVING sum(m.delta) <> 0
    ), organization_hours AS (
        INSERT INTO growth_organization_visitor_hours AS h (organization_id, hour, any_traffic, visitors)
        SELECT organization_id, hour, any_traffic, delta FROM organization_moves
        ORDER BY 1, 2, 3
        ON CONFLICT (organization_id, any_traffic, hour) DO UPDATE SET visitors = h.visitors + excluded.visitors
    )
    INSERT INTO growth_organization_visitor_days AS d (organization_id, day, any_traffic, visitors)
    SELECT organization_id, growth_day(hour), any_traffic, sum(delta) FROM organization_moves
    GROUP BY 1, 2, 3 HAVING sum(delta) <> 0 ORDER BY 1, 2, 3
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
    ), provider_moves AS (
        SELECT event_name, m.hour, m.any_traffic, sum(m.delta) AS delta FROM provider, growth_hour_moves(prev_external, last_external, prev_any, last_any) m
        WHERE m.hour IS NOT NULL
        GROUP BY 1, 2, 3 HAVING sum(m.delta) <> 0
    ), provider_hours AS (
        INSERT INTO growth_actor_hours AS h (event_name, hour, any_traffic, actors)
        SELECT event_name, hour, any_traffic, delta FROM provider_moves
        ORDER BY 1, 2, 3
        ON CONFLICT (event_name, any_traffic, hour) DO UPDATE SET actors = h.actors + excluded.actors
    ), provider_days AS (
        INSERT INTO growth_actor_days AS d (event_name, day, any_traffic, actors)
        SELECT event_name, growth_day(hour), any_traffic, sum(delta) FROM provider_moves
        GROUP BY 1, 2, 3 HAVING sum(delta) <> 0 ORDER BY 1, 2, 3
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
    ), organization_moves AS (
        SELECT organization_id, event_name, m.hour, m.any_traffic, sum(m.delta) AS delta
        FROM organization, growth_hour_moves(prev_external, last_external, prev_any, last_any) m
        WHERE m.hour IS NOT NULL
        GROUP BY 1, 2, 3, 4 HAVING sum(m.delta) <> 0
    ), organization_hours AS (
        INSERT INTO growth_organization_actor_hours AS h (organization_id, event_name, hour, any_traffic, actors)
        SELECT organization_id, event_name, hour, any_traffic, delta FROM organization_moves
        ORDER BY 1, 2, 3, 4
        ON CONFLICT (organization_id, event_name, any_traffic, hour) DO UPDATE SET actors = h.actors + excluded.actors
    )
    INSERT INTO growth_organization_actor_days AS d (organization_id, event_name, day, any_traffic, actors)
    SELECT organization_id, event_name, growth_day(hour), any_traffic, sum(delta) FROM organization_moves
    GROUP BY 1, 2, 3, 4 HAVING sum(delta) <> 0 ORDER BY 1, 2, 3, 4
    ON CONFLICT (organization_id, event_name, day, any_traffic) DO UPDATE SET actors = d.actors + excluded.actors;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

-- The last sightings stored so far, in key order.
INSERT INTO growth_visitor_hours (hour, any_traffic, visitors)
SELECT m.hour, m.any_traffic, sum(m.delta) FROM growth_visitors, growth_hour_moves(NULL, last_external, NULL, last_any) m
WHERE m.hour IS NOT NULL GROUP BY 1, 2 ORDER BY 2, 1;
INSERT INTO growth_actor_hours (event_name, hour, any_traffic, actors)
SELECT event_name, m.hour, m.any_traffic, sum(m.delta) FROM growth_actors, growth_hour_moves(NULL, last_external, NULL, last_any) m
WHERE m.hour IS NOT NULL GROUP BY 1, 2, 3 ORDER BY 1, 3, 2;
INSERT INTO growth_organization_visitor_hours (organization_id, hour, any_traffic, visitors)
SELECT organization_id, m.hour, m.any_traffic, sum(m.delta) FROM growth_organization_visitors, growth_hour_moves(NULL, last_external, NULL, last_any) m
WHERE m.hour IS NOT NULL GROUP BY 1, 2, 3 ORDER BY 1, 3, 2;
INSERT INTO growth_organization_actor_hours (organization_id, event_name, hour, any_traffic, actors)
SELECT organization_id, event_name, m.hour, m.any_traffic, sum(m.delta) FROM growth_organization_actors, growth_hour_moves(NULL, last_external, NULL, last_any) m
WHERE m.hour IS NOT NULL GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 4, 3;
ANALYZE growth_visitor_hours, growth_actor_hours, growth_organization_visitor_hours, growth_organization_actor_hours;

-- +goose Down
SET LOCAL lock_timeout = '10s';
LOCK TABLE growth_events IN SHARE MODE;
-- The function of 00580.
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
DROP TABLE growth_organization_actor_hours, growth_organization_visitor_hours, growth_actor_hours, growth_visitor_hours;
DROP FUNCTION growth_hour_moves(timestamptz, timestamptz, timestamptz, timestamptz);
