-- +goose Up
-- Catalogue administration tells the organizations subscribed to a plan or product when it is
-- deprecated, retired or changed: these find them without reading every subscription.
CREATE INDEX subscriptions_live_plan ON subscriptions (plan_id, organization_id) WHERE service_status <> 'terminated';
CREATE INDEX subscriptions_live_product_any_organization ON subscriptions (product_id, organization_id)
    WHERE service_status <> 'terminated';

-- +goose Down
DROP INDEX subscriptions_live_product_any_organization;
DROP INDEX subscriptions_live_plan;
