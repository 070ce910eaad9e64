-- +goose NO TRANSACTION
-- +goose Up
-- listProductIncidents?status= reads the product's incidents of one status in id order
-- (ProductIncidentListByStatus) from this index alone, however many of the other status the
-- product has.
CREATE INDEX CONCURRENTLY IF NOT EXISTS product_incidents_product_id_status_id
    ON product_incidents (product_id, status, id);

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS product_incidents_product_id_status_id;
