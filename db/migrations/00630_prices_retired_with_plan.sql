-- +goose Up
-- Retiring a plan makes its prices inactive (nothing new is sold at them), but the
-- subscriptions still on the plan keep being billed by them: a subscription never sees its
-- plan's terms change (docs/design.md, "Catalogue administration"). A price inactive before
-- its plan retired bills nobody, so the prices the retirement deactivated are marked.
ALTER TABLE prices ADD COLUMN retired_with_plan boolean NOT NULL DEFAULT false;

-- The plans retired so far: retirement deactivated their active prices in its own statement,
-- stamping them with the plan's updated_at (retired is final: nothing changes the plan after),
-- and left the prices inactive before untouched, with an earlier updated_at.
UPDATE prices SET retired_with_plan = true
FROM plans
WHERE prices.plan_id = plans.id AND plans.status = 'retired'
  AND prices.status = 'inactive' AND prices.updated_at = plans.updated_at;

-- +goose Down
ALTER TABLE prices DROP COLUMN retired_with_plan;
