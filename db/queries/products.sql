-- name: ProductList :many
-- A keyset page of products in id (creation) order, after the cursor id when one is given.
SELECT * FROM products
WHERE sqlc.narg('after')::uuid IS NULL OR id > sqlc.narg('after')::uuid
ORDER BY id
LIMIT @max_rows;

-- name: ProductGetByID :one
SELECT * FROM products WHERE id = @id;
