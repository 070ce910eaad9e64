-- name: PlanList :many
-- Every plan, or the plans of one product, that an audience sees (core.CatalogueAudience):
-- plans of internal_only products only when include_internal, drafts only when include_drafts.
SELECT plans.* FROM plans JOIN products ON products.id = plans.product_id
WHERE (sqlc.narg('product_id')::uuid IS NULL OR plans.product_id = sqlc.narg('product_id')::uuid)
  AND (@include_internal::boolean OR products.availability <> 'internal_only')
  AND (@include_drafts::boolean OR plans.status <> 'draft')
ORDER BY plans.id;

-- name: PlanGetByID :one
SELECT * FROM plans WHERE id = @id;
