-- name: RenewalBatchClaimAnyOrganization :many
-- Locks the batch's subscriptions that nobody else holds (BillingStepClaim's SKIP LOCKED, for
-- many) and answers, with each, its organization's billing time (its test clock's, or
-- @wall_clock) and whether the organization has a positive credit balance (such a renewal goes
-- the per-step way, which takes the balance under its lock).
SELECT sqlc.embed(s), coalesce(c.frozen_time, @wall_clock::timestamptz)::timestamptz AS billing_time,
       EXISTS (SELECT 1 FROM customer_credit_balances b WHERE b.organization_id = s.organization_id AND b.balance > 0) AS has_credit
FROM subscriptions s
JOIN (SELECT unnest(@organization_ids::uuid[]) AS organization_id, unnest(@ids::uuid[]) AS id) x
  ON s.organization_id = x.organization_id AND s.id = x.id
LEFT JOIN test_clocks c ON c.organization_id = s.organization_id
FOR UPDATE OF s SKIP LOCKED;

-- name: RenewalBatchDueAnyOrganization :many
-- Which of the locked subscriptions still have a billing step due at @now (BillingStepDue, for
-- many): checked once their rows are locked, so a step another process has just taken is not
-- taken twice. Each subscription is looked up on its own (LATERAL … LIMIT 1: the view's
-- branches by their keys), never by reading the whole view.
SELECT x.organization_id::uuid AS organization_id, x.id::uuid AS id
FROM (SELECT unnest(@organization_ids::uuid[]) AS organization_id, unnest(@ids::uuid[]) AS id) x
CROSS JOIN LATERAL (SELECT 1 FROM subscription_billing_steps b
                    WHERE b.organization_id = x.organization_id AND b.id = x.id AND b.due_at <= @now::timestamptz
                    LIMIT 1) due;

-- name: UsageCountsInPeriodsAnyOrganization :many
-- UsageCountInPeriod for many: the usage of each subscription's organization and product in
-- its period.
SELECT x.subscription_id::uuid AS subscription_id,
       (SELECT count(*) FROM usage_events u
        WHERE u.organization_id = x.organization_id AND u.product = x.product
          AND u.occurred_at >= x.from_time AND u.occurred_at < x.to_time)::bigint AS used
FROM (SELECT unnest(@subscription_ids::uuid[]) AS subscription_id, unnest(@organization_ids::uuid[]) AS organization_id,
             unnest(@products::text[]) AS product, unnest(@from_times::timestamptz[]) AS from_time,
             unnest(@to_times::timestamptz[]) AS to_time) AS x;

-- name: WebhookEndpointListEnabledAnyOrganization :many
-- The enabled endpoints of the batch's organizations and the events they receive: the batch
-- decides which receive each of its events as WebhookEventInsertListSubscribed does.
SELECT e.id, e.organization_id, e.enabled_events FROM webhook_endpoints e
WHERE e.organization_id = ANY (@organization_ids::uuid[]) AND e.status = 'enabled'
ORDER BY e.organization_id, e.id;

-- name: BillingInvoiceInsertManyAnyOrganization :many
-- BillingInvoiceInsert for many (each created_at and updated_at its issued_at).
INSERT INTO billing_invoices (
    id, created_at, updated_at, organization_id, subscription_id, plan_id, period_start, period_end, lines,
    subtotal, discount, tax, total, currency, status, tax_document_status, issued_at, due_at, opens_selection
)
SELECT x.id, x.issued_at, x.issued_at, x.organization_id, x.subscription_id, x.plan_id, x.period_start, x.period_end, x.lines,
       x.subtotal, x.discount, x.tax, x.total, x.currency, x.status, x.tax_document_status, x.issued_at, x.due_at, x.opens_selection
FROM (SELECT unnest(@ids::uuid[]) AS id, unnest(@organization_ids::uuid[]) AS organization_id, unnest(@subscription_ids::uuid[]) AS subscription_id, unnest(@plan_ids::uuid[]) AS plan_id, unnest(@period_starts::date[]) AS period_start, unnest(@period_ends::date[]) AS period_end, unnest(@lines::jsonb[]) AS lines, unnest(@subtotals::bigint[]) AS subtotal, unnest(@discounts::bigint[]) AS discount, unnest(@taxes::bigint[]) AS tax, unnest(@totals::bigint[]) AS total, unnest(@currencies::text[]) AS currency, unnest(@statuses::text[]) AS status, unnest(@tax_document_statuses::text[]) AS tax_document_status, unnest(@issued_ats::timestamptz[]) AS issued_at, unnest(@due_ats::timestamptz[]) AS due_at, unnest(@opens_selections::boolean[]) AS opens_selection) AS x
RETURNING *;

-- name: SubscriptionRenewalInsertManyAnyOrganization :exec
-- SubscriptionRenewalInsert for many; the primary key refuses a second renewal of one period
-- (and so the whole batch, which then goes the per-step way). The nil uuid is no invoice.
INSERT INTO subscription_renewals (organization_id, subscription_id, period_start, period_end, invoice_id, renewed_at)
SELECT unnest(@organization_ids::uuid[]), unnest(@subscription_ids::uuid[]), unnest(@period_starts::date[]),
       unnest(@period_ends::date[]), nullif(unnest(@invoice_ids::uuid[]), '00000000-0000-0000-0000-000000000000'),
       unnest(@renewed_ats::timestamptz[]);

-- name: SubscriptionRenewManyAnyOrganization :many
-- Stores what a renewal changes of each locked subscription: renews_at and updated_at
-- (SubscriptionUpdateState writes the same values for them and leaves the rest as they are).
UPDATE subscriptions s SET renews_at = x.renews_at, updated_at = x.updated_at
FROM (SELECT unnest(@organization_ids::uuid[]) AS organization_id, unnest(@ids::uuid[]) AS id, unnest(@renews_ats::timestamptz[]) AS renews_at, unnest(@updated_ats::timestamptz[]) AS updated_at) AS x
WHERE s.organization_id = x.organization_id AND s.id = x.id
RETURNING s.*;

-- name: AuditEventInsertManyAnyOrganization :exec
-- AuditEventInsert for many entries of one actor and request.
INSERT INTO audit_events (
    id, organization_id, actor_type, actor_id, actor_key_prefix, action, resource_type, resource_id, request_id, before, after
)
SELECT x.id, x.organization_id, @actor_type, sqlc.narg(actor_id), sqlc.narg(actor_key_prefix), x.action, x.resource_type,
       x.resource_id, sqlc.narg(request_id), x.before, x.after
FROM (SELECT unnest(@ids::uuid[]) AS id, unnest(@organization_ids::uuid[]) AS organization_id, unnest(@actions::text[]) AS action, unnest(@resource_types::text[]) AS resource_type, unnest(@resource_ids::text[]) AS resource_id, unnest(@befores::jsonb[]) AS before, unnest(@afters::jsonb[]) AS after) AS x;

-- name: WebhookEventInsertManyAnyOrganization :exec
-- WebhookEventInsert for many.
INSERT INTO webhook_events (id, organization_id, type, data)
SELECT unnest(@ids::uuid[]), unnest(@organization_ids::uuid[]), unnest(@types::text[]), unnest(@data::jsonb[]);

-- name: WebhookDeliveryInsertManyAnyOrganization :exec
-- WebhookDeliveryInsert for many.
INSERT INTO webhook_deliveries (id, organization_id, event_id, endpoint_id, status)
SELECT x.id, x.organization_id, x.event_id, x.endpoint_id, 'pending'
FROM (SELECT unnest(@ids::uuid[]) AS id, unnest(@organization_ids::uuid[]) AS organization_id, unnest(@event_ids::uuid[]) AS event_id, unnest(@endpoint_ids::uuid[]) AS endpoint_id) AS x;
