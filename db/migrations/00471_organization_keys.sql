-- +goose Up
-- Every key of a tenant-owned table carries organization_id, and every foreign key between
-- tenant-owned tables joins on it (issue 29, distribution-ready schema: see docs/design.md
-- "Distribution by organization"; TestEveryTenantQueryFiltersOnOrganization checks it).
--
-- The indexes were built by 00470 without blocking writes: each key is swapped for its index
-- under a moment's lock. The foreign keys are made again NOT VALID, which reads no row; 00472
-- validates them without blocking writes. Nothing the previous release writes changes: it
-- already writes organization_id in every row, the same organization as the rows it refers to.

-- A long transaction holding one of these tables makes the migration fail after 10 s (the next
-- start retries it) instead of queueing every writer of the tables it already locked.
SET LOCAL lock_timeout = '10s';

-- +goose StatementBegin
DO $$
DECLARE
    -- The tables whose primary key (id) becomes (organization_id, id).
    rekeyed regclass[] := ARRAY[
        'api_keys', 'billing_invoices', 'billing_payments', 'connected_businesses', 'oauth_tokens',
        'onboardings', 'service_resources', 'spend_controls', 'subscriptions', 'support_case_messages',
        'support_cases', 'tax_invoices', 'test_clocks', 'webhook_endpoints'
    ]::regclass[];
    t regclass;
    fk record;
    remade text[] := '{}';
    stmt text;
BEGIN
    -- The foreign keys that rest on those primary keys, found in the catalog (so also those of
    -- tables other branches repartition): dropped here, made again below on
    -- (organization_id, column) with the same ON DELETE.
    FOR fk IN
        SELECT c.conrelid::regclass AS child, c.conname, a.attname, c.confrelid::regclass AS parent,
               c.confdeltype, k.relkind
        FROM pg_constraint c
        JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
        JOIN pg_class k ON k.oid = c.conrelid
        JOIN pg_constraint pk ON pk.conrelid = c.confrelid AND pk.contype = 'p' AND pk.conindid = c.conindid
        WHERE c.contype = 'f' AND c.conparentid = 0 AND c.confrelid = ANY (rekeyed)
    LOOP
        IF fk.confdeltype NOT IN ('a', 'r', 'c') THEN
            RAISE EXCEPTION 'foreign key % of %: ON DELETE SET NULL/DEFAULT would clear organization_id too', fk.conname, fk.child;
        END IF;
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', fk.child, fk.conname);
        remade := remade || format(
            'ALTER TABLE %s ADD CONSTRAINT %I FOREIGN KEY (organization_id, %I) REFERENCES %s (organization_id, id) ON DELETE %s%s',
            fk.child, fk.conname, fk.attname, fk.parent,
            CASE fk.confdeltype WHEN 'c' THEN 'CASCADE' WHEN 'r' THEN 'RESTRICT' ELSE 'NO ACTION' END,
            -- PostgreSQL 15 refuses NOT VALID on a partitioned table: those are checked now.
            CASE WHEN fk.relkind = 'p' THEN '' ELSE ' NOT VALID' END);
    END LOOP;
    FOREACH t IN ARRAY rekeyed LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', t, t::text || '_pkey');
        EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I PRIMARY KEY USING INDEX %I', t, t::text || '_pkey', t::text || '_organization_key');
    END LOOP;
    FOREACH stmt IN ARRAY remade LOOP
        EXECUTE stmt;
    END LOOP;
END $$;
-- +goose StatementEnd

ALTER TABLE billing_invoice_tax_documents DROP CONSTRAINT billing_invoice_tax_documents_pkey;
ALTER TABLE billing_invoice_tax_documents ADD CONSTRAINT billing_invoice_tax_documents_pkey
    PRIMARY KEY USING INDEX billing_invoice_tax_documents_organization_key;
ALTER TABLE billing_invoice_tax_documents DROP CONSTRAINT billing_invoice_tax_documents_tax_invoice_id_key;
ALTER TABLE billing_invoice_tax_documents ADD CONSTRAINT billing_invoice_tax_documents_organization_tax_invoice
    UNIQUE USING INDEX billing_invoice_tax_documents_organization_tax_invoice;

ALTER TABLE service_resources DROP CONSTRAINT service_resources_connected_business_id_product_key;
ALTER TABLE service_resources ADD CONSTRAINT service_resources_organization_business_product
    UNIQUE USING INDEX service_resources_organization_business_product;

ALTER TABLE tax_invoice_submissions DROP CONSTRAINT tax_invoice_submissions_pkey;
ALTER TABLE tax_invoice_submissions ADD CONSTRAINT tax_invoice_submissions_pkey
    PRIMARY KEY USING INDEX tax_invoice_submissions_organization_key;

-- +goose Down
ALTER TABLE tax_invoice_submissions DROP CONSTRAINT tax_invoice_submissions_pkey;
ALTER TABLE tax_invoice_submissions ADD PRIMARY KEY (tax_invoice_id);

ALTER TABLE service_resources DROP CONSTRAINT service_resources_organization_business_product;
ALTER TABLE service_resources ADD CONSTRAINT service_resources_connected_business_id_product_key
    UNIQUE (connected_business_id, product);

ALTER TABLE billing_invoice_tax_documents DROP CONSTRAINT billing_invoice_tax_documents_organization_tax_invoice;
ALTER TABLE billing_invoice_tax_documents ADD CONSTRAINT billing_invoice_tax_documents_tax_invoice_id_key
    UNIQUE (tax_invoice_id);
ALTER TABLE billing_invoice_tax_documents DROP CONSTRAINT billing_invoice_tax_documents_pkey;
ALTER TABLE billing_invoice_tax_documents ADD PRIMARY KEY (billing_invoice_id, purpose);

-- +goose StatementBegin
DO $$
DECLARE
    rekeyed regclass[] := ARRAY[
        'api_keys', 'billing_invoices', 'billing_payments', 'connected_businesses', 'oauth_tokens',
        'onboardings', 'service_resources', 'spend_controls', 'subscriptions', 'support_case_messages',
        'support_cases', 'tax_invoices', 'test_clocks', 'webhook_endpoints'
    ]::regclass[];
    t regclass;
    fk record;
    remade text[] := '{}';
    stmt text;
BEGIN
    FOR fk IN
        SELECT c.conrelid::regclass AS child, c.conname, a.attname, c.confrelid::regclass AS parent, c.confdeltype
        FROM pg_constraint c
        JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[2]
        JOIN pg_constraint pk ON pk.conrelid = c.confrelid AND pk.contype = 'p' AND pk.conindid = c.conindid
        WHERE c.contype = 'f' AND c.conparentid = 0 AND c.confrelid = ANY (rekeyed)
    LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', fk.child, fk.conname);
        remade := remade || format('ALTER TABLE %s ADD CONSTRAINT %I FOREIGN KEY (%I) REFERENCES %s (id) ON DELETE %s',
            fk.child, fk.conname, fk.attname, fk.parent,
            CASE fk.confdeltype WHEN 'c' THEN 'CASCADE' WHEN 'r' THEN 'RESTRICT' ELSE 'NO ACTION' END);
    END LOOP;
    FOREACH t IN ARRAY rekeyed LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', t, t::text || '_pkey');
        EXECUTE format('ALTER TABLE %s ADD PRIMARY KEY (id)', t);
    END LOOP;
    FOREACH stmt IN ARRAY remade LOOP
        EXECUTE stmt;
    END LOOP;
END $$;
-- +goose StatementEnd
