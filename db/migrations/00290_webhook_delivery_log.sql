-- +goose Up
-- What the consumer sees of its webhooks: the events it produced, the deliveries to each
-- endpoint with their attempts, and the means to send them again (resend, recover).

-- The first bytes (at most 1 KiB) of what the receiver answered, shown in the attempt log.
ALTER TABLE webhook_delivery_attempts
    ADD COLUMN response_body text CHECK (octet_length(response_body) <= 1024);

-- requeues counts the times a delivery was sent again by hand (resend, recover); its job
-- carries the count, so a job queued before the latest re-queue finds it changed and does
-- nothing. attempt_limit is the attempt after which it fails for good when it was re-queued
-- (null: the policy's schedule from its first attempt).
ALTER TABLE webhook_deliveries
    ADD COLUMN requeues      integer NOT NULL DEFAULT 0 CHECK (requeues >= 0),
    ADD COLUMN attempt_limit integer CHECK (attempt_limit >= 1);

-- An endpoint's deliveries, newest first (keyset pages), and those that did not succeed
-- (the outcome filters and recover).
DROP INDEX webhook_deliveries_endpoint_id;
CREATE INDEX webhook_deliveries_endpoint_id_id ON webhook_deliveries (endpoint_id, id);
CREATE INDEX webhook_deliveries_endpoint_unsucceeded ON webhook_deliveries (endpoint_id, id) WHERE status <> 'succeeded';

-- The events of an organization by type (the list's filter), and the oldest events (the
-- retention sweep).
CREATE INDEX webhook_events_organization_id_type_id ON webhook_events (organization_id, type, id);
CREATE INDEX webhook_events_created_at ON webhook_events (created_at);

-- +goose Down
DROP INDEX webhook_events_created_at;
DROP INDEX webhook_events_organization_id_type_id;
DROP INDEX webhook_deliveries_endpoint_unsucceeded;
DROP INDEX webhook_deliveries_endpoint_id_id;
CREATE INDEX webhook_deliveries_endpoint_id ON webhook_deliveries (endpoint_id);
ALTER TABLE webhook_deliveries DROP COLUMN attempt_limit, DROP COLUMN requeues;
ALTER TABLE webhook_delivery_attempts DROP COLUMN response_body;
