-- +goose NO TRANSACTION
-- +goose Up
-- The counts of the quotas per organization (db/queries/quotas.sql) read only the rows they
-- count: keys not revoked (revoked keys accumulate for ever), connected businesses not closed
-- and support cases still open. Built without blocking writes; run again, the migration skips
-- what exists.
CREATE INDEX CONCURRENTLY IF NOT EXISTS api_keys_unrevoked
    ON api_keys (organization_id, connected_business_id) WHERE revoked_at IS NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS connected_businesses_not_closed
    ON connected_businesses (organization_id) WHERE lifecycle_status <> 'closed';
CREATE INDEX CONCURRENTLY IF NOT EXISTS support_cases_open
    ON support_cases (organization_id) WHERE status NOT IN ('resolved', 'closed');

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS support_cases_open;
DROP INDEX CONCURRENTLY IF EXISTS connected_businesses_not_closed;
DROP INDEX CONCURRENTLY IF EXISTS api_keys_unrevoked;
