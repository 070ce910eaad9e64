-- +goose Up
-- The product catalogue: products, their plans and the price components of each plan. These
-- are global, reference-only tables (no organization_id): small, read-mostly, and replicated
-- to every node should the tenant tables ever be distributed by organization (DESIGN.md §11).
CREATE TABLE products (
    id                        uuid        PRIMARY KEY,
    created_at                timestamptz NOT NULL DEFAULT now(),
    updated_at                timestamptz NOT NULL DEFAULT now(),
    code                      text        NOT NULL UNIQUE CHECK (code <> ''),
    name_ar                   text        NOT NULL CHECK (name_ar <> ''),
    name_en                   text        NOT NULL CHECK (name_en <> ''),
    description               text        NOT NULL CHECK (description <> ''),
    category                  text        NOT NULL CHECK (category IN
        ('api_access', 'webhook_infrastructure', 'durable_job_execution', 'internal_provider_sandbox', 'other')),
    service_classification    text        NOT NULL CHECK (service_classification IN
        ('developer_platform', 'infrastructure', 'internal_tooling', 'support_service')),
    regulatory_classification text        NOT NULL CHECK (regulatory_classification IN
        ('ordinary_software', 'software_over_licensed_rail', 'regulated_pending_determination')),
    availability              text        NOT NULL CHECK (availability IN ('ga', 'beta', 'internal_only', 'deprecated')),
    provisioning_workflow     text        NOT NULL CHECK (provisioning_workflow <> ''),
    termination_policy        text        NOT NULL CHECK (termination_policy <> ''),
    required_documents        text[]      NOT NULL DEFAULT '{}' CHECK (array_position(required_documents, '') IS NULL),
    required_approvals        text[]      NOT NULL DEFAULT '{}' CHECK (array_position(required_approvals, '') IS NULL),
    required_credentials      text[]      NOT NULL DEFAULT '{}' CHECK (array_position(required_credentials, '') IS NULL),
    metering_metrics          text[]      NOT NULL DEFAULT '{}' CHECK (array_position(metering_metrics, '') IS NULL),
    billing_model             text        NOT NULL CHECK (billing_model IN ('subscription', 'usage_based', 'hybrid', 'free'))
);

-- A plan's trial is either absent (both trial columns null) or complete. included_usage and
-- overage_rules are JSON arrays of {metric, quantity} and {metric, unit_price}.
CREATE TABLE plans (
    id                            uuid        PRIMARY KEY,
    created_at                    timestamptz NOT NULL DEFAULT now(),
    updated_at                    timestamptz NOT NULL DEFAULT now(),
    product_id                    uuid        NOT NULL REFERENCES products (id),
    code                          text        NOT NULL UNIQUE CHECK (code <> ''),
    name                          text        NOT NULL CHECK (name <> ''),
    billing_period                text        NOT NULL CHECK (billing_period IN ('monthly', 'annual', 'usage_only', 'one_time')),
    currency                      text        NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    setup_fee                     bigint      CHECK (setup_fee >= 0),
    recurring_fee                 bigint      CHECK (recurring_fee >= 0),
    minimum_commitment            bigint      CHECK (minimum_commitment >= 0),
    included_usage                jsonb       NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(included_usage) = 'array'),
    overage_rules                 jsonb       NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(overage_rules) = 'array'),
    trial_days                    integer     CHECK (trial_days >= 0),
    trial_requires_payment_method boolean,
    tax_policy_reference          text        CHECK (tax_policy_reference <> ''),
    status                        text        NOT NULL CHECK (status IN ('draft', 'active', 'deprecated', 'retired')),
    CHECK ((trial_days IS NULL) = (trial_requires_payment_method IS NULL)),
    -- Lets subscriptions reference (plan, product) together, so a subscription can never hold
    -- a plan of another product.
    UNIQUE (id, product_id)
);

CREATE INDEX plans_product_id ON plans (product_id, id);

-- tiers is a JSON array of {upper_bound, unit_amount, flat_amount} for tiered, graduated and
-- volume components; null otherwise.
CREATE TABLE prices (
    id             uuid        PRIMARY KEY,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    plan_id        uuid        NOT NULL REFERENCES plans (id),
    component_type text        NOT NULL CHECK (component_type IN ('recurring_fee', 'setup_fee', 'tiered_usage',
        'graduated_usage', 'volume_usage', 'per_unit', 'package_pricing', 'credit', 'discount', 'minimum_spend')),
    metric         text        CHECK (metric <> ''),
    currency       text        NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    tax_treatment  text        NOT NULL CHECK (tax_treatment IN ('tax_exclusive', 'tax_inclusive')),
    amount         bigint,
    unit_amount    bigint      CHECK (unit_amount >= 0),
    tiers          jsonb       CHECK (jsonb_typeof(tiers) = 'array'),
    package_size   bigint      CHECK (package_size > 0),
    package_amount bigint      CHECK (package_amount >= 0),
    status         text        NOT NULL CHECK (status IN ('active', 'inactive'))
);

CREATE INDEX prices_plan_id ON prices (plan_id, id);

-- +goose Down
DROP TABLE prices;
DROP TABLE plans;
DROP TABLE products;
