-- The growth summary's whole months and the hours of its boundary (postgres.summaryLevels), from
-- the counts of migration 00580: per organization, and summed over organizations.

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

-- name: GrowthMonthlyCounts :many
-- Events per dimension of one organization over the whole months [from_month, to_month).
SELECT dimension, key, sum(events)::bigint AS events
FROM growth_monthly_counts
WHERE organization_id = @organization_id::text AND month >= @from_month AND month < @to_month
  AND (NOT internal OR @include_internal::boolean)
GROUP BY dimension, key;

-- name: GrowthMonthlyCountsAnyOrganization :many
-- The operator's provider-wide summary: GrowthMonthlyCounts of every organization.
SELECT dimension, key, sum(events)::bigint AS events
FROM growth_provider_monthly_counts
WHERE month >= @from_month AND month < @to_month AND (NOT internal OR @include_internal::boolean)
GROUP BY dimension, key;
