-- name: BillingInvoiceInsert :one
-- created_at and updated_at are issued_at.
INSERT INTO billing_invoices (
    id, created_at, updated_at, organization_id, subscription_id, plan_id, period_start, period_end, lines,
    subtotal, discount, tax, total, currency, status, tax_document_status, issued_at, due_at, opens_selection
) VALUES (
    @id, @issued_at, @issued_at, @organization_id, @subscription_id, @plan_id, @period_start, @period_end, @lines,
    @subtotal, @discount, @tax, @total, @currency, @status, @tax_document_status, @issued_at, @due_at, @opens_selection
)
RETURNING *;

-- name: BillingInvoiceVoidOpen :many
-- Voids the unpaid invoices of a subscription, so selecting a plan again never leaves two
-- invoices due for one subscription.
UPDATE billing_invoices SET status = 'void', updated_at = now()
WHERE organization_id = @organization_id AND subscription_id = @subscription_id AND status = 'issued'
RETURNING *;
