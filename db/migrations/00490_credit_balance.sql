-- +goose Up
-- Issue 26 (billgaps): the customer credit balance of an organization, and when a plan change
-- split a period's usage between plans. Expand only: new tables and a nullable column, which
-- the previous release neither reads nor writes.

-- The credit balance of an organization in one currency: what proration and termination
-- credits left beyond the invoice that carried them, not yet taken off a later invoice. Its
-- row lock orders the changes of one balance; the amount never goes below zero.
CREATE TABLE customer_credit_balances (
    organization_id uuid        NOT NULL REFERENCES organizations (id),
    currency        text        NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    balance         bigint      NOT NULL CHECK (balance >= 0),
    updated_at      timestamptz NOT NULL,
    PRIMARY KEY (organization_id, currency)
);

-- The ledger of every change of a credit balance: credited (amount > 0) by the invoice whose
-- credits exceeded its charges, or applied (amount < 0) as a line of a later invoice, and given
-- back (amount > 0) when that invoice is voided.
-- balance_after is the balance once the entry is applied, so the ledger reads on its own.
CREATE TABLE customer_credit_transactions (
    id              uuid        NOT NULL,
    organization_id uuid        NOT NULL REFERENCES organizations (id),
    created_at      timestamptz NOT NULL,
    amount          bigint      NOT NULL CHECK (amount <> 0),
    currency        text        NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    balance_after   bigint      NOT NULL CHECK (balance_after >= 0),
    reason          text        NOT NULL CHECK (reason IN ('proration_credit', 'termination_credit', 'applied_to_invoice', 'void_restored')),
    invoice_id      uuid        NOT NULL,
    subscription_id uuid        NOT NULL,
    -- The key serves the ledger's keyset pages: an organization's entries in id (time) order.
    PRIMARY KEY (organization_id, id),
    FOREIGN KEY (organization_id, invoice_id) REFERENCES billing_invoices (organization_id, id),
    FOREIGN KEY (organization_id, subscription_id) REFERENCES subscriptions (organization_id, id)
);

-- When the current plan of a subscription began to rate its usage: its last change of plan
-- (the usage before it was rated at the plan it left, on the change's invoice). A renewal or
-- a last invoice rates the usage of its period from then, when that is later than the
-- period's start. NULL: the whole period is on the current plan (the previous release,
-- which does not write it, leaves it NULL: it rates the whole period, as it always did).
ALTER TABLE subscriptions ADD COLUMN usage_since timestamptz;

-- +goose Down
ALTER TABLE subscriptions DROP COLUMN usage_since;
DROP TABLE customer_credit_transactions;
DROP TABLE customer_credit_balances;
