-- The hours of the growth summary's partial first day (postgres.spanCounts), from the hourly
-- counts of migration 00580: per organization, and summed over organizations.

-- name: GrowthHourlyCounts :many
-- Events per dimension of one organization over the whole hours [from_hour, to_hour).
SELECT dimension, key, sum(events)::bigint AS events
FROM growth_hourly_counts
WHERE organization_id = @organization_id::text AND hour >= @from_hour AND hour < @to_hour
  AND (NOT internal OR @include_internal::boolean)
GROUP BY dimension, key;

-- name: GrowthHourlyCountsAnyOrganization :many
-- The operator's provider-wide summary: GrowthHourlyCounts of every organization.
SELECT dimension, key, sum(events)::bigint AS events
FROM growth_hourly_counts
WHERE hour >= @from_hour AND hour < @to_hour AND (NOT internal OR @include_internal::boolean)
GROUP BY dimension, key;
