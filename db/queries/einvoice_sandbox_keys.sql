-- name: EinvoiceSandboxKeyGet :one
SELECT * FROM einvoice_sandbox_keys WHERE organization_id = @organization_id;

-- name: EinvoiceSandboxKeyInsert :exec
INSERT INTO einvoice_sandbox_keys (organization_id, private_key, certificate)
VALUES (@organization_id, @private_key, @certificate)
ON CONFLICT (organization_id) DO NOTHING;
