-- +goose Up
-- Support cases of an organization. product_id and resource_id are kept as sent (strings):
-- the service checks, before inserting, that they name a product of the catalogue and a
-- resource of the case's organization. diagnostics is a flat JSON object (the OpenAPI
-- document refuses nested values before they get here).
CREATE TABLE support_cases (
    id              uuid        PRIMARY KEY,
    organization_id uuid        NOT NULL REFERENCES organizations (id),
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    product_id      text        CHECK (product_id <> ''),
    resource_id     text        CHECK (resource_id <> ''),
    severity        text        NOT NULL CHECK (severity IN ('low', 'medium', 'high', 'critical')),
    category        text        NOT NULL CHECK (category IN ('billing', 'technical', 'account', 'provisioning', 'other')),
    status          text        NOT NULL CHECK (status IN ('open', 'in_progress', 'waiting_on_customer', 'resolved', 'closed')),
    assigned_team   text        CHECK (assigned_team IN ('support', 'billing', 'security', 'provider_ops', 'platform')),
    opened_at       timestamptz NOT NULL,
    resolved_at     timestamptz,
    subject         text        CHECK (char_length(subject) BETWEEN 1 AND 160),
    description     text        CHECK (char_length(description) BETWEEN 1 AND 8000),
    request_id      text        CHECK (char_length(request_id) BETWEEN 1 AND 200),
    environment     text        CHECK (char_length(environment) BETWEEN 1 AND 80),
    diagnostics     jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(diagnostics) = 'object'),
    -- A closed case has been resolved at some point.
    CHECK (status <> 'closed' OR resolved_at IS NOT NULL)
);

-- Lists are per organization in id order, optionally of one status.
CREATE INDEX support_cases_organization_id_id ON support_cases (organization_id, id);
CREATE INDEX support_cases_organization_id_status_id ON support_cases (organization_id, status, id);

-- +goose Down
DROP TABLE support_cases;
