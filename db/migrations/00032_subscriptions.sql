-- +goose Up
-- Subscriptions of organizations to products. The CHECK constraints encode the invariants of
-- the state machine (DESIGN.md §7), so no interleaving of actions can store a state it forbids:
-- terminated is final and cancelled with its terminated_at, only a suspended service has a
-- suspended_at, and a cancelled subscription does not renew.
CREATE TABLE subscriptions (
    id                      uuid        PRIMARY KEY,
    created_at              timestamptz NOT NULL DEFAULT now(),
    updated_at              timestamptz NOT NULL DEFAULT now(),
    organization_id         uuid        NOT NULL REFERENCES organizations (id),
    product_id              uuid        NOT NULL REFERENCES products (id),
    plan_id                 uuid        NOT NULL,
    commercial_status       text        NOT NULL CHECK (commercial_status IN ('active', 'past_due', 'cancelled', 'paused')),
    service_status          text        NOT NULL CHECK (service_status IN
        ('provisioning', 'active', 'degraded', 'suspended', 'terminated')),
    billing_status          text        NOT NULL CHECK (billing_status IN ('current', 'overdue', 'in_dunning', 'written_off')),
    provisioning_request_id text        CHECK (provisioning_request_id <> ''),
    requested_configuration jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(requested_configuration) = 'object'),
    started_at              timestamptz NOT NULL,
    -- When the recurring cycle of the current plan began (after any trial); renewals fall on
    -- whole periods from it.
    billing_anchor_at       timestamptz NOT NULL,
    renews_at               timestamptz,
    suspended_at            timestamptz,
    terminated_at           timestamptz,
    FOREIGN KEY (plan_id, product_id) REFERENCES plans (id, product_id),
    CHECK ((service_status = 'terminated') = (terminated_at IS NOT NULL)),
    CHECK (service_status <> 'terminated' OR commercial_status = 'cancelled'),
    CHECK ((service_status = 'suspended') = (suspended_at IS NOT NULL)),
    CHECK (commercial_status <> 'cancelled' OR renews_at IS NULL)
);

CREATE INDEX subscriptions_organization_id_id ON subscriptions (organization_id, id);
-- One live subscription per organization and product: a second one would bill twice.
CREATE UNIQUE INDEX subscriptions_live_product ON subscriptions (organization_id, product_id)
    WHERE service_status <> 'terminated';

-- Durable provisioning work, claimed by workers with FOR UPDATE SKIP LOCKED. A job is
-- inserted in the transaction that creates its subscription and completed in the transaction
-- that provisions it, so a crash or restart at any point leaves it pending, never lost.
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

-- Billing invoices issued for subscriptions (plan selection issues the first one). lines
-- records how the subtotal and discount were made, [{component_type, description, amount}].
CREATE TABLE billing_invoices (
    id                  uuid        PRIMARY KEY,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    organization_id     uuid        NOT NULL REFERENCES organizations (id),
    subscription_id     uuid        NOT NULL REFERENCES subscriptions (id),
    plan_id             uuid        NOT NULL REFERENCES plans (id),
    period_start        date        NOT NULL,
    period_end          date        NOT NULL CHECK (period_end >= period_start),
    lines               jsonb       NOT NULL CHECK (jsonb_typeof(lines) = 'array'),
    subtotal            bigint      NOT NULL,
    discount            bigint      NOT NULL CHECK (discount >= 0),
    tax                 bigint      NOT NULL CHECK (tax >= 0),
    total               bigint      NOT NULL,
    currency            text        NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    status              text        NOT NULL CHECK (status IN ('draft', 'issued', 'paid', 'partially_paid', 'void', 'uncollectible')),
    tax_document_status text        NOT NULL CHECK (tax_document_status IN ('not_applicable', 'pending', 'issued', 'failed')),
    issued_at           timestamptz,
    due_at              timestamptz,
    paid_at             timestamptz,
    CHECK (total = subtotal - discount + tax)
);

CREATE INDEX billing_invoices_subscription ON billing_invoices (organization_id, subscription_id, id);

-- +goose Down
DROP TABLE billing_invoices;
DROP TABLE provisioning_jobs;
DROP TABLE subscriptions;
