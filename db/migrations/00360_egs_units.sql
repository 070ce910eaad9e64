-- +goose Up
-- The sandbox's own certification authority: one key pair (the key sealed like every other
-- secret), made on first use, issuing every EGS unit's compliance and production certificate.
CREATE TABLE einvoice_sandbox_ca (
    singleton   boolean     PRIMARY KEY DEFAULT true CHECK (singleton),
    created_at  timestamptz NOT NULL DEFAULT now(),
    private_key bytea       NOT NULL,
    certificate bytea       NOT NULL
);

-- EGS units registered from a CSR: the onboarding fields, the unit's key (sealed) and the
-- certificates the sandbox CA issued. A unit's documents chain under egs_unit_id = its id.
CREATE TABLE egs_units (
    organization_id        uuid        NOT NULL REFERENCES organizations (id),
    id                     uuid        NOT NULL,
    status                 text        NOT NULL CHECK (status IN ('compliance', 'production', 'revoked')),
    common_name            text        NOT NULL,
    serial_number          text        NOT NULL,
    vat_number             text        NOT NULL,
    organization_unit_name text        NOT NULL,
    organization_name      text        NOT NULL,
    country                text        NOT NULL,
    invoice_types          text        NOT NULL,
    location               text        NOT NULL,
    industry               text        NOT NULL,
    csr                    bytea       NOT NULL,
    private_key            bytea       NOT NULL,
    compliance_certificate bytea       NOT NULL,
    production_certificate bytea,
    created_at             timestamptz NOT NULL DEFAULT now(),
    updated_at             timestamptz NOT NULL DEFAULT now(),
    revoked_at             timestamptz,
    PRIMARY KEY (organization_id, id),
    CHECK ((status = 'revoked') = (revoked_at IS NOT NULL))
);

-- +goose Down
DROP TABLE egs_units;
DROP TABLE einvoice_sandbox_ca;
