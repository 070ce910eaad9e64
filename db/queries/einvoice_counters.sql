-- name: EinvoiceCounterLock :one
-- Locks the counter of a seller's EGS unit and returns its next value with the hash of the
-- previous invoice. The seller is the organization itself (seller_id = organization_id) or one
-- of its connected businesses. The row stays locked until the transaction ends; the invoice's
-- insert (TaxInvoiceInsert) moves it on, so the counter is written once per invoice. No row:
-- the seller's first invoice on the unit (EinvoiceCounterStart). transaction_time is now(), the
-- created_at the invoice's row will take: its audit entry and event are written beside it.
SELECT (last_icv + 1)::bigint AS next_icv, last_invoice_hash, now()::timestamptz AS transaction_time FROM einvoice_counters
WHERE organization_id = @organization_id AND seller_id = @seller_id AND egs_unit_id = @egs_unit_id
FOR NO KEY UPDATE;

-- name: EinvoiceCounterStart :one
-- Starts the chain of a seller's EGS unit at its first invoice (ICV 1, PIH first_hash), which
-- the row returned is for; the inserted row is this transaction's until it ends. No row: another
-- transaction started the chain first, and EinvoiceCounterLock now finds it.
INSERT INTO einvoice_counters (organization_id, seller_id, egs_unit_id, last_icv, last_invoice_hash)
VALUES (@organization_id, @seller_id, @egs_unit_id, 1, @first_hash::text)
ON CONFLICT (organization_id, seller_id, egs_unit_id) DO NOTHING
RETURNING last_icv AS next_icv, last_invoice_hash, now()::timestamptz AS transaction_time;
