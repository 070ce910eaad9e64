-- name: TaxInvoiceInsert :one
INSERT INTO tax_invoices (
    id, organization_id, connected_business_id, egs_unit_id, icv, number, uuid, pih, invoice_hash, status, invoice_type,
    requested_type, valid, payable_amount, issued_at, request, result, xml, request_id
) VALUES (
    @id, @organization_id, @connected_business_id, @egs_unit_id, @icv, @number, @uuid, @pih, @invoice_hash, @status, @invoice_type,
    @requested_type, @valid, @payable_amount, @issued_at, @request, @result, @xml, @request_id
)
RETURNING *;

-- name: TaxInvoiceGetByID :one
-- An organization's read: a connected business (connected_business_id set) sees only its own
-- invoices, the platform organization (null) all of the organization's.
SELECT * FROM tax_invoices
WHERE organization_id = @organization_id AND id = @id
  AND (sqlc.narg(connected_business_id)::uuid IS NULL OR connected_business_id = sqlc.narg(connected_business_id));

-- name: TaxInvoiceGetByIDAnyOrganization :one
-- The operator's read: any organization.
SELECT * FROM tax_invoices WHERE id = @id;

-- name: TaxInvoiceListChain :many
-- The chain of one seller's EGS unit in counter order (connected_business_id null: the
-- organization's own chain).
SELECT id, icv, pih, invoice_hash FROM tax_invoices
WHERE organization_id = @organization_id AND egs_unit_id = @egs_unit_id
  AND connected_business_id IS NOT DISTINCT FROM sqlc.narg(connected_business_id)::uuid
ORDER BY icv;
