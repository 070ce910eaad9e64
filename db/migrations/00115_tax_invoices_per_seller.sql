-- +goose Up
-- A connected business is its own seller (issue 21, item 2): its invoices record the business,
-- only its own credentials and its platform see them, and it has its own invoice chain per
-- EGS unit. The platform organization's own invoices (connected_business_id null) keep the
-- chain they have: every existing row belongs to it.
ALTER TABLE tax_invoices
    ADD COLUMN connected_business_id uuid REFERENCES connected_businesses (id);

-- The counter value is unique per seller and EGS unit; the platform's own chain (null) is one
-- seller, not one per row.
ALTER TABLE tax_invoices
    DROP CONSTRAINT tax_invoices_organization_id_egs_unit_id_icv_key,
    ADD CONSTRAINT tax_invoices_seller_egs_unit_id_icv_key
        UNIQUE NULLS NOT DISTINCT (organization_id, connected_business_id, egs_unit_id, icv);

-- seller_id names the chain: the organization's own id for its own invoices, the connected
-- business's id for a business's. It is never null, so the counter row is found and locked by
-- plain equality on its key (a nullable key column would need IS NOT DISTINCT FROM, which no
-- index serves).
ALTER TABLE einvoice_counters ADD COLUMN seller_id uuid;
UPDATE einvoice_counters SET seller_id = organization_id;
ALTER TABLE einvoice_counters
    ALTER COLUMN seller_id SET NOT NULL,
    DROP CONSTRAINT einvoice_counters_pkey,
    ADD PRIMARY KEY (organization_id, seller_id, egs_unit_id);

-- +goose Down
ALTER TABLE einvoice_counters DROP CONSTRAINT einvoice_counters_pkey;
DELETE FROM einvoice_counters WHERE seller_id <> organization_id;
ALTER TABLE einvoice_counters
    DROP COLUMN seller_id,
    ADD PRIMARY KEY (organization_id, egs_unit_id);
DELETE FROM tax_invoices WHERE connected_business_id IS NOT NULL;
ALTER TABLE tax_invoices
    DROP CONSTRAINT tax_invoices_seller_egs_unit_id_icv_key,
    ADD CONSTRAINT tax_invoices_organization_id_egs_unit_id_icv_key UNIQUE (organization_id, egs_unit_id, icv),
    DROP COLUMN connected_business_id;
