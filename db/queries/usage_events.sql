-- name: UsageRecord :one
-- Records one operation of a product in one statement: its usage event, and the month's
-- counter incremented (its row lock orders concurrent operations), which it returns. The event
-- is recorded at the organization's billing time (docs/design.md, "Usage rating"): its test
-- clock's frozen time when it is on one, so a clock's periods rate the usage made while the
-- clock stood in them. The clock is read FOR SHARE: an advance in progress (which holds it
-- until it commits) is waited for and its new time read, never the time it is moving from,
-- whose periods it may have closed and billed already. The counter's month is the UTC month
-- of now().
WITH event AS (
    INSERT INTO usage_events (id, organization_id, product, occurred_at)
    VALUES (@id, @organization_id, @product,
            coalesce((SELECT c.frozen_time FROM test_clocks c WHERE c.organization_id = @organization_id FOR SHARE), now()))
)
INSERT INTO usage_counters (organization_id, product, month, operations)
VALUES (@organization_id, @product, date_trunc('month', now() AT TIME ZONE 'UTC')::date, 1)
ON CONFLICT (organization_id, product, month) DO UPDATE SET operations = usage_counters.operations + 1
RETURNING *;
