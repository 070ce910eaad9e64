-- name: OrganizationGetByIDForUpdate :one
-- The organization is the tenant itself: the caller passes its own organization's id (the
-- operator any), so another organization's row is never read or locked. NO KEY UPDATE (the id
-- never changes) leaves the foreign-key checks of rows that refer to the organization free:
-- a renewal holding a subscription and inserting its invoice would otherwise wait for this
-- lock while a termination holding it waits for that subscription (terminateSubscriptionsOf),
-- a deadlock.
SELECT * FROM organizations WHERE id = @id FOR NO KEY UPDATE;

-- name: OrganizationUpdate :one
UPDATE organizations
SET legal_name_ar = @legal_name_ar, legal_name_en = @legal_name_en, display_name = @display_name,
    commercial_registration_reference = @commercial_registration_reference, vat_reference = @vat_reference,
    national_address_reference = @national_address_reference, verification_status = @verification_status,
    risk_status = @risk_status, data_residency_policy = @data_residency_policy, lifecycle_status = @lifecycle_status,
    updated_at = now()
WHERE id = @id
RETURNING *;
