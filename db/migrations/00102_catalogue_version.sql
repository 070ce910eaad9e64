-- +goose Up
-- A version of the catalogue, raised in the transaction of every change to products, plans or
-- prices, whoever makes it (the seed, a migration, psql). Readers cache what they built from
-- the catalogue under the version they read before reading it: an entry is served only while
-- the version is unchanged, so a cached answer is never older than the catalogue.
CREATE TABLE catalogue_version (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    version bigint NOT NULL
);
INSERT INTO catalogue_version (singleton, version) VALUES (true, 1);

-- +goose StatementBegin
CREATE FUNCTION catalogue_version_raise() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE catalogue_version SET version = version + 1;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER products_catalogue_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON products
    FOR EACH STATEMENT EXECUTE FUNCTION catalogue_version_raise();
CREATE TRIGGER plans_catalogue_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON plans
    FOR EACH STATEMENT EXECUTE FUNCTION catalogue_version_raise();
CREATE TRIGGER prices_catalogue_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON prices
    FOR EACH STATEMENT EXECUTE FUNCTION catalogue_version_raise();

-- +goose Down
DROP TRIGGER prices_catalogue_version ON prices;
DROP TRIGGER plans_catalogue_version ON plans;
DROP TRIGGER products_catalogue_version ON products;
DROP FUNCTION catalogue_version_raise();
DROP TABLE catalogue_version;
