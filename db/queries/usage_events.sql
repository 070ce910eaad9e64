-- name: UsageEventInsert :exec
INSERT INTO usage_events (id, organization_id, product) VALUES (@id, @organization_id, @product);
