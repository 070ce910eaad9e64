-- +goose Up
-- Issue 27, submission (simulated): a tax document is reported (simplified) or cleared
-- (standard) once, by the sandbox authority.

-- Where each document stands, on the document itself so the archive's submission_status
-- filter reads one index in its order (organization, status, newest first) instead of
-- scanning the organization's documents.
ALTER TABLE tax_invoices
    ADD COLUMN submission_status text NOT NULL DEFAULT 'NOT_SUBMITTED'
        CHECK (submission_status IN ('NOT_SUBMITTED', 'REPORTED', 'NOT_REPORTED', 'CLEARED', 'NOT_CLEARED'));
CREATE INDEX tax_invoices_organization_id_submission_status_id ON tax_invoices (organization_id, submission_status, id DESC);

-- The authority's answer, as given: one row per submitted document (the primary key makes a
-- second submission impossible). No foreign key to tax_invoices: its primary key may come to
-- include a partition key (issue 29); the row is written in the transaction that moves the
-- document's submission_status, under that document's row lock.
CREATE TABLE tax_invoice_submissions (
    tax_invoice_id  uuid        PRIMARY KEY,
    organization_id uuid        NOT NULL REFERENCES organizations (id),
    status          text        NOT NULL CHECK (status IN ('REPORTED', 'NOT_REPORTED', 'CLEARED', 'NOT_CLEARED')),
    -- The validation results (einvoice.Result list) and, when cleared, the stamped document
    -- and its QR payload.
    results         jsonb       NOT NULL,
    cleared_xml     text,
    cleared_qr      text,
    submitted_at    timestamptz NOT NULL,
    request_id      text,
    CHECK ((status = 'CLEARED') = (cleared_xml IS NOT NULL))
);
ALTER TABLE tax_invoice_submissions ALTER COLUMN results SET STATISTICS 0, ALTER COLUMN cleared_xml SET STATISTICS 0;

-- +goose Down
DROP TABLE tax_invoice_submissions;
DROP INDEX tax_invoices_organization_id_submission_status_id;
ALTER TABLE tax_invoices DROP COLUMN submission_status;
