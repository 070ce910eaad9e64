-- name: PlatformEinvoiceUnitNext :one
-- Takes the next counter value of the platform's EGS unit and returns it with the previous
-- document's hash and the unit's stamping key. The unit exists (PlatformEinvoiceUnitCreate);
-- its row stays locked until the transaction ends, so the platform's documents chain one
-- after another whoever their buyer.
UPDATE platform_einvoice_units SET last_icv = last_icv + 1
WHERE egs_unit_id = @egs_unit_id
RETURNING last_icv, last_invoice_hash, private_key, certificate;

-- name: PlatformEinvoiceUnitCreate :exec
-- Creates the platform's EGS unit on first use; concurrent first uses keep the first key.
INSERT INTO platform_einvoice_units (egs_unit_id, last_icv, last_invoice_hash, private_key, certificate)
VALUES (@egs_unit_id, 0, @first_hash, @private_key, @certificate)
ON CONFLICT (egs_unit_id) DO NOTHING;

-- name: PlatformEinvoiceUnitExists :one
SELECT EXISTS (SELECT 1 FROM platform_einvoice_units WHERE egs_unit_id = @egs_unit_id);

-- name: PlatformEinvoiceUnitCertificate :one
SELECT certificate FROM platform_einvoice_units WHERE egs_unit_id = @egs_unit_id;

-- name: PlatformEinvoiceUnitSetHash :exec
UPDATE platform_einvoice_units SET last_invoice_hash = @last_invoice_hash WHERE egs_unit_id = @egs_unit_id;

-- name: BillingInvoiceTaxDocumentInsert :exec
-- Records the outcome of one tax document of a billing invoice; a second outcome of the same
-- document violates the primary key.
INSERT INTO billing_invoice_tax_documents (organization_id, billing_invoice_id, purpose, tax_invoice_id, failure, engine_request)
VALUES (@organization_id, @billing_invoice_id, @purpose, @tax_invoice_id, @failure, @engine_request);

-- name: BillingInvoiceTaxDocumentList :many
-- The outcomes of a billing invoice's tax documents with a summary of each document, the
-- invoice first, then its credit note.
SELECT d.purpose, d.failure, d.engine_request,
       t.id, t.organization_id, t.connected_business_id, t.egs_unit_id, t.icv, t.number, t.uuid, t.invoice_hash, t.status,
       t.invoice_type, t.payable_amount, t.issued_at, t.created_at, t.billing_reference_number
FROM billing_invoice_tax_documents d
LEFT JOIN tax_invoices t ON t.organization_id = d.organization_id AND t.id = d.tax_invoice_id
WHERE d.organization_id = @organization_id AND d.billing_invoice_id = @billing_invoice_id
ORDER BY d.purpose DESC;

-- name: BillingInvoiceSetTaxDocumentStatus :one
UPDATE billing_invoices SET tax_document_status = @tax_document_status, updated_at = @updated_at
WHERE organization_id = @organization_id AND id = @id
RETURNING *;
