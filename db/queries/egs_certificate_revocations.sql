-- name: EgsCertificateRevokedAtAnyOrganization :one
-- The sandbox CA's revocation list: when the EGS unit a certificate (DER) was issued to was
-- revoked, whichever organization's unit it is (a certificate's revocation is public, as the
-- authority's revocation list is). Nothing else of the unit is read. No row: not revoked.
SELECT revoked_at FROM egs_units
WHERE (compliance_certificate = @certificate OR production_certificate = @certificate) AND revoked_at IS NOT NULL
LIMIT 1;
