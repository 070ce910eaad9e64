-- +goose Up
-- Validates the foreign keys 00471 made again NOT VALID: each reads its table under a lock that
-- lets writes through (SHARE UPDATE EXCLUSIVE), in a transaction of its own after 00471's.
-- +goose StatementBegin
DO $$
DECLARE
    fk record;
BEGIN
    FOR fk IN
        SELECT c.conrelid::regclass AS child, c.conname FROM pg_constraint c
        JOIN pg_namespace n ON n.oid = c.connamespace
        WHERE n.nspname = 'public' AND c.contype = 'f' AND NOT c.convalidated
    LOOP
        EXECUTE format('ALTER TABLE %s VALIDATE CONSTRAINT %I', fk.child, fk.conname);
    END LOOP;
END $$;
-- +goose StatementEnd

-- +goose Down
-- Nothing to undo: a valid foreign key is what 00471's Down expects.
SELECT 1;
