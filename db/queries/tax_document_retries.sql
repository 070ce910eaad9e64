-- name: BillingInvoiceTaxDocumentDeleteFailed :execrows
-- Forgets the refused outcome of a billing invoice's tax invoice, so the job issues it again
-- (a retry): the refusal stays in the audit trail and the failed event.
DELETE FROM billing_invoice_tax_documents
WHERE organization_id = @organization_id AND billing_invoice_id = @billing_invoice_id
  AND purpose = 'invoice' AND failure IS NOT NULL;
