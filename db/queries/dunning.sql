-- name: BillingInvoiceOverdueFirstForUpdate :one
-- The subscription's oldest invoice unpaid (something still due) at its due_at by @now,
-- locked: the invoice a current subscription becomes overdue for. The same conditions as the
-- overdue part of subscription_billing_steps, so the step the view announces is found here.
SELECT * FROM billing_invoices
WHERE organization_id = @organization_id AND subscription_id = @subscription_id
  AND status IN ('issued', 'partially_paid') AND due_at IS NOT NULL AND amount_paid < total
  AND due_at <= @now::timestamptz
ORDER BY due_at, id
LIMIT 1
FOR UPDATE;

-- name: BillingPaymentMethodOnFile :one
-- The payment method on file of a subscription: the one its latest payment attempt (on any of
-- its invoices, succeeded or failed) used. No rows: none is on file.
SELECT p.payment_method FROM billing_payments p
JOIN billing_invoices i ON i.organization_id = p.organization_id AND i.id = p.invoice_id
WHERE p.organization_id = @organization_id AND i.organization_id = @organization_id AND i.subscription_id = @subscription_id
ORDER BY p.id DESC
LIMIT 1;

-- name: SubscriptionSetDunning :exec
-- Stores the billing status and dunning of a subscription together (the CHECKs tie them);
-- its other state goes through SubscriptionUpdateState.
UPDATE subscriptions
SET billing_status = @billing_status, dunning_invoice_id = sqlc.narg(dunning_invoice_id), dunning_retries = @dunning_retries, dunning_next_at = sqlc.narg(dunning_next_at)
WHERE organization_id = @organization_id AND id = @id;
