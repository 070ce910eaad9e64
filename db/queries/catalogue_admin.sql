-- Catalogue administration (the operator's changes to products, plans and prices). Every
-- statement here raises the catalogue version through the triggers of migration 00102, in the
-- transaction that runs it.

-- name: ProductInsert :one
INSERT INTO products (
    id, created_at, updated_at, code, name_ar, name_en, description, category, service_classification,
    regulatory_classification, availability, provisioning_workflow, termination_policy, required_documents,
    required_approvals, required_credentials, metering_metrics, billing_model
) VALUES (
    @id, @created_at, @created_at, @code, @name_ar, @name_en, @description, @category, @service_classification,
    @regulatory_classification, @availability, @provisioning_workflow, @termination_policy, @required_documents,
    @required_approvals, @required_credentials, @metering_metrics, @billing_model
)
RETURNING *;

-- name: ProductGetByIDForUpdate :one
SELECT * FROM products WHERE id = @id FOR UPDATE;

-- name: ProductUpdate :one
UPDATE products SET
    name_ar = @name_ar, name_en = @name_en, description = @description, availability = @availability,
    updated_at = @updated_at
WHERE id = @id
RETURNING *;

-- name: PlanInsert :one
INSERT INTO plans (
    id, created_at, updated_at, product_id, code, name, billing_period, currency, setup_fee, recurring_fee,
    minimum_commitment, included_usage, overage_rules, trial_days, trial_requires_payment_method,
    tax_policy_reference, status
) VALUES (
    @id, @created_at, @created_at, @product_id, @code, @name, @billing_period, @currency, @setup_fee, @recurring_fee,
    @minimum_commitment, @included_usage, @overage_rules, @trial_days, @trial_requires_payment_method,
    @tax_policy_reference, @status
)
RETURNING *;

-- name: PlanGetByIDForUpdate :one
SELECT * FROM plans WHERE id = @id FOR UPDATE;

-- name: PlanUpdate :one
UPDATE plans SET
    name = @name, billing_period = @billing_period, setup_fee = @setup_fee, recurring_fee = @recurring_fee,
    minimum_commitment = @minimum_commitment, included_usage = @included_usage, overage_rules = @overage_rules,
    trial_days = @trial_days, trial_requires_payment_method = @trial_requires_payment_method,
    tax_policy_reference = @tax_policy_reference, status = @status, updated_at = @updated_at
WHERE id = @id
RETURNING *;

-- name: PriceInsert :one
INSERT INTO prices (
    id, created_at, updated_at, plan_id, component_type, metric, currency, tax_treatment, amount, unit_amount,
    tiers, package_size, package_amount, status
) VALUES (
    @id, @created_at, @created_at, @plan_id, @component_type, @metric, @currency, @tax_treatment, @amount, @unit_amount,
    @tiers, @package_size, @package_amount, @status
)
RETURNING *;

-- name: PriceGetByIDForUpdate :one
-- A price of one plan: a price of another plan is not found.
SELECT * FROM prices WHERE plan_id = @plan_id AND id = @id FOR UPDATE;

-- name: PriceUpdate :one
UPDATE prices SET
    metric = @metric, tax_treatment = @tax_treatment, amount = @amount, unit_amount = @unit_amount, tiers = @tiers,
    package_size = @package_size, package_amount = @package_amount, status = @status, updated_at = @updated_at
WHERE id = @id
RETURNING *;

-- name: PriceDeactivateByPlan :exec
-- Retiring a plan makes every one of its prices inactive; those active until then still bill
-- the plan's subscriptions (retired_with_plan).
UPDATE prices SET status = 'inactive', retired_with_plan = true, updated_at = @updated_at
WHERE plan_id = @plan_id AND status <> 'inactive';

-- name: SubscriberOrganizationsOfPlanAnyOrganization :many
-- The organizations told about a change of a plan: those with a subscription on it that is
-- not terminated.
SELECT DISTINCT organization_id FROM subscriptions
WHERE plan_id = @plan_id AND service_status <> 'terminated'
ORDER BY organization_id;

-- name: SubscriberOrganizationsOfProductAnyOrganization :many
-- The organizations told about a change of a product: those with a subscription to it that
-- is not terminated.
SELECT DISTINCT organization_id FROM subscriptions
WHERE product_id = @product_id AND service_status <> 'terminated'
ORDER BY organization_id;
