-- +goose Up
-- Dunning (issue 26; docs/design.md, "Dunning"). An invoice unpaid at its due_at makes its
-- subscription overdue; retries at due_at + 3, 5 and 7 days (core.DunningSchedule) charge the
-- payment method on file; the last failing retry writes the invoice off and suspends the
-- service. A full payment of the invoice at any point brings the subscription back.

-- The dunning of a subscription, internal (the API's subscription shows billing_status only):
-- the invoice it is about, how many retries have failed, and when its next step falls due
-- (null when none is: current, or written off).
ALTER TABLE subscriptions
    ADD COLUMN dunning_invoice_id uuid REFERENCES billing_invoices (id),
    ADD COLUMN dunning_retries    integer NOT NULL DEFAULT 0 CHECK (dunning_retries >= 0),
    ADD COLUMN dunning_next_at    timestamptz,
    ADD CONSTRAINT subscriptions_dunning_invoice CHECK ((billing_status = 'current') = (dunning_invoice_id IS NULL)),
    ADD CONSTRAINT subscriptions_dunning_next CHECK (dunning_next_at IS NULL OR billing_status IN ('overdue', 'in_dunning'));

-- A service suspended by a write-off is suspended by 'billing': only a payment resumes it.
ALTER TABLE subscriptions DROP CONSTRAINT subscriptions_suspended_by_check;
ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_suspended_by_check
    CHECK (suspended_by IN ('organization', 'connected_business', 'operator', 'billing'));

-- What the dunning steps look for: unpaid invoices by due date (the wall-clock scan) and by
-- subscription (a step's own check), subscriptions by next step.
CREATE INDEX billing_invoices_unpaid_due ON billing_invoices (due_at) WHERE status IN ('issued', 'partially_paid');
CREATE INDEX billing_invoices_unpaid_subscription ON billing_invoices (organization_id, subscription_id, due_at)
    WHERE status IN ('issued', 'partially_paid');
CREATE INDEX subscriptions_dunning_next_at ON subscriptions (dunning_next_at) WHERE dunning_next_at IS NOT NULL;

-- The billing steps of subscriptions (00270) gain the dunning steps: a current subscription
-- with an invoice unpaid (something still due) at its due_at becomes overdue then (one row per
-- such invoice, not an aggregate, so that "due by now" is a range on the invoices' due_at; the
-- first taken makes the subscription overdue and the others drop out), and a subscription in
-- dunning takes its next step at dunning_next_at. A terminated service is not dunned, and a
-- subscription written off does not renew (even cancelled and reactivated).
CREATE OR REPLACE VIEW subscription_billing_steps AS
SELECT s.organization_id, s.id, s.renews_at AS due_at
FROM subscriptions s
WHERE s.renews_at IS NOT NULL AND s.commercial_status IN ('active', 'past_due') AND s.service_status <> 'terminated'
  AND s.billing_status <> 'written_off'
  AND NOT EXISTS (SELECT 1 FROM billing_invoices i
                  WHERE i.organization_id = s.organization_id AND i.subscription_id = s.id
                    AND i.opens_selection AND i.status IN ('issued', 'partially_paid'))
UNION ALL
SELECT s.organization_id, s.id, s.service_ends_at
FROM subscriptions s
WHERE s.service_ends_at IS NOT NULL AND s.commercial_status = 'cancelled' AND s.service_status <> 'terminated'
UNION ALL
SELECT s.organization_id, s.id, i.due_at
FROM subscriptions s
JOIN billing_invoices i ON i.organization_id = s.organization_id AND i.subscription_id = s.id
WHERE s.billing_status = 'current' AND s.service_status <> 'terminated'
  AND i.status IN ('issued', 'partially_paid') AND i.due_at IS NOT NULL AND i.amount_paid < i.total
UNION ALL
SELECT s.organization_id, s.id, s.dunning_next_at
FROM subscriptions s
WHERE s.dunning_next_at IS NOT NULL AND s.service_status <> 'terminated';

-- +goose Down
CREATE OR REPLACE VIEW subscription_billing_steps AS
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
DROP INDEX subscriptions_dunning_next_at;
DROP INDEX billing_invoices_unpaid_subscription;
DROP INDEX billing_invoices_unpaid_due;
ALTER TABLE subscriptions DROP CONSTRAINT subscriptions_suspended_by_check;
ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_suspended_by_check
    CHECK (suspended_by IN ('organization', 'connected_business', 'operator'));
ALTER TABLE subscriptions
    DROP CONSTRAINT subscriptions_dunning_next,
    DROP CONSTRAINT subscriptions_dunning_invoice,
    DROP COLUMN dunning_next_at,
    DROP COLUMN dunning_retries,
    DROP COLUMN dunning_invoice_id;
