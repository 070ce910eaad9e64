-- +goose Up
-- The sandbox CA's revocation list is looked up by certificate (the validator asks when the
-- unit a document's certificate was issued to was revoked): hash indexes on the DER bodies,
-- which are only ever compared for equality.
CREATE INDEX egs_units_compliance_certificate ON egs_units USING hash (compliance_certificate);
CREATE INDEX egs_units_production_certificate ON egs_units USING hash (production_certificate);

-- +goose Down
DROP INDEX egs_units_production_certificate;
DROP INDEX egs_units_compliance_certificate;
