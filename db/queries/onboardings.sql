-- name: OnboardingLockIdentity :exec
-- Serialises onboardings of one identity across processes: a second one waits, then finds
-- the first one's records.
SELECT pg_advisory_xact_lock(hashtextextended('onboarding:' || @identity::text, 0));

-- name: OnboardingGetByIdentity :one
SELECT * FROM onboardings WHERE identity_issuer = @identity_issuer AND identity_subject = @identity_subject;

-- name: OnboardingInsert :one
INSERT INTO onboardings (
    id, organization_id, identity_issuer, identity_subject, email, status, completed_steps,
    subscription_id, resource_id, api_key_id
) VALUES (
    @id, @organization_id, @identity_issuer, @identity_subject, @email, @status, @completed_steps,
    @subscription_id, @resource_id, @api_key_id
)
RETURNING *;

-- name: ServiceResourceGetByID :one
SELECT * FROM service_resources WHERE organization_id = @organization_id AND id = @id;

-- name: OnboardingGetByOrganization :one
SELECT * FROM onboardings WHERE organization_id = @organization_id;

-- name: OnboardingReach :one
-- Records milestones of the organization's onboarding: appends the steps not yet completed,
-- in the order given, and moves status to @status unless it is already further along in
-- @status_order. Nothing happens (no row) when every step is already completed or the
-- organization was not onboarded, so repeating a milestone costs one indexed lookup.
UPDATE onboardings SET
    status = CASE
        WHEN array_position(@status_order::text[], @status::text) > array_position(@status_order::text[], status) THEN @status::text
        ELSE status END,
    completed_steps = completed_steps || ARRAY(
        SELECT step FROM unnest(@steps::text[]) WITH ORDINALITY AS s (step, n)
        WHERE step <> ALL (completed_steps) ORDER BY n),
    updated_at = now()
WHERE organization_id = @organization_id AND NOT completed_steps @> @steps::text[]
RETURNING *;
