-- name: OrganizationInsert :one
INSERT INTO organizations (
    id, legal_name_ar, legal_name_en, display_name, organization_type, country,
    commercial_registration_reference, vat_reference, national_address_reference,
    verification_status, risk_status, data_residency_policy, lifecycle_status
) VALUES (
    @id, @legal_name_ar, @legal_name_en, @display_name, @organization_type, @country,
    @commercial_registration_reference, @vat_reference, @national_address_reference,
    @verification_status, @risk_status, @data_residency_policy, @lifecycle_status
)
RETURNING *;

-- name: OrganizationGetByID :one
SELECT * FROM organizations WHERE id = @id;

-- name: OrganizationGetByIDForShare :one
-- The organization, its status held until the transaction ends: a change of its status
-- (FOR NO KEY UPDATE) waits for the transaction, and the transaction for a change under way,
-- whose outcome it then reads.
SELECT * FROM organizations WHERE id = @id FOR SHARE;
