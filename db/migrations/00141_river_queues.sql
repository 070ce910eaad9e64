-- +goose Up
-- The durable queues move to River (migration 00140 created its tables; internal/jobs runs
-- them). Work queued by the hand-made queues before this migration becomes River jobs, due
-- when it was due, so an upgrade loses none of it.

-- Pending provisioning: a job per subscription still provisioning, with the attempts it has
-- had (kind and arguments as internal/jobs.ProvisionArgs).
INSERT INTO river_job (state, attempt, max_attempts, scheduled_at, args, kind, queue)
SELECT CASE WHEN run_at <= now() THEN 'available' ELSE 'scheduled' END::river_job_state,
       attempts, 10, run_at,
       jsonb_build_object('organization_id', organization_id, 'subscription_id', subscription_id),
       'provision_subscription', 'provisioning'
FROM provisioning_jobs
WHERE status = 'pending';

-- The provisioning request id of a subscription (prov_<id>) stays on the subscription; nothing
-- reads the old queue any more.
DROP TABLE provisioning_jobs;

-- Pending webhook deliveries: an attempt job each, due at the delivery's next attempt (a
-- delivery whose attempt was in flight is attempted again once its lease ends, as before).
-- webhook_deliveries stays the record of each delivery and its attempts.
INSERT INTO river_job (state, max_attempts, scheduled_at, args, kind, queue)
SELECT CASE WHEN next_attempt_at <= now() THEN 'available' ELSE 'scheduled' END::river_job_state,
       25, next_attempt_at,
       jsonb_build_object('organization_id', organization_id, 'delivery_id', id),
       'deliver_webhook', 'webhooks'
FROM webhook_deliveries
WHERE status = 'pending';

-- Workers no longer look for due deliveries: River's jobs say when each is due.
DROP INDEX webhook_deliveries_due;

-- +goose Down
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id) WHERE status = 'pending';

CREATE TABLE provisioning_jobs (
    id              uuid        PRIMARY KEY,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    organization_id uuid        NOT NULL REFERENCES organizations (id),
    subscription_id uuid        NOT NULL REFERENCES subscriptions (id),
    status          text        NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts        integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    run_at          timestamptz NOT NULL DEFAULT now(),
    last_error      text,
    finished_at     timestamptz,
    CHECK ((status = 'pending') = (finished_at IS NULL))
);

CREATE INDEX provisioning_jobs_pending ON provisioning_jobs (run_at, id) WHERE status = 'pending';
CREATE INDEX provisioning_jobs_subscription_id ON provisioning_jobs (organization_id, subscription_id);

INSERT INTO provisioning_jobs (id, organization_id, subscription_id, status, attempts, run_at)
SELECT gen_random_uuid(), (args->>'organization_id')::uuid, (args->>'subscription_id')::uuid, 'pending', attempt, scheduled_at
FROM river_job
WHERE kind = 'provision_subscription' AND state IN ('available', 'scheduled', 'retryable', 'running');
