-- name: CreditBalanceAvailableForUpdate :one
-- The organization's credit balance in @currency when it is positive, locked until the
-- transaction ends: what an invoice being issued may take. No rows: nothing to take (and no
-- lock, so invoices of organizations without a balance never wait for one another).
SELECT balance FROM customer_credit_balances
WHERE organization_id = @organization_id AND currency = @currency AND balance > 0
FOR UPDATE;

-- name: CreditBalanceAvailable :one
-- The same without a lock: what the upcoming invoice previews.
SELECT balance FROM customer_credit_balances
WHERE organization_id = @organization_id AND currency = @currency AND balance > 0;

-- name: CreditBalanceAdd :one
-- Adds @amount (negative: takes) to the organization's balance in @currency, creating it
-- first (a credit: only an existing balance is taken from), and returns the balance after.
-- The CHECK refuses a balance below zero.
INSERT INTO customer_credit_balances AS b (organization_id, currency, balance, updated_at)
VALUES (@organization_id, @currency, greatest(@amount::bigint, 0), @updated_at)
ON CONFLICT (organization_id, currency)
DO UPDATE SET balance = b.balance + @amount::bigint, updated_at = EXCLUDED.updated_at
WHERE b.organization_id = @organization_id
RETURNING balance;

-- name: CreditAppliedToInvoice :one
-- What the invoice took from the balance (a positive amount; 0 when nothing), less what a
-- void already gave back.
SELECT coalesce(-sum(amount), 0)::bigint FROM customer_credit_transactions
WHERE organization_id = @organization_id AND invoice_id = @invoice_id AND reason IN ('applied_to_invoice', 'void_restored');

-- name: CreditTransactionInsert :one
INSERT INTO customer_credit_transactions (id, organization_id, created_at, amount, currency, balance_after, reason, invoice_id, subscription_id)
VALUES (@id, @organization_id, @created_at, @amount, @currency, @balance_after, @reason, @invoice_id, @subscription_id)
RETURNING *;

-- name: CreditBalanceList :many
-- The organization's balances, one per currency it ever had one in.
SELECT * FROM customer_credit_balances WHERE organization_id = @organization_id ORDER BY currency;

-- name: CreditTransactionList :many
-- Keyset pagination in id (UUIDv7, time) order within one organization.
SELECT * FROM customer_credit_transactions
WHERE organization_id = @organization_id
  AND (sqlc.narg(after)::uuid IS NULL OR id > sqlc.narg(after))
ORDER BY id
LIMIT @row_limit;

-- name: CreditTransactionListAnyOrganization :many
-- The operator's list: every organization, in id order.
SELECT * FROM customer_credit_transactions
WHERE (sqlc.narg(after)::uuid IS NULL OR id > sqlc.narg(after))
ORDER BY id
LIMIT @row_limit;
