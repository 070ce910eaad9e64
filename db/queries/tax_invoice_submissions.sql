-- name: TaxInvoiceLockForSubmission :one
-- The document to submit, locked so concurrent submissions of it queue and the second sees
-- the first's status. An organization's own documents only.
SELECT id, organization_id, invoice_type, issued_at, xml, submission_status FROM tax_invoices
WHERE organization_id = @organization_id AND id = @id
FOR UPDATE;

-- name: TaxInvoiceSetSubmissionStatus :exec
UPDATE tax_invoices SET submission_status = @submission_status
WHERE organization_id = @organization_id AND id = @id;

-- name: TaxInvoiceSubmissionInsert :one
INSERT INTO tax_invoice_submissions (
    tax_invoice_id, organization_id, status, results, cleared_xml, cleared_qr, submitted_at, request_id
) VALUES (
    @tax_invoice_id, @organization_id, @status, @results, @cleared_xml, @cleared_qr, @submitted_at, @request_id
)
RETURNING *;

-- name: TaxInvoiceSubmissionGet :one
-- An organization's read; a connected business sees only its own documents' submissions.
SELECT s.*, t.invoice_type FROM tax_invoice_submissions s
JOIN tax_invoices t ON t.organization_id = s.organization_id AND t.id = s.tax_invoice_id
WHERE s.organization_id = @organization_id AND s.tax_invoice_id = @tax_invoice_id
  AND (sqlc.narg(connected_business_id)::uuid IS NULL OR t.connected_business_id = sqlc.narg(connected_business_id));

-- name: TaxInvoiceSubmissionGetAnyOrganization :one
-- The operator's read: any organization.
SELECT s.*, t.invoice_type FROM tax_invoice_submissions s
JOIN tax_invoices t ON t.organization_id = s.organization_id AND t.id = s.tax_invoice_id
WHERE s.tax_invoice_id = @tax_invoice_id;
