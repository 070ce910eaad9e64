-- +goose Up
-- Funnel analytics events, append-only. organization_id is text (1..200) as the
-- specification gives it: the operator records pre-signup traffic under ids that name no
-- organization yet; an organization principal may only record events under its own id (the
-- service enforces it). Value sets are CHECK constraints like everywhere else.
CREATE TABLE growth_events (
    id                     uuid        PRIMARY KEY,
    organization_id        text        NOT NULL CHECK (char_length(organization_id) BETWEEN 1 AND 200),
    received_at            timestamptz NOT NULL DEFAULT now(),
    occurred_at            timestamptz NOT NULL,
    event_name             text        NOT NULL CHECK (event_name IN (
        'page_view', 'product_view', 'pricing_view', 'docs_view', 'tool_used', 'signup_clicked',
        'signup_started', 'email_verified', 'organization_created', 'product_selected',
        'sandbox_provisioned', 'credential_created', 'quickstart_opened', 'first_request',
        'first_success', 'webhook_created', 'plan_selected', 'payment_started',
        'subscription_active', 'production_requested', 'address_activated', 'experiment_exposed')),
    traffic_type           text        NOT NULL CHECK (traffic_type IN (
        'public', 'real_customer', 'sandbox_customer', 'employee', 'internal', 'synthetic',
        'automated_qa', 'load_test')),
    anonymous_id           text        CHECK (char_length(anonymous_id) BETWEEN 8 AND 200),
    product                text        CHECK (product IN ('einvoice', 'address', 'platform')),
    source                 text        CHECK (char_length(source) <= 200),
    medium                 text        CHECK (char_length(medium) <= 200),
    campaign               text        CHECK (char_length(campaign) <= 200),
    landing_page           text        CHECK (char_length(landing_page) <= 500),
    page_path              text        CHECK (char_length(page_path) <= 500),
    language               text        CHECK (language IN ('en', 'ar')),
    device_class           text        CHECK (device_class IN ('mobile', 'desktop', 'tablet', 'server')),
    use_case               text        CHECK (char_length(use_case) <= 200),
    developer_language     text        CHECK (char_length(developer_language) <= 100),
    experiment_id          text        CHECK (char_length(experiment_id) <= 120),
    experiment_variant     text        CHECK (char_length(experiment_variant) <= 80),
    elapsed_from_signup_ms bigint      CHECK (elapsed_from_signup_ms >= 0),
    properties             jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(properties) = 'object')
);

-- The summary reads a time window, every column it aggregates included, so both the
-- provider-wide and the per-organization summary are index-only scans (no heap visits) once
-- the table is vacuumed.
CREATE INDEX growth_events_summary ON growth_events (occurred_at)
    INCLUDE (traffic_type, event_name, organization_id, anonymous_id, product, source);
CREATE INDEX growth_events_organization_summary ON growth_events (organization_id, occurred_at)
    INCLUDE (traffic_type, event_name, anonymous_id, product, source);

-- +goose Down
DROP TABLE growth_events;
