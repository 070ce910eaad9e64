-- +goose Up
-- The request log keeps up to 16 kB of each body (core.RequestLogBodyLimit). A tax invoice's
-- response is mostly its XML, so every generated invoice stored 16 kB of it here again, and
-- TOAST compressed it with the default pglz: about 300 µs of PostgreSQL's CPU per request on
-- its own (docs/performance.md, "The cost of a tax invoice"). lz4 costs a fraction of that
-- for about the same space, as for tax_invoices' bodies (00381).
--
-- Setting it on the partitioned table covers the partitions created from now on (they take
-- the parent's compression); the existing ones are set one by one. Values stored before keep
-- their compression until rewritten. Needs a PostgreSQL built with lz4 (--with-lz4), as the
-- Debian and official images are.
-- +goose StatementBegin
DO $$
DECLARE
    part regclass;
BEGIN
    FOR part IN
        SELECT 'request_log_bodies'::regclass
        UNION ALL
        SELECT inhrelid::regclass FROM pg_inherits WHERE inhparent = 'request_log_bodies'::regclass
    LOOP
        EXECUTE format('ALTER TABLE %s ALTER COLUMN request_body SET COMPRESSION lz4, ALTER COLUMN response_body SET COMPRESSION lz4', part);
    END LOOP;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
DO $$
DECLARE
    part regclass;
BEGIN
    FOR part IN
        SELECT 'request_log_bodies'::regclass
        UNION ALL
        SELECT inhrelid::regclass FROM pg_inherits WHERE inhparent = 'request_log_bodies'::regclass
    LOOP
        EXECUTE format('ALTER TABLE %s ALTER COLUMN request_body SET COMPRESSION default, ALTER COLUMN response_body SET COMPRESSION default', part);
    END LOOP;
END
$$;
-- +goose StatementEnd
