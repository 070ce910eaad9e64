-- name: BillingStepsDueAnyOrganization :many
-- The renewal worker's scan (wall clock): billing steps due at @now of every organization that
-- is on no test clock, earliest first. Each is then taken in a transaction of its own,
-- locked by its organization_id.
SELECT b.organization_id, b.id, b.due_at::timestamptz AS due_at FROM subscription_billing_steps b
WHERE b.due_at <= @now::timestamptz
  AND NOT EXISTS (SELECT 1 FROM test_clocks c WHERE c.organization_id = b.organization_id)
ORDER BY b.due_at, b.id
LIMIT @max_rows;

-- name: BillingStepNext :one
-- The first billing step of the organization due at @until, for a test clock's advance: the
-- earliest, then by subscription id.
SELECT b.id, b.due_at::timestamptz AS due_at FROM subscription_billing_steps b
WHERE b.organization_id = @organization_id AND b.due_at <= @until::timestamptz
ORDER BY b.due_at, b.id
LIMIT 1;

-- name: BillingStepLock :one
-- Locks the subscription for a billing step (a test clock's advance waits for the lock) and
-- answers the organization's billing time with it: its test clock's time, or @wall_clock
-- when it is on none (DB.billingNow, in the same statement).
SELECT sqlc.embed(s), coalesce(c.frozen_time, @wall_clock::timestamptz)::timestamptz AS billing_time
FROM subscriptions s LEFT JOIN test_clocks c ON c.organization_id = s.organization_id
WHERE s.organization_id = @organization_id AND s.id = @id
FOR UPDATE OF s;

-- name: BillingStepClaim :one
-- As BillingStepLock, for the wall-clock run: a subscription locked by anyone else (another
-- run's worker, a request) is skipped, no row, rather than waited for; it stays due and a
-- later read of the run, or the next run, takes it.
SELECT sqlc.embed(s), coalesce(c.frozen_time, @wall_clock::timestamptz)::timestamptz AS billing_time
FROM subscriptions s LEFT JOIN test_clocks c ON c.organization_id = s.organization_id
WHERE s.organization_id = @organization_id AND s.id = @id
FOR UPDATE OF s SKIP LOCKED;

-- name: BillingStepDue :one
-- Whether the subscription has a billing step due at @now: checked again once its row is
-- locked, so a step another process has just taken is not taken twice.
SELECT EXISTS (SELECT 1 FROM subscription_billing_steps b
               WHERE b.organization_id = @organization_id AND b.id = @id AND b.due_at <= @now::timestamptz);

-- name: SubscriptionRenewalInsert :exec
-- Records a renewal; its primary key refuses a second renewal of one period.
INSERT INTO subscription_renewals (organization_id, subscription_id, period_start, period_end, invoice_id, renewed_at)
VALUES (@organization_id, @subscription_id, @period_start, @period_end, sqlc.narg(invoice_id), @renewed_at);

-- name: TestClockInsert :one
INSERT INTO test_clocks (id, created_at, updated_at, organization_id, frozen_time)
VALUES (@id, @created_at, @created_at, @organization_id, @frozen_time)
RETURNING *;

-- name: TestClockGetByID :one
SELECT * FROM test_clocks WHERE organization_id = @organization_id AND id = @id;

-- name: TestClockGetByIDAnyOrganization :one
-- The operator's read: any organization.
SELECT * FROM test_clocks WHERE id = @id;

-- name: TestClockGetByIDForUpdate :one
-- Locks the clock for its advance: advances of one clock run one after another.
SELECT * FROM test_clocks WHERE organization_id = @organization_id AND id = @id FOR UPDATE;

-- name: TestClockGetByIDForUpdateAnyOrganization :one
-- The operator's lock: any organization.
SELECT * FROM test_clocks WHERE id = @id FOR UPDATE;

-- name: SubscriptionLockByOrganization :exec
-- Locks every subscription of the organization, in id order (as incidents lock theirs), for a
-- test clock's advance, before it takes any step: a step's renewal locks the organization's
-- credit balance until the advance ends, so the advance must never wait for a subscription
-- after one (a request holding that subscription may be waiting for the balance: a deadlock).
SELECT id FROM subscriptions WHERE organization_id = @organization_id ORDER BY id FOR UPDATE;

-- name: TestClockSetFrozenTime :one
UPDATE test_clocks SET frozen_time = @frozen_time, updated_at = @updated_at
WHERE organization_id = @organization_id AND id = @id
RETURNING *;

-- name: TestClockFrozenTime :one
-- The time of the organization's test clock (no rows: the organization is on none).
SELECT frozen_time FROM test_clocks WHERE organization_id = @organization_id;
