-- name: EinvoiceSandboxCAGet :one
SELECT * FROM einvoice_sandbox_ca WHERE singleton;

-- name: EinvoiceSandboxCAInsert :exec
INSERT INTO einvoice_sandbox_ca (private_key, certificate) VALUES (@private_key, @certificate)
ON CONFLICT (singleton) DO NOTHING;

-- name: EgsUnitInsert :one
INSERT INTO egs_units (organization_id, id, status, common_name, serial_number, vat_number, organization_unit_name,
    organization_name, country, invoice_types, location, industry, csr, private_key, compliance_certificate)
VALUES (@organization_id, @id, 'compliance', @common_name, @serial_number, @vat_number, @organization_unit_name,
    @organization_name, @country, @invoice_types, @location, @industry, @csr, @private_key, @compliance_certificate)
RETURNING *;

-- name: EgsUnitGet :one
SELECT * FROM egs_units WHERE organization_id = @organization_id AND id = @id;

-- name: EgsUnitGetForUpdate :one
SELECT * FROM egs_units WHERE organization_id = @organization_id AND id = @id FOR UPDATE;

-- name: EgsUnitList :many
SELECT * FROM egs_units WHERE organization_id = @organization_id ORDER BY id DESC LIMIT 1000;

-- name: EgsUnitCountActive :one
SELECT count(*) FROM egs_units WHERE organization_id = @organization_id AND status <> 'revoked';

-- name: EinvoiceStampingKeysGet :one
-- What an organization's documents are stamped with, in one read: whether it registered EGS
-- units (then it stamps with one of them, EgsUnitGet), and its sandbox key (null until its
-- first document, which creates it).
SELECT EXISTS (SELECT 1 FROM egs_units WHERE egs_units.organization_id = @organization_id)::boolean AS has_units,
       k.private_key, k.certificate
FROM (SELECT) AS one
LEFT JOIN einvoice_sandbox_keys k ON k.organization_id = @organization_id;

-- name: EgsUnitSetProduction :one
UPDATE egs_units SET status = 'production', production_certificate = @production_certificate, updated_at = now()
WHERE organization_id = @organization_id AND id = @id AND status = 'compliance'
RETURNING *;

-- name: EgsUnitRevoke :one
UPDATE egs_units SET status = 'revoked', revoked_at = now(), updated_at = now()
WHERE organization_id = @organization_id AND id = @id AND status <> 'revoked'
RETURNING *;

-- name: EgsUnitGeneratedKinds :many
-- The kinds of document generated with a unit: its compliance checks (generation issues only
-- valid documents).
SELECT DISTINCT requested_type FROM tax_invoices
WHERE organization_id = @organization_id AND egs_unit_id = @egs_unit_id
ORDER BY requested_type;
