-- name: PlanList :many
-- Every plan, or the plans of one product.
SELECT * FROM plans
WHERE sqlc.narg('product_id')::uuid IS NULL OR product_id = sqlc.narg('product_id')::uuid
ORDER BY id;

-- name: PlanGetByID :one
SELECT * FROM plans WHERE id = @id;
