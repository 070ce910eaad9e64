-- name: UsageEventInsert :exec
-- An operation's usage is recorded at the organization's billing time (docs/design.md, "Usage
-- rating"): its test clock's frozen time when it is on one, so a clock's periods rate the usage
-- made while the clock stood in them.
INSERT INTO usage_events (id, organization_id, product, occurred_at)
VALUES (@id, @organization_id, @product,
        coalesce((SELECT c.frozen_time FROM test_clocks c WHERE c.organization_id = @organization_id), now()));
