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
