-- +goose Up
-- One row per verified identity: what its onboarding provisioned. The unique identity makes
-- onboarding idempotent across retries and processes.
CREATE TABLE onboardings (
    id                uuid        PRIMARY KEY,
    organization_id   uuid        NOT NULL REFERENCES organizations (id),
    identity_issuer   text        NOT NULL,
    identity_subject  text        NOT NULL,
    email             text        NOT NULL,
    status            text        NOT NULL CHECK (status IN ('sandbox_ready', 'active', 'completed')),
    completed_steps   text[]      NOT NULL,
    subscription_id   uuid        NOT NULL REFERENCES subscriptions (id),
    resource_id       uuid        NOT NULL REFERENCES service_resources (id),
    api_key_id        uuid        NOT NULL REFERENCES api_keys (id),
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    UNIQUE (identity_issuer, identity_subject)
);

-- +goose Down
DROP TABLE onboardings;
