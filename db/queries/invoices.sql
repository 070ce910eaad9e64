-- name: BillingInvoiceGetByID :one
SELECT * FROM billing_invoices WHERE organization_id = @organization_id AND id = @id;

-- name: BillingInvoiceGetByIDAnyOrganization :one
SELECT * FROM billing_invoices WHERE id = @id;

-- name: BillingInvoiceGetByIDForUpdate :one
-- NO KEY UPDATE, as SubscriptionGetByIDForUpdate: rows referring to the invoice stay writable.
SELECT * FROM billing_invoices WHERE organization_id = @organization_id AND id = @id FOR NO KEY UPDATE;

-- name: BillingInvoiceGetByIDForUpdateAnyOrganization :one
SELECT * FROM billing_invoices WHERE id = @id FOR NO KEY UPDATE;

-- name: BillingInvoiceList :many
-- Keyset pagination in id (UUIDv7, issue) order within one organization.
SELECT * FROM billing_invoices
WHERE organization_id = @organization_id
  AND (sqlc.narg(subscription_id)::uuid IS NULL OR subscription_id = sqlc.narg(subscription_id))
  AND (sqlc.narg(status)::text IS NULL OR status = sqlc.narg(status))
  AND (sqlc.narg(after)::uuid IS NULL OR id > sqlc.narg(after))
ORDER BY id
LIMIT @row_limit;

-- name: BillingInvoiceListAnyOrganization :many
-- The operator's list: every organization, in id order.
SELECT * FROM billing_invoices
WHERE (sqlc.narg(subscription_id)::uuid IS NULL OR subscription_id = sqlc.narg(subscription_id))
  AND (sqlc.narg(status)::text IS NULL OR status = sqlc.narg(status))
  AND (sqlc.narg(after)::uuid IS NULL OR id > sqlc.narg(after))
ORDER BY id
LIMIT @row_limit;

-- name: BillingInvoiceUpdateState :one
-- Stores what a payment, a void or a write-off computed from the locked row.
UPDATE billing_invoices SET status = @status, amount_paid = @amount_paid, paid_at = @paid_at, updated_at = @updated_at
WHERE organization_id = @organization_id AND id = @id
RETURNING *;

-- name: BillingPaymentInsert :one
INSERT INTO billing_payments (
    id, created_at, organization_id, invoice_id, amount, currency, payment_method, status, failure_code, failure_message
) VALUES (
    @id, @created_at, @organization_id, @invoice_id, @amount, @currency, @payment_method, @status, @failure_code, @failure_message
)
RETURNING *;

-- name: BillingPaymentGetByID :one
SELECT * FROM billing_payments WHERE organization_id = @organization_id AND id = @id;

-- name: BillingPaymentGetByIDAnyOrganization :one
SELECT * FROM billing_payments WHERE id = @id;

-- name: BillingPaymentList :many
-- Keyset pagination in id (UUIDv7, creation) order within one organization.
SELECT * FROM billing_payments
WHERE organization_id = @organization_id
  AND (sqlc.narg(invoice_id)::uuid IS NULL OR invoice_id = sqlc.narg(invoice_id))
  AND (sqlc.narg(after)::uuid IS NULL OR id > sqlc.narg(after))
ORDER BY id
LIMIT @row_limit;

-- name: BillingPaymentListAnyOrganization :many
-- The operator's list: every organization, in id order.
SELECT * FROM billing_payments
WHERE (sqlc.narg(invoice_id)::uuid IS NULL OR invoice_id = sqlc.narg(invoice_id))
  AND (sqlc.narg(after)::uuid IS NULL OR id > sqlc.narg(after))
ORDER BY id
LIMIT @row_limit;

