-- name: UsageCountInPeriod :one
-- The usage of a product by the organization from @from_time up to @to_time (excluded): its
-- accepted operations recorded then (usage_events.occurred_at, the organization's billing time).
SELECT count(*)::bigint FROM usage_events
WHERE organization_id = @organization_id AND product = @product
  AND occurred_at >= @from_time::timestamptz AND occurred_at < @to_time::timestamptz;

-- name: RecurringFeeInvoicedOn :one
-- Whether an invoice of the subscription that is neither void nor uncollectible (written off)
-- charged a recurring fee for @day (a line of component recurring_fee whose period holds it):
-- what a plan change or a termination may credit.
SELECT EXISTS (
    SELECT 1 FROM billing_invoices i
    WHERE i.organization_id = @organization_id AND i.subscription_id = @subscription_id AND i.status NOT IN ('void', 'uncollectible')
      AND i.period_start <= @day::date AND i.period_end >= @day::date
      AND jsonb_path_exists(i.lines,
            '$[*] ? (@.component_type == "recurring_fee" && @.period_start <= $d && @.period_end >= $d)',
            jsonb_build_object('d', to_char(@day::date, 'YYYY-MM-DD"T"00:00:00"Z"'))));
