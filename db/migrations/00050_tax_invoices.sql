-- +goose Up
-- Simplified tax invoices (sandbox). Every table is tenant-owned and carries organization_id.

-- One sandbox stamping identity per organization: a secp256k1 key and its self-signed
-- certificate marked as sandbox. The private key is sealed with the service's encryption key
-- (internal/secretbox), never stored in clear.
CREATE TABLE einvoice_sandbox_keys (
    organization_id uuid        PRIMARY KEY REFERENCES organizations (id),
    created_at      timestamptz NOT NULL DEFAULT now(),
    private_key     bytea       NOT NULL,
    certificate     bytea       NOT NULL
);

-- The invoice chain of each organization and EGS unit: the last counter value (ICV) and the
-- last invoice hash (the next invoice's PIH). Generating an invoice increments the row in the
-- transaction that stores the invoice, so the row lock serialises the chain and a rollback
-- leaves no gap.
CREATE TABLE einvoice_counters (
    organization_id   uuid   NOT NULL REFERENCES organizations (id),
    egs_unit_id       text   NOT NULL CHECK (egs_unit_id <> ''),
    last_icv          bigint NOT NULL CHECK (last_icv >= 1),
    last_invoice_hash text   NOT NULL,
    PRIMARY KEY (organization_id, egs_unit_id)
);

CREATE TABLE tax_invoices (
    id              uuid        PRIMARY KEY,
    organization_id uuid        NOT NULL REFERENCES organizations (id),
    egs_unit_id     text        NOT NULL CHECK (egs_unit_id <> ''),
    icv             bigint      NOT NULL CHECK (icv >= 1),
    number          text        NOT NULL,
    uuid            uuid        NOT NULL,
    pih             text        NOT NULL,
    invoice_hash    text        NOT NULL,
    status          text        NOT NULL CHECK (status IN ('GENERATED')),
    invoice_type    text        NOT NULL CHECK (invoice_type IN ('simplified_tax_invoice')),
    requested_type  text        NOT NULL,
    valid           boolean     NOT NULL,
    payable_amount  bigint      NOT NULL,
    issued_at       timestamptz NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    -- The request as received (for reading back and for reconciling a retried request), the
    -- generation result (totals, issues, discrepancies, mapping report, QR) and the XML.
    request         jsonb       NOT NULL,
    result          jsonb       NOT NULL,
    xml             text        NOT NULL,
    request_id      text,
    UNIQUE (organization_id, egs_unit_id, icv),
    UNIQUE (organization_id, uuid)
);

CREATE INDEX tax_invoices_organization_id_id ON tax_invoices (organization_id, id DESC);

-- +goose Down
DROP TABLE tax_invoices;
DROP TABLE einvoice_counters;
DROP TABLE einvoice_sandbox_keys;
