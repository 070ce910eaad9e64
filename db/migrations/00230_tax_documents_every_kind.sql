-- +goose Up
-- Issue 24: every kind of tax document — standard and simplified tax invoices, credit notes
-- and debit notes — in one table and one chain per seller and EGS unit. A note records the
-- invoice it corrects: by id when it is one of this service's, and always by number.
ALTER TABLE tax_invoices
    DROP CONSTRAINT tax_invoices_invoice_type_check,
    ADD CONSTRAINT tax_invoices_invoice_type_check CHECK (invoice_type IN (
        'simplified_tax_invoice', 'simplified_credit_note', 'simplified_debit_note',
        'standard_tax_invoice', 'standard_credit_note', 'standard_debit_note')),
    ADD COLUMN billing_reference_invoice_id uuid REFERENCES tax_invoices (id),
    ADD COLUMN billing_reference_number text,
    ADD CONSTRAINT tax_invoices_billing_reference_number CHECK (
        billing_reference_invoice_id IS NULL OR billing_reference_number IS NOT NULL);

-- The archive filtered by kind reads one organization's documents of that kind newest first.
CREATE INDEX tax_invoices_organization_id_invoice_type_id ON tax_invoices (organization_id, invoice_type, id DESC);

-- +goose Down
DROP INDEX tax_invoices_organization_id_invoice_type_id;
DELETE FROM tax_invoices WHERE invoice_type <> 'simplified_tax_invoice';
ALTER TABLE tax_invoices
    DROP CONSTRAINT tax_invoices_billing_reference_number,
    DROP COLUMN billing_reference_number,
    DROP COLUMN billing_reference_invoice_id,
    DROP CONSTRAINT tax_invoices_invoice_type_check,
    ADD CONSTRAINT tax_invoices_invoice_type_check CHECK (invoice_type IN ('simplified_tax_invoice'));
