-- +goose Up
-- A logged body is up to 16 kB of text (core.RequestLogBodyLimit), and TOAST compresses every
-- value over 2 kB: an invoice's logged response (its XML in JSON) is compressed on every
-- generation. lz4 costs PostgreSQL less CPU than the default pglz for about the same space,
-- as measured for the tax documents' own bodies (00381, docs/performance.md). Set on the
-- partitioned table, it reaches every partition, and those created later (PARTITION OF)
-- inherit it. Bodies stored before keep their compression until rewritten; the previous
-- release reads and writes them alike.
ALTER TABLE request_log_bodies
    ALTER COLUMN request_body SET COMPRESSION lz4,
    ALTER COLUMN response_body SET COMPRESSION lz4;

-- +goose Down
ALTER TABLE request_log_bodies
    ALTER COLUMN request_body SET COMPRESSION default,
    ALTER COLUMN response_body SET COMPRESSION default;
