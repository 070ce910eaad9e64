-- +goose Up
-- An organization has at most one onboarding (each verified login creates its own
-- organization). The index finds it by organization: the tenant's read, and the milestone
-- updates of its first successful operation and its plan selection.
CREATE UNIQUE INDEX onboardings_organization ON onboardings (organization_id);

-- +goose Down
DROP INDEX onboardings_organization;
