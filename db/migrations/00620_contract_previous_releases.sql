-- +goose Up
-- The contract step of migrations 00390 and 00460 (docs/operations.md, "Upgrades"). Each kept
-- something for the release before it, serving beside it during a rolling deploy; the
-- previous release is now v1.3.0, which needs none of it: it stores a provider-wide audit
-- event under the nil UUID, and records every delivery attempt, and queues every delivery
-- job, with its event.

-- 00390: v1.1.0 wrote a provider-wide audit event's organization as NULL. A NULL is now
-- refused by the column's NOT NULL, as any other.
DROP TRIGGER audit_events_provider_wide ON audit_events;
DROP FUNCTION audit_events_provider_wide();

-- 00460: v1.2.0 recorded attempts without their event, which the DEFAULT partition routed to
-- their event's day. An attempt of a day without a partition is refused as in every other
-- partitioned table, and creating a partition no longer checks the DEFAULT one.
DROP TABLE webhook_delivery_attempts_unrouted;
DROP FUNCTION webhook_delivery_attempts_route();

-- 00460: only v1.2.0's delete sweep read events by created_at; the sweep drops whole days.
-- One index fewer for every event stored.
DROP INDEX webhook_events_created_at;

-- The delivery jobs v1.2.0 queued without their event still waiting to run get it, so that
-- the worker always reads a delivery by its partition key. A job whose delivery is gone is
-- left as it is: its attempt finds nothing and does nothing, as before.
UPDATE river_job j
SET args = j.args || jsonb_build_object('event_id', d.event_id)
FROM webhook_deliveries d
WHERE j.kind = 'deliver_webhook' AND j.finalized_at IS NULL AND NOT (j.args ? 'event_id')
  AND d.organization_id = (j.args->>'organization_id')::uuid AND d.id = (j.args->>'delivery_id')::uuid;

-- +goose Down
CREATE INDEX webhook_events_created_at ON webhook_events (created_at);

CREATE TABLE webhook_delivery_attempts_unrouted PARTITION OF webhook_delivery_attempts DEFAULT;
-- +goose StatementBegin
CREATE FUNCTION webhook_delivery_attempts_route() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.event_id IS NOT NULL THEN -- an event whose day has no partition: refused, as without a DEFAULT
        RAISE EXCEPTION 'no partition of webhook_delivery_attempts for event %', NEW.event_id
            USING ERRCODE = 'check_violation';
    END IF;
    NEW.event_id := (SELECT d.event_id FROM webhook_deliveries d
                     WHERE d.organization_id = NEW.organization_id AND d.id = NEW.delivery_id);
    IF NEW.event_id IS NOT NULL THEN
        INSERT INTO webhook_delivery_attempts SELECT NEW.*;
    END IF;
    RETURN NULL; -- a delivery that is gone (its endpoint deleted) keeps no attempt
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER webhook_delivery_attempts_route BEFORE INSERT ON webhook_delivery_attempts_unrouted
    FOR EACH ROW EXECUTE FUNCTION webhook_delivery_attempts_route();

-- +goose StatementBegin
CREATE FUNCTION audit_events_provider_wide() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.organization_id := coalesce(NEW.organization_id, '00000000-0000-0000-0000-000000000000');
    RETURN NEW;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER audit_events_provider_wide BEFORE INSERT ON audit_events
    FOR EACH ROW WHEN (NEW.organization_id IS NULL) EXECUTE FUNCTION audit_events_provider_wide();
