-- +goose Up
-- Issue 26: every issued SAR billing invoice gets its tax document from the e-invoicing
-- engine, issued by the platform (the seller) to the organization (the buyer), and a void of
-- the invoice gets a credit note.

-- The platform's own seller identity for its tax documents: one chain (ICV and the previous
-- document's hash) per EGS unit across every buyer, and its sandbox stamping key, sealed with
-- the service's encryption key like the organizations' keys. Not tenant-owned: the platform
-- is no organization. The row lock serialises the chain.
CREATE TABLE platform_einvoice_units (
    egs_unit_id       text        PRIMARY KEY CHECK (egs_unit_id <> ''),
    created_at        timestamptz NOT NULL DEFAULT now(),
    last_icv          bigint      NOT NULL CHECK (last_icv >= 0),
    last_invoice_hash text        NOT NULL,
    private_key       bytea       NOT NULL,
    certificate       bytea       NOT NULL
);

-- The outcome of each tax document a billing invoice is owed: its tax invoice ('invoice') and,
-- once the invoice is void, its credit note ('credit_note'). The primary key makes each one
-- happen exactly once, however often the job runs: either the document (a row of
-- tax_invoices, stored under the buyer organization) or why the engine refused it.
CREATE TABLE billing_invoice_tax_documents (
    organization_id    uuid        NOT NULL REFERENCES organizations (id),
    billing_invoice_id uuid        NOT NULL REFERENCES billing_invoices (id),
    purpose            text        NOT NULL CHECK (purpose IN ('invoice', 'credit_note')),
    created_at         timestamptz NOT NULL DEFAULT now(),
    tax_invoice_id     uuid        UNIQUE REFERENCES tax_invoices (id),
    -- {"message": …, "issues": [{code, severity, path, message}]} when the engine refused.
    failure            jsonb,
    -- The engine's request (einvoice.Request): the credit note of a void credits exactly
    -- what the tax invoice charged, to the buyer it named.
    engine_request     jsonb       NOT NULL,
    PRIMARY KEY (billing_invoice_id, purpose),
    CHECK ((tax_invoice_id IS NULL) <> (failure IS NULL))
);

CREATE INDEX billing_invoice_tax_documents_organization ON billing_invoice_tax_documents (organization_id, billing_invoice_id);

-- +goose Down
DROP TABLE billing_invoice_tax_documents;
DELETE FROM tax_invoices WHERE egs_unit_id IN (SELECT egs_unit_id FROM platform_einvoice_units);
DROP TABLE platform_einvoice_units;
