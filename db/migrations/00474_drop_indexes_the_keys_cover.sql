-- +goose NO TRANSACTION
-- +goose Up
-- Indexes that the new primary keys (organization_id, id) of 00471 serve as well: the same
-- columns, or their beginning (a btree reads backwards as fast, so (organization_id, id DESC)
-- too). Dropped without blocking; run again, the migration skips what is gone.
DROP INDEX CONCURRENTLY IF EXISTS api_keys_organization_id_id;
DROP INDEX CONCURRENTLY IF EXISTS billing_invoices_organization;
DROP INDEX CONCURRENTLY IF EXISTS billing_payments_organization;
DROP INDEX CONCURRENTLY IF EXISTS connected_businesses_organization_id_id;
DROP INDEX CONCURRENTLY IF EXISTS subscriptions_organization_id_id;
DROP INDEX CONCURRENTLY IF EXISTS tax_invoices_organization_id_id;
DROP INDEX CONCURRENTLY IF EXISTS webhook_endpoints_organization_id_id;
DROP INDEX CONCURRENTLY IF EXISTS billing_invoice_tax_documents_organization;
DROP INDEX CONCURRENTLY IF EXISTS service_resources_organization_id;

-- +goose Down
CREATE INDEX CONCURRENTLY IF NOT EXISTS service_resources_organization_id ON service_resources (organization_id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS billing_invoice_tax_documents_organization
    ON billing_invoice_tax_documents (organization_id, billing_invoice_id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_endpoints_organization_id_id ON webhook_endpoints (organization_id, id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS tax_invoices_organization_id_id ON tax_invoices (organization_id, id DESC);
CREATE INDEX CONCURRENTLY IF NOT EXISTS subscriptions_organization_id_id ON subscriptions (organization_id, id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS connected_businesses_organization_id_id ON connected_businesses (organization_id, id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS billing_payments_organization ON billing_payments (organization_id, id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS billing_invoices_organization ON billing_invoices (organization_id, id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS api_keys_organization_id_id ON api_keys (organization_id, id);
