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
  AND (sqlc.narg(organization_id)::text IS NULL OR organization_id = sqlc.narg(organization_id))
GROUP BY GROUPING SETS ((event_name), (product), (source));

-- name: GrowthSummaryUniques :one
SELECT
    count(DISTINCT organization_id)::bigint AS organizations,
    count(DISTINCT anonymous_id)::bigint AS anonymous_visitors
FROM growth_events
WHERE occurred_at >= @since AND occurred_at <= @until
  AND traffic_type = ANY(@traffic_types::text[])
  AND (sqlc.narg(organization_id)::text IS NULL OR organization_id = sqlc.narg(organization_id));

-- name: GrowthSummaryFunnel :many
-- Distinct actors per funnel step: the anonymous visitor when known, else the organization
-- (prefixed so an anonymous id can never be mistaken for an organization id).
SELECT event_name, count(DISTINCT CASE WHEN anonymous_id IS NOT NULL THEN 'a:' || anonymous_id ELSE 'o:' || organization_id END)::bigint AS actors
FROM growth_events
WHERE occurred_at >= @since AND occurred_at <= @until
  AND traffic_type = ANY(@traffic_types::text[])
  AND event_name = ANY(@funnel_events::text[])
  AND (sqlc.narg(organization_id)::text IS NULL OR organization_id = sqlc.narg(organization_id))
GROUP BY event_name;
