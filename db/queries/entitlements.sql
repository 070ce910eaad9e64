-- name: OrganizationStanding :one
-- What entitlement decisions read (core.Standing): the organization's statuses and the
-- service status of its latest subscription to the product named by its code (null when it
-- has none: ''). Ids are UUIDv7: the latest is the live one when there is one, since another
-- can only be created once it has terminated.
SELECT o.lifecycle_status, o.verification_status, o.risk_status, COALESCE(latest.service_status, '')::text AS subscription_service_status
FROM organizations o
LEFT JOIN LATERAL (
    SELECT s.service_status
    FROM subscriptions s
    JOIN products p ON p.id = s.product_id
    WHERE s.organization_id = @organization_id AND p.code = @product_code
    ORDER BY s.id DESC
    LIMIT 1
) latest ON true
WHERE o.id = @organization_id;
