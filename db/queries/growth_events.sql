-- name: GrowthEventInsertBatch :copyfrom
INSERT INTO growth_events (
    id, organization_id, occurred_at, event_name, traffic_type, anonymous_id, product,
    source, medium, campaign, landing_page, page_path, language, device_class, use_case,
    developer_language, experiment_id, experiment_variant, elapsed_from_signup_ms, properties
) VALUES (
    @id, @organization_id, @occurred_at, @event_name, @traffic_type, @anonymous_id, @product,
    @source, @medium, @campaign, @landing_page, @page_path, @language, @device_class, @use_case,
    @developer_language, @experiment_id, @experiment_variant, @elapsed_from_signup_ms, @properties
);

-- name: GrowthSummaryCounts :many
-- One pass over the window: events per name, per product and per source (GROUPING SETS).
-- dimension says which set a row belongs to; the other columns of that row are NULL, and
-- product or source may also be NULL as a value (events without one).
SELECT
    CASE WHEN GROUPING(event_name) = 0 THEN 'event_name'
         WHEN GROUPING(product) = 0 THEN 'product'
         ELSE 'source' END::text AS dimension,
    coalesce(event_name, '')::text AS event_name,
    product,
    source,
    count(*)::bigint AS events
FROM growth_events
WHERE occurred_at >= @since AND occurred_at <= @until
  AND traffic_type = ANY(@traffic_types::text[])
  AND organization_id = @organization_id::text
GROUP BY GROUPING SETS ((event_name), (product), (source));

-- name: GrowthSummaryCountsAnyOrganization :many
-- The operator's provider-wide summary: every organization.
-- One pass over the window: events per name, per product and per source (GROUPING SETS).
-- dimension says which set a row belongs to; the other columns of that row are NULL, and
-- product or source may also be NULL as a value (events without one).
SELECT
    CASE WHEN GROUPING(event_name) = 0 THEN 'event_name'
         WHEN GROUPING(product) = 0 THEN 'product'
         ELSE 'source' END::text AS dimension,
    coalesce(event_name, '')::text AS event_name,
    product,
    source,
    count(*)::bigint AS events
FROM growth_events
WHERE occurred_at >= @since AND occurred_at <= @until
  AND traffic_type = ANY(@traffic_types::text[])
GROUP BY GROUPING SETS ((event_name), (product), (source));

-- name: GrowthSummaryUniques :one
-- DISTINCT subqueries rather than count(DISTINCT): they hash, in parallel, instead of
-- sorting text under the database collation.
SELECT
    (SELECT count(*) FROM (
        SELECT DISTINCT e.organization_id FROM growth_events e
        WHERE e.occurred_at >= @since AND e.occurred_at <= @until
          AND e.traffic_type = ANY(@traffic_types::text[])
          AND e.organization_id = @organization_id::text
    ) organizations)::bigint AS organizations,
    (SELECT count(*) FROM (
        SELECT DISTINCT v.anonymous_id FROM growth_events v
        WHERE v.occurred_at >= @since AND v.occurred_at <= @until
          AND v.traffic_type = ANY(@traffic_types::text[])
          AND v.anonymous_id IS NOT NULL
          AND v.organization_id = @organization_id::text
    ) visitors)::bigint AS anonymous_visitors;

-- name: GrowthSummaryUniquesAnyOrganization :one
-- The operator's provider-wide summary: every organization.
-- DISTINCT subqueries rather than count(DISTINCT): they hash, in parallel, instead of
-- sorting text under the database collation.
SELECT
    (SELECT count(*) FROM (
        SELECT DISTINCT e.organization_id FROM growth_events e
        WHERE e.occurred_at >= @since AND e.occurred_at <= @until
          AND e.traffic_type = ANY(@traffic_types::text[])
    ) organizations)::bigint AS organizations,
    (SELECT count(*) FROM (
        SELECT DISTINCT v.anonymous_id FROM growth_events v
        WHERE v.occurred_at >= @since AND v.occurred_at <= @until
          AND v.traffic_type = ANY(@traffic_types::text[])
          AND v.anonymous_id IS NOT NULL
    ) visitors)::bigint AS anonymous_visitors;

-- name: GrowthSummaryFunnel :many
-- Distinct actors per funnel step: the anonymous visitor when known, else the organization.
SELECT event_name, count(*)::bigint AS actors
FROM (
    SELECT DISTINCT event_name, anonymous_id, CASE WHEN anonymous_id IS NULL THEN organization_id END AS organization_id
    FROM growth_events
    WHERE occurred_at >= @since AND occurred_at <= @until
      AND traffic_type = ANY(@traffic_types::text[])
      AND event_name = ANY(@funnel_events::text[])
      AND organization_id = @organization_id::text
) actors
GROUP BY event_name;

-- name: GrowthSummaryFunnelAnyOrganization :many
-- The operator's provider-wide summary: every organization.
-- Distinct actors per funnel step: the anonymous visitor when known, else the organization.
SELECT event_name, count(*)::bigint AS actors
FROM (
    SELECT DISTINCT event_name, anonymous_id, CASE WHEN anonymous_id IS NULL THEN organization_id END AS organization_id
    FROM growth_events
    WHERE occurred_at >= @since AND occurred_at <= @until
      AND traffic_type = ANY(@traffic_types::text[])
      AND event_name = ANY(@funnel_events::text[])
) actors
GROUP BY event_name;

-- name: GrowthSummaryPlanSettings :exec
-- For the summary's transaction: plan each query for its actual window, and give its hash
-- aggregates room for a month of events in memory. No JIT and no parallel workers: the
-- rollups' statements read a few thousand rows, but the planner's estimate of the events
-- dated after their arrival (thousands, where there are a handful) made it compile them
-- (1.5-1.9 s of a 30 ms statement at a million events), and starting workers cost more than
-- the daily counts they would share (100-200 ms against 20 ms on two loaded cores). No
-- sequential scans: every rollup has an index on the organization and the time its reads
-- range over, and a scan of a whole rollup grows with the organizations and the history
-- (a year of the big organization's monthly counts: 1,044 rows read in 0.6 ms from the
-- index, against a scan of all 11,310 rows in 2.0 ms at 10 million events, chosen because
-- the organization holds a tenth of them). The summary from growth_events (a test's
-- oracle) plans under the same settings.
SELECT set_config('plan_cache_mode', 'force_custom_plan', true), set_config('work_mem', '64MB', true),
    set_config('jit', 'off', true), set_config('max_parallel_workers_per_gather', '0', true),
    set_config('enable_seqscan', 'off', true);
