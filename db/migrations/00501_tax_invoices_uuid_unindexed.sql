-- +goose Up
-- Every stored invoice maintained a unique index on (organization_id, uuid) that no query
-- reads: the invoice's UUID is made by the service (uuid.New, 122 random bits), never given
-- by a client, and documents are read by id. A random key also lands on a random leaf page of
-- the index at every insert. Issue 27 (the cost of a stored invoice): dropped.
ALTER TABLE tax_invoices DROP CONSTRAINT tax_invoices_organization_id_uuid_key;

-- +goose Down
ALTER TABLE tax_invoices ADD CONSTRAINT tax_invoices_organization_id_uuid_key UNIQUE (organization_id, uuid);
