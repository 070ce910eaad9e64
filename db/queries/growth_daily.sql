-- The growth summary from the daily rollups of migration 00560 (postgres.summaryFromRollups).
-- The window ends now: a visitor or actor is in it when last seen at or after @since. They are
-- summed from the *_days tables from @days_from, the day start nearest to since; the whole
-- hours between that and the hour start nearest to since from the *_hours tables (00590),
-- added or taken off (@hours_sign); and the last sightings between that hour and since
-- counted on the last-seen index, added or taken off (@seen_sign): at most 12 hours and half
-- an hour (postgres.sinceLevels). Those seen only in events dated after their arrival that no
-- insert has folded into the last sightings yet (growth_pending_sightings, migration 00580)
-- are each looked up by key: a correlated lookup, not an anti-join, which the planner would
-- make a hash of every visitor seen since.

-- name: GrowthDailyCounts :many
-- Events per dimension of one organization over the whole days [from_day, to_day].
SELECT dimension, key, sum(events)::bigint AS events
FROM growth_daily_counts
WHERE organization_id = @organization_id::text AND day >= @from_day AND day <= @to_day
  AND (NOT internal OR @include_internal::boolean)
GROUP BY dimension, key;

-- name: GrowthDailyCountsAnyOrganization :many
-- The operator's provider-wide summary: GrowthDailyCounts of every organization.
SELECT dimension, key, sum(events)::bigint AS events
FROM growth_provider_daily_counts
WHERE day >= @from_day AND day <= @to_day AND (NOT internal OR @include_internal::boolean)
GROUP BY dimension, key;

-- name: GrowthDailyUniques :one
-- Whether the organization was seen since @since (0 or 1), and its distinct visitors.
WITH future AS (
    SELECT anonymous_id FROM growth_pending_sightings
    WHERE organization_id = @organization_id::text
      AND occurred_at >= @since AND occurred_at <= @until
      AND traffic_type = ANY(@traffic_types::text[])
)
SELECT
    (EXISTS (SELECT 1 FROM growth_organizations o WHERE o.organization_id = @organization_id::text
               AND (CASE WHEN @include_internal::boolean THEN o.last_any ELSE o.last_external END) >= @since)
     OR EXISTS (SELECT 1 FROM future))::int::bigint AS organizations,
    ((SELECT coalesce(sum(d.visitors), 0) FROM growth_organization_visitor_days d
      WHERE d.organization_id = @organization_id::text AND d.any_traffic = @include_internal::boolean
        AND d.day >= @days_from)
     + sqlc.arg(hours_sign)::bigint * (SELECT coalesce(sum(h.visitors), 0) FROM growth_organization_visitor_hours h
        WHERE h.organization_id = @organization_id::text AND h.any_traffic = @include_internal::boolean
          AND h.hour >= @hours_from AND h.hour < @hours_to)
     + sqlc.arg(seen_sign)::bigint * (SELECT count(*) FROM growth_organization_visitors v
        WHERE v.organization_id = @organization_id::text
          AND (CASE WHEN @include_internal::boolean THEN v.last_any ELSE v.last_external END) >= @seen_from
          AND (CASE WHEN @include_internal::boolean THEN v.last_any ELSE v.last_external END) < @seen_to)
     + (SELECT count(DISTINCT f.anonymous_id) FROM future f WHERE f.anonymous_id IS NOT NULL AND coalesce((
          SELECT CASE WHEN @include_internal::boolean THEN v.last_any ELSE v.last_external END FROM growth_organization_visitors v
          WHERE v.organization_id = @organization_id::text AND v.anonymous_id = f.anonymous_id), '-infinity') < @since))::bigint AS anonymous_visitors;

-- name: GrowthDailyUniquesAnyOrganization :one
-- The operator's provider-wide summary: distinct organizations and visitors of all.
WITH future AS (
    SELECT organization_id, anonymous_id FROM growth_pending_sightings
    WHERE occurred_at >= @since AND occurred_at <= @until
      AND traffic_type = ANY(@traffic_types::text[])
)
SELECT
    ((SELECT count(*) FROM growth_organizations o
      WHERE (CASE WHEN @include_internal::boolean THEN o.last_any ELSE o.last_external END) >= @since)
     + (SELECT count(DISTINCT f.organization_id) FROM future f WHERE coalesce((
          SELECT CASE WHEN @include_internal::boolean THEN o.last_any ELSE o.last_external END FROM growth_organizations o
          WHERE o.organization_id = f.organization_id), '-infinity') < @since))::bigint AS organizations,
    ((SELECT coalesce(sum(d.visitors), 0) FROM growth_visitor_days d
      WHERE d.any_traffic = @include_internal::boolean AND d.day >= @days_from)
     + sqlc.arg(hours_sign)::bigint * (SELECT coalesce(sum(h.visitors), 0) FROM growth_visitor_hours h
        WHERE h.any_traffic = @include_internal::boolean AND h.hour >= @hours_from AND h.hour < @hours_to)
     + sqlc.arg(seen_sign)::bigint * (SELECT count(*) FROM growth_visitors v
        WHERE (CASE WHEN @include_internal::boolean THEN v.last_any ELSE v.last_external END) >= @seen_from
          AND (CASE WHEN @include_internal::boolean THEN v.last_any ELSE v.last_external END) < @seen_to)
     + (SELECT count(DISTINCT f.anonymous_id) FROM future f WHERE f.anonymous_id IS NOT NULL AND coalesce((
          SELECT CASE WHEN @include_internal::boolean THEN v.last_any ELSE v.last_external END FROM growth_visitors v
          WHERE v.anonymous_id = f.anonymous_id), '-infinity') < @since))::bigint AS anonymous_visitors;

-- name: GrowthDailyFunnel :many
-- Distinct actors per funnel step of one organization since @since.
WITH future AS (
    SELECT DISTINCT event_name, coalesce('a:' || anonymous_id, 'o:' || organization_id) AS actor
    FROM growth_pending_sightings
    WHERE organization_id = @organization_id::text
      AND occurred_at >= @since AND occurred_at <= @until
      AND traffic_type = ANY(@traffic_types::text[]) AND event_name = ANY(@funnel_events::text[])
)
SELECT event_name, sum(actors)::bigint AS actors
FROM (
    SELECT d.event_name, d.actors FROM growth_organization_actor_days d
    WHERE d.organization_id = @organization_id::text AND d.event_name = ANY(@funnel_events::text[])
      AND d.any_traffic = @include_internal::boolean AND d.day >= @days_from
    UNION ALL
    SELECT h.event_name, sqlc.arg(hours_sign)::bigint * h.actors FROM growth_organization_actor_hours h
    WHERE h.organization_id = @organization_id::text AND h.event_name = ANY(@funnel_events::text[])
      AND h.any_traffic = @include_internal::boolean AND h.hour >= @hours_from AND h.hour < @hours_to
    UNION ALL
    SELECT a.event_name, sqlc.arg(seen_sign)::bigint * count(*) AS actors FROM growth_organization_actors a
    WHERE a.organization_id = @organization_id::text AND a.event_name = ANY(@funnel_events::text[])
      AND (CASE WHEN @include_internal::boolean THEN a.last_any ELSE a.last_external END) >= @seen_from
      AND (CASE WHEN @include_internal::boolean THEN a.last_any ELSE a.last_external END) < @seen_to
    GROUP BY a.event_name
    UNION ALL
    SELECT f.event_name, count(*) FROM future f WHERE coalesce((
        SELECT CASE WHEN @include_internal::boolean THEN a.last_any ELSE a.last_external END FROM growth_organization_actors a
        WHERE a.organization_id = @organization_id::text AND a.event_name = f.event_name AND a.actor = f.actor), '-infinity') < @since
    GROUP BY f.event_name
) actors
GROUP BY event_name;

-- name: GrowthDailyFunnelAnyOrganization :many
-- The operator's provider-wide summary: GrowthDailyFunnel of every organization.
WITH future AS (
    SELECT DISTINCT event_name, coalesce('a:' || anonymous_id, 'o:' || organization_id) AS actor
    FROM growth_pending_sightings
    WHERE occurred_at >= @since AND occurred_at <= @until
      AND traffic_type = ANY(@traffic_types::text[]) AND event_name = ANY(@funnel_events::text[])
)
SELECT event_name, sum(actors)::bigint AS actors
FROM (
    SELECT d.event_name, d.actors FROM growth_actor_days d
    WHERE d.event_name = ANY(@funnel_events::text[])
      AND d.any_traffic = @include_internal::boolean AND d.day >= @days_from
    UNION ALL
    SELECT h.event_name, sqlc.arg(hours_sign)::bigint * h.actors FROM growth_actor_hours h
    WHERE h.event_name = ANY(@funnel_events::text[])
      AND h.any_traffic = @include_internal::boolean AND h.hour >= @hours_from AND h.hour < @hours_to
    UNION ALL
    SELECT a.event_name, sqlc.arg(seen_sign)::bigint * count(*) AS actors FROM growth_actors a
    WHERE a.event_name = ANY(@funnel_events::text[])
      AND (CASE WHEN @include_internal::boolean THEN a.last_any ELSE a.last_external END) >= @seen_from
      AND (CASE WHEN @include_internal::boolean THEN a.last_any ELSE a.last_external END) < @seen_to
    GROUP BY a.event_name
    UNION ALL
    SELECT f.event_name, count(*) FROM future f WHERE coalesce((
        SELECT CASE WHEN @include_internal::boolean THEN a.last_any ELSE a.last_external END FROM growth_actors a
        WHERE a.event_name = f.event_name AND a.actor = f.actor), '-infinity') < @since
    GROUP BY f.event_name
) actors
GROUP BY event_name;
