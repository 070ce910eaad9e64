-- +goose Up
-- The seeded catalogue. Ids are fixed and UUIDv7-shaped (version 7, RFC 4122 variant) and
-- every insert skips rows that already exist, so applying the seed again changes nothing.
-- Amounts are minor units of SAR (halalas), tax-exclusive.
INSERT INTO products (id, created_at, updated_at, code, name_ar, name_en, description, category,
    service_classification, regulatory_classification, availability, provisioning_workflow,
    termination_policy, required_documents, required_approvals, required_credentials,
    metering_metrics, billing_model)
VALUES
    ('0193a000-0000-7000-8000-000000000001', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', 'einvoice',
     'الفوترة الإلكترونية', 'E-invoicing',
     'Simplified tax invoice generation: validation, UBL 2.1 XML, QR payload and chained counters (synthetic sandbox; not tax-authority reporting or clearance).',
     'api_access', 'developer_platform', 'software_over_licensed_rail', 'ga', 'automatic_sandbox', 'end_of_period',
     '{commercial_registration,vat_registration_certificate}', '{production_access_review}', '{api_key}',
     '{invoices_generated}', 'hybrid'),
    ('0193a000-0000-7000-8000-000000000002', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', 'address',
     'العنوان المختصر', 'Short address',
     'Short-address resolution (technical preview): synthetic data with explicit missing fields and provenance; not authoritative proof, and authoritative external-source activation is gated.',
     'api_access', 'developer_platform', 'regulated_pending_determination', 'beta', 'automatic_sandbox', 'immediate',
     '{commercial_registration}', '{authoritative_source_activation}', '{api_key}',
     '{short_addresses_resolved}', 'hybrid'),
    ('0193a000-0000-7000-8000-000000000003', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', 'platform',
     'منصة المطورين', 'Platform access',
     'Platform access: API keys, OAuth client credentials, request logs, usage and signed webhook delivery.',
     'webhook_infrastructure', 'infrastructure', 'ordinary_software', 'ga', 'automatic', 'end_of_period',
     '{terms_acceptance}', '{account_verification}', '{api_key,oauth_client}',
     '{api_requests,webhook_deliveries}', 'subscription')
ON CONFLICT (id) DO NOTHING;

INSERT INTO plans (id, created_at, updated_at, product_id, code, name, billing_period, currency,
    setup_fee, recurring_fee, minimum_commitment, included_usage, overage_rules,
    trial_days, trial_requires_payment_method, tax_policy_reference, status)
VALUES
    -- einvoice
    ('0193a000-0000-7000-8000-000000000101', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000001',
     'einvoice-growth-monthly', 'Growth (monthly)', 'monthly', 'SAR', 50000, 29900, NULL,
     '[{"metric":"invoices_generated","quantity":1000}]', '[{"metric":"invoices_generated","unit_price":25}]',
     NULL, NULL, 'sa-vat-standard', 'active'),
    ('0193a000-0000-7000-8000-000000000102', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000001',
     'einvoice-growth-annual', 'Growth (annual, setup fee waived)', 'annual', 'SAR', 50000, 299000, NULL,
     '[{"metric":"invoices_generated","quantity":12000}]', '[{"metric":"invoices_generated","unit_price":20}]',
     NULL, NULL, 'sa-vat-standard', 'active'),
    ('0193a000-0000-7000-8000-000000000103', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000001',
     'einvoice-sandbox', 'Sandbox (free)', 'monthly', 'SAR', NULL, 0, NULL,
     '[{"metric":"invoices_generated","quantity":100}]', '[]',
     NULL, NULL, NULL, 'active'),
    ('0193a000-0000-7000-8000-000000000104', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000001',
     'einvoice-pay-as-you-go', 'Pay as you go', 'usage_only', 'SAR', NULL, NULL, 10000,
     '[]', '[{"metric":"invoices_generated","unit_price":30}]',
     NULL, NULL, 'sa-vat-standard', 'active'),
    ('0193a000-0000-7000-8000-000000000105', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000001',
     'einvoice-business-monthly', 'Business (monthly, 14-day trial)', 'monthly', 'SAR', 100000, 99900, NULL,
     '[{"metric":"invoices_generated","quantity":10000}]', '[{"metric":"invoices_generated","unit_price":15}]',
     14, true, 'sa-vat-standard', 'active'),
    ('0193a000-0000-7000-8000-000000000106', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000001',
     'einvoice-starter-2024', 'Starter (2024, no longer offered)', 'monthly', 'SAR', NULL, 19900, NULL,
     '[{"metric":"invoices_generated","quantity":500}]', '[{"metric":"invoices_generated","unit_price":30}]',
     NULL, NULL, 'sa-vat-standard', 'deprecated'),
    -- address
    ('0193a000-0000-7000-8000-000000000201', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000002',
     'address-preview', 'Technical preview (free)', 'monthly', 'SAR', NULL, 0, NULL,
     '[{"metric":"short_addresses_resolved","quantity":1000}]', '[]',
     NULL, NULL, NULL, 'active'),
    ('0193a000-0000-7000-8000-000000000202', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000002',
     'address-standard-monthly', 'Standard (monthly, 30-day trial)', 'monthly', 'SAR', NULL, 14900, NULL,
     '[{"metric":"short_addresses_resolved","quantity":5000}]', '[{"metric":"short_addresses_resolved","unit_price":4}]',
     30, false, 'sa-vat-standard', 'active'),
    ('0193a000-0000-7000-8000-000000000203', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000002',
     'address-early-access', 'Early access (retired)', 'monthly', 'SAR', NULL, 9900, NULL,
     '[{"metric":"short_addresses_resolved","quantity":2000}]', '[]',
     NULL, NULL, 'sa-vat-standard', 'retired'),
    -- platform
    ('0193a000-0000-7000-8000-000000000301', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000003',
     'platform-developer', 'Developer (free)', 'monthly', 'SAR', NULL, 0, NULL,
     '[{"metric":"api_requests","quantity":100000},{"metric":"webhook_deliveries","quantity":10000}]', '[]',
     NULL, NULL, NULL, 'active'),
    ('0193a000-0000-7000-8000-000000000302', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000003',
     'platform-business-monthly', 'Business (monthly)', 'monthly', 'SAR', NULL, 49900, NULL,
     '[{"metric":"api_requests","quantity":5000000},{"metric":"webhook_deliveries","quantity":250000}]',
     '[{"metric":"webhook_deliveries","unit_price":1}]',
     NULL, NULL, 'sa-vat-standard', 'active'),
    ('0193a000-0000-7000-8000-000000000303', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000003',
     'platform-enterprise-annual', 'Enterprise (annual)', 'annual', 'SAR', 250000, 4990000, 4990000,
     '[{"metric":"api_requests","quantity":100000000},{"metric":"webhook_deliveries","quantity":5000000}]',
     '[{"metric":"webhook_deliveries","unit_price":1}]',
     NULL, NULL, 'sa-vat-standard', 'active'),
    ('0193a000-0000-7000-8000-000000000304', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000003',
     'platform-onboarding-package', 'Guided onboarding (one-time)', 'one_time', 'SAR', 150000, NULL, NULL,
     '[]', '[]',
     NULL, NULL, 'sa-vat-standard', 'active')
ON CONFLICT (id) DO NOTHING;

INSERT INTO prices (id, created_at, updated_at, plan_id, component_type, metric, currency, tax_treatment,
    amount, unit_amount, tiers, package_size, package_amount, status)
VALUES
    -- einvoice-growth-monthly
    ('0193a000-0000-7000-8000-000000001001', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000101',
     'recurring_fee', NULL, 'SAR', 'tax_exclusive', 29900, NULL, NULL, NULL, NULL, 'active'),
    ('0193a000-0000-7000-8000-000000001002', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000101',
     'graduated_usage', 'invoices_generated', 'SAR', 'tax_exclusive', NULL, NULL,
     '[{"upper_bound":1000,"unit_amount":0,"flat_amount":null},{"upper_bound":null,"unit_amount":25,"flat_amount":null}]',
     NULL, NULL, 'active'),
    ('0193a000-0000-7000-8000-000000001003', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000101',
     'setup_fee', NULL, 'SAR', 'tax_exclusive', 50000, NULL, NULL, NULL, NULL, 'active'),
    -- einvoice-growth-annual: the setup fee is waived by a discount of the same amount
    ('0193a000-0000-7000-8000-000000001004', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000102',
     'recurring_fee', NULL, 'SAR', 'tax_exclusive', 299000, NULL, NULL, NULL, NULL, 'active'),
    ('0193a000-0000-7000-8000-000000001005', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000102',
     'setup_fee', NULL, 'SAR', 'tax_exclusive', 50000, NULL, NULL, NULL, NULL, 'active'),
    ('0193a000-0000-7000-8000-000000001006', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000102',
     'discount', NULL, 'SAR', 'tax_exclusive', -50000, NULL, NULL, NULL, NULL, 'active'),
    ('0193a000-0000-7000-8000-000000001007', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000102',
     'graduated_usage', 'invoices_generated', 'SAR', 'tax_exclusive', NULL, NULL,
     '[{"upper_bound":12000,"unit_amount":0,"flat_amount":null},{"upper_bound":null,"unit_amount":20,"flat_amount":null}]',
     NULL, NULL, 'active'),
    -- einvoice-sandbox
    ('0193a000-0000-7000-8000-000000001008', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000103',
     'recurring_fee', NULL, 'SAR', 'tax_exclusive', 0, NULL, NULL, NULL, NULL, 'active'),
    -- einvoice-pay-as-you-go
    ('0193a000-0000-7000-8000-000000001009', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000104',
     'per_unit', 'invoices_generated', 'SAR', 'tax_exclusive', NULL, 30, NULL, NULL, NULL, 'active'),
    ('0193a000-0000-7000-8000-000000001010', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000104',
     'minimum_spend', NULL, 'SAR', 'tax_exclusive', 10000, NULL, NULL, NULL, NULL, 'active'),
    -- einvoice-business-monthly
    ('0193a000-0000-7000-8000-000000001011', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000105',
     'recurring_fee', NULL, 'SAR', 'tax_exclusive', 99900, NULL, NULL, NULL, NULL, 'active'),
    ('0193a000-0000-7000-8000-000000001012', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000105',
     'setup_fee', NULL, 'SAR', 'tax_exclusive', 100000, NULL, NULL, NULL, NULL, 'active'),
    ('0193a000-0000-7000-8000-000000001013', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000105',
     'graduated_usage', 'invoices_generated', 'SAR', 'tax_exclusive', NULL, NULL,
     '[{"upper_bound":10000,"unit_amount":0,"flat_amount":null},{"upper_bound":50000,"unit_amount":15,"flat_amount":null},{"upper_bound":null,"unit_amount":10,"flat_amount":null}]',
     NULL, NULL, 'active'),
    -- einvoice-starter-2024
    ('0193a000-0000-7000-8000-000000001014', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000106',
     'recurring_fee', NULL, 'SAR', 'tax_exclusive', 19900, NULL, NULL, NULL, NULL, 'active'),
    -- address-preview
    ('0193a000-0000-7000-8000-000000002001', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000201',
     'recurring_fee', NULL, 'SAR', 'tax_exclusive', 0, NULL, NULL, NULL, NULL, 'active'),
    -- address-standard-monthly: usage beyond the included 5000 is sold in packages of 1000
    ('0193a000-0000-7000-8000-000000002002', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000202',
     'recurring_fee', NULL, 'SAR', 'tax_exclusive', 14900, NULL, NULL, NULL, NULL, 'active'),
    ('0193a000-0000-7000-8000-000000002003', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000202',
     'package_pricing', 'short_addresses_resolved', 'SAR', 'tax_exclusive', NULL, NULL, NULL, 1000, 4000, 'active'),
    -- address-early-access (retired)
    ('0193a000-0000-7000-8000-000000002004', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000203',
     'recurring_fee', NULL, 'SAR', 'tax_exclusive', 9900, NULL, NULL, NULL, NULL, 'inactive'),
    -- platform-developer
    ('0193a000-0000-7000-8000-000000003001', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000301',
     'recurring_fee', NULL, 'SAR', 'tax_exclusive', 0, NULL, NULL, NULL, NULL, 'active'),
    -- platform-business-monthly
    ('0193a000-0000-7000-8000-000000003002', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000302',
     'recurring_fee', NULL, 'SAR', 'tax_exclusive', 49900, NULL, NULL, NULL, NULL, 'active'),
    ('0193a000-0000-7000-8000-000000003003', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000302',
     'per_unit', 'webhook_deliveries', 'SAR', 'tax_exclusive', NULL, 1, NULL, NULL, NULL, 'active'),
    -- platform-enterprise-annual
    ('0193a000-0000-7000-8000-000000003004', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000303',
     'recurring_fee', NULL, 'SAR', 'tax_exclusive', 4990000, NULL, NULL, NULL, NULL, 'active'),
    ('0193a000-0000-7000-8000-000000003005', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000303',
     'setup_fee', NULL, 'SAR', 'tax_exclusive', 250000, NULL, NULL, NULL, NULL, 'active'),
    ('0193a000-0000-7000-8000-000000003006', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000303',
     'volume_usage', 'webhook_deliveries', 'SAR', 'tax_exclusive', NULL, NULL,
     '[{"upper_bound":5000000,"unit_amount":0,"flat_amount":null},{"upper_bound":null,"unit_amount":1,"flat_amount":null}]',
     NULL, NULL, 'active'),
    -- platform-onboarding-package
    ('0193a000-0000-7000-8000-000000003007', '2025-03-01T09:30:00Z', '2025-03-01T09:30:00Z', '0193a000-0000-7000-8000-000000000304',
     'setup_fee', NULL, 'SAR', 'tax_exclusive', 150000, NULL, NULL, NULL, NULL, 'active')
ON CONFLICT (id) DO NOTHING;

-- +goose Down
DELETE FROM prices WHERE id::text LIKE '0193a000-0000-7000-8000-%';
DELETE FROM plans WHERE id::text LIKE '0193a000-0000-7000-8000-%';
DELETE FROM products WHERE id::text LIKE '0193a000-0000-7000-8000-%';
