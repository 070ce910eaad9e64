-- name: EinvoiceCounterNext :one
-- Takes the next counter value of a seller's EGS unit and returns it with the hash of the
-- previous invoice (first_hash for the first one). The seller is the organization itself
-- (seller_id = organization_id) or one of its connected businesses. The row stays locked
-- until the transaction ends.
INSERT INTO einvoice_counters (organization_id, seller_id, egs_unit_id, last_icv, last_invoice_hash)
VALUES (@organization_id, @seller_id, @egs_unit_id, 1, @first_hash::text)
ON CONFLICT (organization_id, seller_id, egs_unit_id)
DO UPDATE SET last_icv = einvoice_counters.last_icv + 1
RETURNING last_icv, last_invoice_hash;

-- name: EinvoiceCounterSetHash :exec
UPDATE einvoice_counters SET last_invoice_hash = @last_invoice_hash
WHERE organization_id = @organization_id AND seller_id = @seller_id AND egs_unit_id = @egs_unit_id;
