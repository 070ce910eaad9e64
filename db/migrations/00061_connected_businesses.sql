-- +goose Up
-- Connected businesses of platform organizations, and the sandbox service resources they
-- (and later organizations themselves) hold per product.
CREATE TABLE connected_businesses (
    id                                uuid        PRIMARY KEY,
    organization_id                   uuid        NOT NULL REFERENCES organizations (id), -- the platform organization
    created_at                        timestamptz NOT NULL DEFAULT now(),
    updated_at                        timestamptz NOT NULL DEFAULT now(),
    external_reference                text        NOT NULL CHECK (length(external_reference) BETWEEN 1 AND 120),
    display_name                      text        NOT NULL CHECK (length(display_name) BETWEEN 1 AND 160),
    legal_name_ar                     text        CHECK (length(legal_name_ar) BETWEEN 1 AND 160),
    legal_name_en                     text        NOT NULL CHECK (length(legal_name_en) BETWEEN 1 AND 160),
    vat_reference                     text        CHECK (length(vat_reference) BETWEEN 1 AND 120),
    commercial_registration_reference text        CHECK (length(commercial_registration_reference) BETWEEN 1 AND 120),
    national_address_reference        text        CHECK (length(national_address_reference) BETWEEN 1 AND 120),
    lifecycle_status                  text        NOT NULL CHECK (lifecycle_status IN ('active', 'suspended', 'closed')),
    UNIQUE (organization_id, external_reference)
);

CREATE INDEX connected_businesses_organization_id_id ON connected_businesses (organization_id, id);

CREATE TABLE service_resources (
    id                    uuid        PRIMARY KEY,
    organization_id       uuid        NOT NULL REFERENCES organizations (id),
    connected_business_id uuid        REFERENCES connected_businesses (id),
    product               text        NOT NULL CHECK (product IN ('einvoice', 'address')),
    capability_id         text        NOT NULL,
    lifecycle_status      text        NOT NULL CHECK (lifecycle_status IN ('active', 'suspended', 'closed')),
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now(),
    UNIQUE (connected_business_id, product)
);

CREATE INDEX service_resources_organization_id ON service_resources (organization_id);

-- A connected-business credential is an API key bound to one business and its resource.
ALTER TABLE api_keys
    ADD COLUMN connected_business_id uuid REFERENCES connected_businesses (id),
    ADD COLUMN service_resource_id   uuid REFERENCES service_resources (id);

-- +goose Down
ALTER TABLE api_keys DROP COLUMN service_resource_id, DROP COLUMN connected_business_id;
DROP TABLE service_resources;
DROP TABLE connected_businesses;
