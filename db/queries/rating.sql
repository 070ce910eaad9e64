-- name: UsageCountInPeriod :one
-- The usage of a product by the organization from @from_time up to @to_time (excluded): its
-- accepted operations recorded then (usage_events.occurred_at, the organization's billing time).
SELECT count(*)::bigint FROM usage_events
WHERE organization_id = @organization_id AND product = @product
  AND occurred_at >= @from_time::timestamptz AND occurred_at < @to_time::timestamptz;
