-- +goose Up
-- Renewals and test clocks (issue 25; docs/design.md, "Renewals and test clocks").

-- When the service of a cancelled subscription ends: the end of the period already invoiced
-- (the renewal the cancellation withdrew). The renewal worker terminates it then; reactivate
-- restores the renewal. Internal: the API's subscription does not show it.
ALTER TABLE subscriptions ADD COLUMN service_ends_at timestamptz;
ALTER TABLE subscriptions
    ADD CONSTRAINT subscriptions_service_ends_cancelled CHECK (service_ends_at IS NULL OR commercial_status = 'cancelled');

-- What the renewal worker looks for: renewals that have arrived, services that have ended.
CREATE INDEX subscriptions_renews_at ON subscriptions (renews_at) WHERE renews_at IS NOT NULL;
CREATE INDEX subscriptions_service_ends_at ON subscriptions (service_ends_at)
    WHERE service_ends_at IS NOT NULL AND service_status <> 'terminated';

-- One row per renewal: the period it opened and the invoice it issued (null when nothing was
-- due, e.g. a free plan). The primary key is the guarantee of exactly one renewal, hence at
-- most one renewal invoice, per subscription and period, whatever the number of processes
-- and crashes: a second attempt fails on it and rolls back with its invoice.
CREATE TABLE subscription_renewals (
    organization_id uuid        NOT NULL REFERENCES organizations (id),
    subscription_id uuid        NOT NULL REFERENCES subscriptions (id),
    period_start    date        NOT NULL,
    period_end      date        NOT NULL CHECK (period_end >= period_start),
    invoice_id      uuid        REFERENCES billing_invoices (id),
    renewed_at      timestamptz NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (organization_id, subscription_id, period_start)
);

-- Test clocks: an organization on a clock is billed at the clock's frozen time, never the
-- wall clock's; one clock per organization.
CREATE TABLE test_clocks (
    id              uuid        PRIMARY KEY,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    organization_id uuid        NOT NULL REFERENCES organizations (id),
    frozen_time     timestamptz NOT NULL,
    CONSTRAINT test_clocks_organization UNIQUE (organization_id)
);

-- The billing steps of subscriptions, each at the time it falls due: the renewal of a live
-- subscription (not while the first invoice of its plan selection is open: the selection awaits
-- its first payment), and the end of the
-- service of a cancelled one. The renewal worker (wall clock) and a test clock's advance
-- (one organization) both read it, so they agree on what is due.
CREATE VIEW subscription_billing_steps AS
SELECT s.organization_id, s.id, s.renews_at AS due_at
FROM subscriptions s
WHERE s.renews_at IS NOT NULL AND s.commercial_status IN ('active', 'past_due') AND s.service_status <> 'terminated'
  AND NOT EXISTS (SELECT 1 FROM billing_invoices i
                  WHERE i.organization_id = s.organization_id AND i.subscription_id = s.id
                    AND i.opens_selection AND i.status IN ('issued', 'partially_paid'))
UNION ALL
SELECT s.organization_id, s.id, s.service_ends_at
FROM subscriptions s
WHERE s.service_ends_at IS NOT NULL AND s.commercial_status = 'cancelled' AND s.service_status <> 'terminated';

-- +goose Down
DROP VIEW subscription_billing_steps;
DROP TABLE test_clocks;
DROP TABLE subscription_renewals;
DROP INDEX subscriptions_service_ends_at;
DROP INDEX subscriptions_renews_at;
ALTER TABLE subscriptions
    DROP CONSTRAINT subscriptions_service_ends_cancelled,
    DROP COLUMN service_ends_at;
