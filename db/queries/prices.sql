-- name: PriceListByPlans :many
SELECT * FROM prices
WHERE plan_id = ANY(@plan_ids::uuid[])
ORDER BY plan_id, id;
