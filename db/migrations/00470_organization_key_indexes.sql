-- +goose NO TRANSACTION
-- +goose Up
-- The indexes of the keys that carry organization_id (issue 29, distribution-ready schema),
-- built without blocking writes; 00471 then turns them into the tables' keys, which takes a
-- moment's lock and no build. Run again, the migration skips what exists.
--
-- (organization_id, id) becomes the primary key of each table below; (id) stays indexed, not
-- unique, for the reads by id alone: the operator's (…AnyOrganization), authentication's by key
-- id, and the workers'.
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS api_keys_organization_key ON api_keys (organization_id, id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS api_keys_id ON api_keys (id);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS billing_invoices_organization_key ON billing_invoices (organization_id, id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS billing_invoices_id ON billing_invoices (id);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS billing_payments_organization_key ON billing_payments (organization_id, id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS billing_payments_id ON billing_payments (id);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS connected_businesses_organization_key ON connected_businesses (organization_id, id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS connected_businesses_id ON connected_businesses (id);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS oauth_tokens_organization_key ON oauth_tokens (organization_id, id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS oauth_tokens_id ON oauth_tokens (id);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS onboardings_organization_key ON onboardings (organization_id, id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS onboardings_id ON onboardings (id);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS service_resources_organization_key ON service_resources (organization_id, id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS service_resources_id ON service_resources (id);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS spend_controls_organization_key ON spend_controls (organization_id, id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS spend_controls_id ON spend_controls (id);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS subscriptions_organization_key ON subscriptions (organization_id, id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS subscriptions_id ON subscriptions (id);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS support_case_messages_organization_key ON support_case_messages (organization_id, id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS support_case_messages_id ON support_case_messages (id);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS support_cases_organization_key ON support_cases (organization_id, id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS support_cases_id ON support_cases (id);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS tax_invoices_organization_key ON tax_invoices (organization_id, id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS tax_invoices_id ON tax_invoices (id);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS test_clocks_organization_key ON test_clocks (organization_id, id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS test_clocks_id ON test_clocks (id);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS webhook_endpoints_organization_key ON webhook_endpoints (organization_id, id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_endpoints_id ON webhook_endpoints (id);

-- The keys of the other tables gain organization_id in front.
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS billing_invoice_tax_documents_organization_key
    ON billing_invoice_tax_documents (organization_id, billing_invoice_id, purpose);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS billing_invoice_tax_documents_organization_tax_invoice
    ON billing_invoice_tax_documents (organization_id, tax_invoice_id);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS service_resources_organization_business_product
    ON service_resources (organization_id, connected_business_id, product);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS tax_invoice_submissions_organization_key
    ON tax_invoice_submissions (organization_id, tax_invoice_id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS tax_invoice_submissions_tax_invoice_id
    ON tax_invoice_submissions (tax_invoice_id);

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS tax_invoice_submissions_tax_invoice_id;
DROP INDEX CONCURRENTLY IF EXISTS tax_invoice_submissions_organization_key;
DROP INDEX CONCURRENTLY IF EXISTS service_resources_organization_business_product;
DROP INDEX CONCURRENTLY IF EXISTS billing_invoice_tax_documents_organization_tax_invoice;
DROP INDEX CONCURRENTLY IF EXISTS billing_invoice_tax_documents_organization_key;
DROP INDEX CONCURRENTLY IF EXISTS webhook_endpoints_id;
DROP INDEX CONCURRENTLY IF EXISTS webhook_endpoints_organization_key;
DROP INDEX CONCURRENTLY IF EXISTS test_clocks_id;
DROP INDEX CONCURRENTLY IF EXISTS test_clocks_organization_key;
DROP INDEX CONCURRENTLY IF EXISTS tax_invoices_id;
DROP INDEX CONCURRENTLY IF EXISTS tax_invoices_organization_key;
DROP INDEX CONCURRENTLY IF EXISTS support_cases_id;
DROP INDEX CONCURRENTLY IF EXISTS support_cases_organization_key;
DROP INDEX CONCURRENTLY IF EXISTS support_case_messages_id;
DROP INDEX CONCURRENTLY IF EXISTS support_case_messages_organization_key;
DROP INDEX CONCURRENTLY IF EXISTS subscriptions_id;
DROP INDEX CONCURRENTLY IF EXISTS subscriptions_organization_key;
DROP INDEX CONCURRENTLY IF EXISTS spend_controls_id;
DROP INDEX CONCURRENTLY IF EXISTS spend_controls_organization_key;
DROP INDEX CONCURRENTLY IF EXISTS service_resources_id;
DROP INDEX CONCURRENTLY IF EXISTS service_resources_organization_key;
DROP INDEX CONCURRENTLY IF EXISTS onboardings_id;
DROP INDEX CONCURRENTLY IF EXISTS onboardings_organization_key;
DROP INDEX CONCURRENTLY IF EXISTS oauth_tokens_id;
DROP INDEX CONCURRENTLY IF EXISTS oauth_tokens_organization_key;
DROP INDEX CONCURRENTLY IF EXISTS connected_businesses_id;
DROP INDEX CONCURRENTLY IF EXISTS connected_businesses_organization_key;
DROP INDEX CONCURRENTLY IF EXISTS billing_payments_id;
DROP INDEX CONCURRENTLY IF EXISTS billing_payments_organization_key;
DROP INDEX CONCURRENTLY IF EXISTS billing_invoices_id;
DROP INDEX CONCURRENTLY IF EXISTS billing_invoices_organization_key;
DROP INDEX CONCURRENTLY IF EXISTS api_keys_id;
DROP INDEX CONCURRENTLY IF EXISTS api_keys_organization_key;
