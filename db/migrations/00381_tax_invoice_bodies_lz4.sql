-- +goose Up
-- The bodies of tax documents (the XML, about 12 kB for two lines; the request and result
-- documents) are compressed by TOAST as they are stored. lz4 costs PostgreSQL less CPU per
-- stored document than the default pglz (BenchmarkTaxInvoiceStorage, docs/performance.md),
-- for about the same space. Values stored before keep their compression until rewritten.
-- Needs a PostgreSQL built with lz4 (--with-lz4), as the Debian and official images are.
ALTER TABLE tax_invoices
    ALTER COLUMN xml SET COMPRESSION lz4,
    ALTER COLUMN request SET COMPRESSION lz4,
    ALTER COLUMN result SET COMPRESSION lz4;
ALTER TABLE tax_invoice_submissions
    ALTER COLUMN cleared_xml SET COMPRESSION lz4,
    ALTER COLUMN results SET COMPRESSION lz4;

-- +goose Down
ALTER TABLE tax_invoices
    ALTER COLUMN xml SET COMPRESSION default,
    ALTER COLUMN request SET COMPRESSION default,
    ALTER COLUMN result SET COMPRESSION default;
ALTER TABLE tax_invoice_submissions
    ALTER COLUMN cleared_xml SET COMPRESSION default,
    ALTER COLUMN results SET COMPRESSION default;
