-- name: TaxInvoiceInsert :one
INSERT INTO tax_invoices (
    id, organization_id, egs_unit_id, icv, number, uuid, pih, invoice_hash, status, invoice_type,
    requested_type, valid, payable_amount, issued_at, request, result, xml, request_id
) VALUES (
    @id, @organization_id, @egs_unit_id, @icv, @number, @uuid, @pih, @invoice_hash, @status, @invoice_type,
    @requested_type, @valid, @payable_amount, @issued_at, @request, @result, @xml, @request_id
)
RETURNING *;

-- name: TaxInvoiceGetByID :one
SELECT * FROM tax_invoices WHERE organization_id = @organization_id AND id = @id;

-- name: TaxInvoiceGetByIDAnyOrganization :one
-- The operator's read: any organization.
SELECT * FROM tax_invoices WHERE id = @id;

-- name: TaxInvoiceListChain :many
-- The chain of one EGS unit in counter order.
SELECT id, icv, pih, invoice_hash FROM tax_invoices
WHERE organization_id = @organization_id AND egs_unit_id = @egs_unit_id
ORDER BY icv;
