-- name: ProvisioningJobInsert :exec
INSERT INTO provisioning_jobs (id, organization_id, subscription_id, status)
VALUES (@id, @organization_id, @subscription_id, 'pending');

-- name: ProvisioningJobClaim :one
-- The next due job, locked for the claiming transaction; jobs other workers hold are skipped,
-- so any number of workers in any number of processes share the queue.
SELECT * FROM provisioning_jobs
WHERE status = 'pending' AND run_at <= now()
ORDER BY run_at, id
LIMIT 1
FOR UPDATE SKIP LOCKED;

-- name: ProvisioningJobComplete :exec
UPDATE provisioning_jobs
SET status = 'succeeded', attempts = attempts + 1, finished_at = now(), updated_at = now(), last_error = NULL
WHERE id = @id;

-- name: ProvisioningJobRetry :exec
-- Records a failed attempt: the job runs again after @backoff_seconds, or fails for good
-- after @max_attempts attempts.
UPDATE provisioning_jobs SET
    attempts    = attempts + 1,
    last_error  = @last_error,
    run_at      = now() + make_interval(secs => @backoff_seconds::float8),
    status      = CASE WHEN attempts + 1 >= @max_attempts::int THEN 'failed' ELSE 'pending' END,
    finished_at = CASE WHEN attempts + 1 >= @max_attempts::int THEN now() END,
    updated_at  = now()
WHERE id = @id AND status = 'pending';

-- name: ProvisioningJobCountPending :one
-- The depth of the queue, for the metrics (served by the partial index of pending jobs).
SELECT count(*) FROM provisioning_jobs WHERE status = 'pending';
