-- +goose Up
-- Organizations are the tenants. Value sets are CHECK constraints rather than enum types so a
-- new value is a one-line migration; the OpenAPI document refuses bad values before they get here.
CREATE TABLE organizations (
    id                                uuid        PRIMARY KEY,
    created_at                        timestamptz NOT NULL DEFAULT now(),
    updated_at                        timestamptz NOT NULL DEFAULT now(),
    legal_name_ar                     text        NOT NULL CHECK (legal_name_ar <> ''),
    legal_name_en                     text        NOT NULL CHECK (legal_name_en <> ''),
    display_name                      text        NOT NULL CHECK (display_name <> ''),
    organization_type                 text        NOT NULL CHECK (organization_type IN
        ('standard_customer', 'reseller', 'vendor', 'white_label_tenant', 'internal')),
    country                           text        NOT NULL CHECK (country ~ '^[A-Z]{2}$'),
    commercial_registration_reference text        CHECK (commercial_registration_reference <> ''),
    vat_reference                     text        CHECK (vat_reference <> ''),
    national_address_reference        text        CHECK (national_address_reference <> ''),
    verification_status               text        NOT NULL CHECK (verification_status IN
        ('unverified', 'pending_review', 'verified', 'rejected')),
    risk_status                       text        NOT NULL CHECK (risk_status IN
        ('normal', 'watch', 'restricted', 'suspended_risk')),
    data_residency_policy             text        NOT NULL CHECK (data_residency_policy IN
        ('sa_only', 'sa_primary_intl_backup', 'unrestricted')),
    lifecycle_status                  text        NOT NULL CHECK (lifecycle_status IN
        ('pending', 'active', 'suspended', 'terminated', 'archived'))
);

-- +goose Down
DROP TABLE organizations;
