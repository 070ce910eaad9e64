-- +goose Up
-- Rollups of growth_events per organization, for the summary one organization reads (its
-- own, or the operator's with organization_id): without them that summary aggregated every
-- event of the organization in its window, so its time grew with the organization's events
-- (docs/performance.md, "Lists at 10 million rows"). They are the provider-wide rollups of
-- migration 00101 with organization_id in front, kept the same way: by a statement trigger in
-- the transaction of every insert (COPY included), so they are never behind the events.
-- Distinct organizations need no table of their own: growth_organizations is already keyed
-- by organization.
--
-- A second trigger rather than a new body for growth_rollup(): a binary that does not read
-- these tables inserts events as before (expand only).

CREATE TABLE growth_organization_hourly_counts (
    organization_id text        NOT NULL,
    hour            timestamptz NOT NULL,
    internal        boolean     NOT NULL,
    dimension       text        NOT NULL CHECK (dimension IN ('event_name', 'product', 'source')),
    key             text,       -- NULL: events without a product or source
    events          bigint      NOT NULL,
    UNIQUE NULLS NOT DISTINCT (organization_id, hour, internal, dimension, key)
);
CREATE TABLE growth_organization_visitors (
    organization_id text        NOT NULL,
    anonymous_id    text        NOT NULL,
    last_external   timestamptz,
    last_any        timestamptz NOT NULL,
    PRIMARY KEY (organization_id, anonymous_id)
);
-- actor: 'a:' || anonymous_id, or 'o:' || organization_id for events without a visitor.
CREATE TABLE growth_organization_actors (
    organization_id text        NOT NULL,
    event_name      text        NOT NULL,
    actor           text        NOT NULL,
    last_external   timestamptz,
    last_any        timestamptz NOT NULL,
    PRIMARY KEY (organization_id, event_name, actor)
);
CREATE INDEX growth_organization_visitors_last_external ON growth_organization_visitors (organization_id, last_external);
CREATE INDEX growth_organization_visitors_last_any ON growth_organization_visitors (organization_id, last_any);
CREATE INDEX growth_organization_actors_last_external ON growth_organization_actors (organization_id, event_name, last_external);
CREATE INDEX growth_organization_actors_last_any ON growth_organization_actors (organization_id, event_name, last_any);

-- +goose StatementBegin
CREATE FUNCTION growth_organization_rollup() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Rows are upserted in key order, so concurrent inserts lock them in the same order.
    INSERT INTO growth_organization_hourly_counts AS c (organization_id, hour, internal, dimension, key, events)
    SELECT organization_id, hour, internal, dimension, key, count(*)
    FROM (
        SELECT organization_id,
               date_bin('1 hour', occurred_at, timestamptz '2000-01-01 00:00:00+00') AS hour,
               traffic_type IN ('employee', 'internal', 'synthetic', 'automated_qa', 'load_test') AS internal,
               d.dimension, d.key
        FROM new_events
        CROSS JOIN LATERAL (VALUES ('event_name', event_name), ('product', product), ('source', source)) AS d (dimension, key)
    ) e
    GROUP BY organization_id, hour, internal, dimension, key
    ORDER BY organization_id, hour, internal, dimension, key
    ON CONFLICT (organization_id, hour, internal, dimension, key) DO UPDATE SET events = c.events + excluded.events;

    INSERT INTO growth_organization_visitors AS v (organization_id, anonymous_id, last_external, last_any)
    SELECT organization_id, anonymous_id,
           max(occurred_at) FILTER (WHERE traffic_type NOT IN ('employee', 'internal', 'synthetic', 'automated_qa', 'load_test')),
           max(occurred_at)
    FROM new_events
    WHERE anonymous_id IS NOT NULL AND occurred_at <= received_at
    GROUP BY organization_id, anonymous_id
    ORDER BY organization_id, anonymous_id
    ON CONFLICT (organization_id, anonymous_id) DO UPDATE
    SET last_external = greatest(v.last_external, excluded.last_external), last_any = greatest(v.last_any, excluded.last_any);

    INSERT INTO growth_organization_actors AS a (organization_id, event_name, actor, last_external, last_any)
    SELECT organization_id, event_name, coalesce('a:' || anonymous_id, 'o:' || organization_id),
           max(occurred_at) FILTER (WHERE traffic_type NOT IN ('employee', 'internal', 'synthetic', 'automated_qa', 'load_test')),
           max(occurred_at)
    FROM new_events
    WHERE occurred_at <= received_at
    GROUP BY 1, 2, 3
    ORDER BY 1, 2, 3
    ON CONFLICT (organization_id, event_name, actor) DO UPDATE
    SET last_external = greatest(a.last_external, excluded.last_external), last_any = greatest(a.last_any, excluded.last_any);
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER growth_events_organization_rollup AFTER INSERT ON growth_events
    REFERENCING NEW TABLE AS new_events FOR EACH STATEMENT EXECUTE FUNCTION growth_organization_rollup();

-- The events stored so far.
INSERT INTO growth_organization_hourly_counts (organization_id, hour, internal, dimension, key, events)
SELECT organization_id, hour, internal, dimension, key, count(*)
FROM (
    SELECT organization_id,
           date_bin('1 hour', occurred_at, timestamptz '2000-01-01 00:00:00+00') AS hour,
           traffic_type IN ('employee', 'internal', 'synthetic', 'automated_qa', 'load_test') AS internal,
           d.dimension, d.key
    FROM growth_events
    CROSS JOIN LATERAL (VALUES ('event_name', event_name), ('product', product), ('source', source)) AS d (dimension, key)
) e
GROUP BY organization_id, hour, internal, dimension, key;
INSERT INTO growth_organization_visitors (organization_id, anonymous_id, last_external, last_any)
SELECT organization_id, anonymous_id,
       max(occurred_at) FILTER (WHERE traffic_type NOT IN ('employee', 'internal', 'synthetic', 'automated_qa', 'load_test')), max(occurred_at)
FROM growth_events WHERE anonymous_id IS NOT NULL AND occurred_at <= received_at GROUP BY organization_id, anonymous_id;
INSERT INTO growth_organization_actors (organization_id, event_name, actor, last_external, last_any)
SELECT organization_id, event_name, coalesce('a:' || anonymous_id, 'o:' || organization_id),
       max(occurred_at) FILTER (WHERE traffic_type NOT IN ('employee', 'internal', 'synthetic', 'automated_qa', 'load_test')), max(occurred_at)
FROM growth_events WHERE occurred_at <= received_at GROUP BY 1, 2, 3;

-- +goose Down
DROP TRIGGER growth_events_organization_rollup ON growth_events;
DROP FUNCTION growth_organization_rollup();
DROP TABLE growth_organization_actors;
DROP TABLE growth_organization_visitors;
DROP TABLE growth_organization_hourly_counts;
