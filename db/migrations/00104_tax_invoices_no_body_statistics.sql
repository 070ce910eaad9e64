-- +goose Up
-- No planner statistics on the invoice's bodies (the request and result documents, the XML):
-- no query filters, joins or sorts on them, and gathering them was most of what ANALYZE of
-- this table cost, because it reads every sampled body. Autovacuum analyzes the table about
-- once a minute while invoices are generated: 940 ms each time on a copy with 104 000
-- invoices, 215 ms without these columns (docs/performance.md 11.).
ALTER TABLE tax_invoices
    ALTER COLUMN request SET STATISTICS 0,
    ALTER COLUMN result SET STATISTICS 0,
    ALTER COLUMN xml SET STATISTICS 0;

-- +goose Down
ALTER TABLE tax_invoices
    ALTER COLUMN request SET STATISTICS -1,
    ALTER COLUMN result SET STATISTICS -1,
    ALTER COLUMN xml SET STATISTICS -1;
