-- name: SpendControlUpsert :one
INSERT INTO spend_controls (
    id, organization_id, product, warning_threshold_percent, monthly_budget_minor_units,
    hard_operation_limit, notification_recipients, enabled
) VALUES (
    @id, @organization_id, @product, @warning_threshold_percent, @monthly_budget_minor_units,
    @hard_operation_limit, @notification_recipients, @enabled
)
ON CONFLICT (organization_id, product) DO UPDATE SET
    warning_threshold_percent = EXCLUDED.warning_threshold_percent,
    monthly_budget_minor_units = EXCLUDED.monthly_budget_minor_units,
    hard_operation_limit = EXCLUDED.hard_operation_limit,
    notification_recipients = EXCLUDED.notification_recipients,
    enabled = EXCLUDED.enabled,
    updated_at = now()
RETURNING *;

-- name: SpendControlGet :one
SELECT * FROM spend_controls WHERE organization_id = @organization_id AND product = @product;

-- name: SpendControlListWithUsage :many
-- Every control of the organization with the operations of the current UTC month.
SELECT sqlc.embed(spend_controls), coalesce(usage_counters.operations, 0)::bigint AS current_operations
FROM spend_controls
LEFT JOIN usage_counters ON usage_counters.organization_id = spend_controls.organization_id
    AND usage_counters.product = spend_controls.product
    AND usage_counters.month = date_trunc('month', now() AT TIME ZONE 'UTC')::date
WHERE spend_controls.organization_id = @organization_id
ORDER BY spend_controls.product;

-- name: UsageCounterGet :one
SELECT * FROM usage_counters
WHERE organization_id = @organization_id AND product = @product
  AND month = date_trunc('month', now() AT TIME ZONE 'UTC')::date;

-- name: UsageCounterMarkWarning :execrows
-- Once per month: only the first crossing marks the row.
UPDATE usage_counters SET warning_reached_at = now()
WHERE organization_id = @organization_id AND product = @product AND month = @month AND warning_reached_at IS NULL;

-- name: UsageCounterMarkHardLimit :execrows
UPDATE usage_counters SET hard_limit_reached_at = now()
WHERE organization_id = @organization_id AND product = @product AND month = @month AND hard_limit_reached_at IS NULL;

-- name: UsageReport :many
-- Operations per product and period (day or month, UTC) between two dates, inclusive.
SELECT product,
       date_trunc(@granularity::text, occurred_at AT TIME ZONE 'UTC')::date AS period_start,
       count(*)::bigint AS operations
FROM usage_events
WHERE organization_id = @organization_id
  AND (sqlc.narg(product)::text IS NULL OR product = sqlc.narg(product))
  AND occurred_at >= (@from_date::date)::timestamp AT TIME ZONE 'UTC'
  AND occurred_at < ((@to_date::date) + 1)::timestamp AT TIME ZONE 'UTC'
GROUP BY product, period_start
ORDER BY period_start, product;
