-- name: ProductList :many
-- A keyset page of products in id (creation) order, after the cursor id when one is given;
-- internal_only products only when include_internal (core.CatalogueAudience).
SELECT * FROM products
WHERE (sqlc.narg('after')::uuid IS NULL OR id > sqlc.narg('after')::uuid)
  AND (@include_internal::boolean OR availability <> 'internal_only')
ORDER BY id
LIMIT @max_rows;

-- name: ProductGetByID :one
SELECT * FROM products WHERE id = @id;
