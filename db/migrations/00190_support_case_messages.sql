-- +goose Up
-- The conversation of a support case (issue 23, "Support workflow"): messages written by the
-- case's organization (author 'customer') or by the operator (author 'provider'), never edited
-- or deleted. A message belongs to its case's organization: the foreign key names both columns,
-- so a message can never sit under a case of another organization, and a table distributed by
-- organization_id keeps it (docs/design.md, "Scale and tenancy").
CREATE UNIQUE INDEX support_cases_organization_id_id_key ON support_cases (organization_id, id);
DROP INDEX support_cases_organization_id_id; -- the unique index serves the lists it served
ALTER TABLE support_cases ADD CONSTRAINT support_cases_organization_id_id_key UNIQUE USING INDEX support_cases_organization_id_id_key;

CREATE TABLE support_case_messages (
    id              uuid        PRIMARY KEY,
    organization_id uuid        NOT NULL,
    support_case_id uuid        NOT NULL,
    author          text        NOT NULL CHECK (author IN ('customer', 'provider')),
    body            text        NOT NULL CHECK (char_length(body) BETWEEN 1 AND 8000),
    created_at      timestamptz NOT NULL,
    FOREIGN KEY (organization_id, support_case_id) REFERENCES support_cases (organization_id, id)
);

-- A case's messages are read oldest first in id (UUIDv7) order, a page at a time.
CREATE INDEX support_case_messages_case_id ON support_case_messages (organization_id, support_case_id, id);

-- +goose Down
DROP TABLE support_case_messages;
ALTER TABLE support_cases DROP CONSTRAINT support_cases_organization_id_id_key;
CREATE INDEX support_cases_organization_id_id ON support_cases (organization_id, id);
