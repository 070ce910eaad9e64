-- name: TaxInvoiceInsert :one
-- Stores a document and, when chain_seller_id is given, moves its seller's chain on to it in the
-- same statement: the counter row (which EinvoiceCounterLock locked) takes the document's ICV
-- and hash, the next document's PIH. A null chain_seller_id leaves the chain to the caller (the
-- platform's unit). Returns only what the database decides (created_at): the caller holds
-- every other value, and RETURNING * would send the bodies just written (XML, request, result)
-- back to it. The XML comes before the other bodies: pgx encodes the parameters into one
-- buffer, and the pipeline sizes it for them all at the first large text (reserveParameters).
WITH chain AS (
    UPDATE einvoice_counters SET last_icv = @icv, last_invoice_hash = @invoice_hash
    WHERE einvoice_counters.organization_id = @organization_id AND einvoice_counters.seller_id = sqlc.narg(chain_seller_id)
      AND einvoice_counters.egs_unit_id = @egs_unit_id
)
INSERT INTO tax_invoices (
    id, organization_id, connected_business_id, egs_unit_id, icv, number, uuid, pih, invoice_hash, status, invoice_type,
    requested_type, valid, payable_amount, issued_at, xml, request, result, request_id,
    billing_reference_invoice_id, billing_reference_number
) VALUES (
    @id, @organization_id, @connected_business_id, @egs_unit_id, @icv, @number, @uuid, @pih, @invoice_hash, @status, @invoice_type,
    @requested_type, @valid, @payable_amount, @issued_at, @xml, @request, @result, @request_id,
    @billing_reference_invoice_id, @billing_reference_number
)
RETURNING created_at;

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

-- name: TaxInvoiceList :many
-- The archive: one organization's documents newest first (keyset on the UUIDv7 id), a
-- connected business's own only when connected_business_id is given. The bodies (request,
-- result, XML) are not read.
SELECT id, organization_id, connected_business_id, egs_unit_id, icv, number, uuid, invoice_hash, status, invoice_type,
       payable_amount, issued_at, created_at, billing_reference_number
FROM tax_invoices
WHERE organization_id = @organization_id
  AND (sqlc.narg(connected_business_id)::uuid IS NULL OR connected_business_id = sqlc.narg(connected_business_id))
  AND (sqlc.narg(invoice_type)::text IS NULL OR invoice_type = sqlc.narg(invoice_type))
  AND (sqlc.narg(issued_from)::timestamptz IS NULL OR issued_at >= sqlc.narg(issued_from))
  AND (sqlc.narg(issued_before)::timestamptz IS NULL OR issued_at < sqlc.narg(issued_before))
  AND (sqlc.narg(icv_from)::bigint IS NULL OR icv >= sqlc.narg(icv_from))
  AND (sqlc.narg(icv_to)::bigint IS NULL OR icv <= sqlc.narg(icv_to))
  AND (sqlc.narg(submission_status)::text IS NULL OR submission_status = sqlc.narg(submission_status))
  AND (sqlc.narg(before)::uuid IS NULL OR id < sqlc.narg(before))
ORDER BY id DESC
LIMIT @row_limit;
