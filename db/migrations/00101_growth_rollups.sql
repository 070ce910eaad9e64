-- +goose Up
-- Rollups of growth_events that make the provider-wide summary independent of the number of
-- events in its window (postgres.GrowthService.GrowthSummary): kept by a statement trigger
-- in the transaction of every insert (COPY included), so they are never behind the events.
--
-- internal marks the traffic types the summary leaves out unless asked
-- (core.InternalTrafficTypes: employee, internal, synthetic, automated_qa, load_test).

-- Events per hour (UTC hours: date_bin, not the session time zone) and dimension: the
-- summary adds the whole hours of its window from here and the partial hours at its ends
-- from growth_events.
CREATE TABLE growth_hourly_counts (
    hour      timestamptz NOT NULL,
    internal  boolean     NOT NULL,
    dimension text        NOT NULL CHECK (dimension IN ('event_name', 'product', 'source')),
    key       text,       -- NULL: events without a product or source
    events    bigint      NOT NULL,
    UNIQUE NULLS NOT DISTINCT (hour, internal, dimension, key)
);

-- When each visitor, organization and funnel actor was last seen, among external traffic
-- and among all traffic. Since the summary's window always ends now, "seen in the window"
-- is "last seen at or after since" -- for events that did not claim to occur after they
-- were received; the few that did are read from growth_events (growth_events_future).
CREATE TABLE growth_visitors (
    anonymous_id  text        PRIMARY KEY,
    last_external timestamptz,
    last_any      timestamptz NOT NULL
);
CREATE TABLE growth_organizations (
    organization_id text        PRIMARY KEY,
    last_external   timestamptz,
    last_any        timestamptz NOT NULL
);
-- actor: 'a:' || anonymous_id, or 'o:' || organization_id for events without a visitor.
CREATE TABLE growth_actors (
    event_name    text        NOT NULL,
    actor         text        NOT NULL,
    last_external timestamptz,
    last_any      timestamptz NOT NULL,
    PRIMARY KEY (event_name, actor)
);

-- The summary counts what was last seen since a time: index-only scans.
CREATE INDEX growth_visitors_last_external ON growth_visitors (last_external);
CREATE INDEX growth_visitors_last_any ON growth_visitors (last_any);
CREATE INDEX growth_actors_last_external ON growth_actors (event_name, last_external);
CREATE INDEX growth_actors_last_any ON growth_actors (event_name, last_any);

CREATE INDEX growth_events_future ON growth_events (occurred_at)
    INCLUDE (traffic_type, event_name, organization_id, anonymous_id)
    WHERE occurred_at > received_at;

-- +goose StatementBegin
CREATE FUNCTION growth_rollup() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Rows are upserted in key order, so concurrent inserts lock them in the same order.
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

CREATE TRIGGER growth_events_rollup AFTER INSERT ON growth_events
    REFERENCING NEW TABLE AS new_events FOR EACH STATEMENT EXECUTE FUNCTION growth_rollup();

-- The events stored so far.
INSERT INTO growth_hourly_counts (hour, internal, dimension, key, events)
SELECT hour, internal, dimension, key, count(*)
FROM (
    SELECT date_bin('1 hour', occurred_at, timestamptz '2000-01-01 00:00:00+00') AS hour,
           traffic_type IN ('employee', 'internal', 'synthetic', 'automated_qa', 'load_test') AS internal,
           d.dimension, d.key
    FROM growth_events
    CROSS JOIN LATERAL (VALUES ('event_name', event_name), ('product', product), ('source', source)) AS d (dimension, key)
) e
GROUP BY hour, internal, dimension, key;
INSERT INTO growth_visitors (anonymous_id, last_external, last_any)
SELECT anonymous_id, max(occurred_at) FILTER (WHERE traffic_type NOT IN ('employee', 'internal', 'synthetic', 'automated_qa', 'load_test')), max(occurred_at)
FROM growth_events WHERE anonymous_id IS NOT NULL AND occurred_at <= received_at GROUP BY anonymous_id;
INSERT INTO growth_organizations (organization_id, last_external, last_any)
SELECT organization_id, max(occurred_at) FILTER (WHERE traffic_type NOT IN ('employee', 'internal', 'synthetic', 'automated_qa', 'load_test')), max(occurred_at)
FROM growth_events WHERE occurred_at <= received_at GROUP BY organization_id;
INSERT INTO growth_actors (event_name, actor, last_external, last_any)
SELECT event_name, coalesce('a:' || anonymous_id, 'o:' || organization_id),
       max(occurred_at) FILTER (WHERE traffic_type NOT IN ('employee', 'internal', 'synthetic', 'automated_qa', 'load_test')), max(occurred_at)
FROM growth_events WHERE occurred_at <= received_at GROUP BY 1, 2;

-- +goose Down
DROP TRIGGER growth_events_rollup ON growth_events;
DROP FUNCTION growth_rollup();
DROP INDEX growth_events_future;
DROP TABLE growth_actors;
DROP TABLE growth_organizations;
DROP TABLE growth_visitors;
DROP TABLE growth_hourly_counts;
