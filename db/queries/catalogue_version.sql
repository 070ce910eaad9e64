-- name: CatalogueVersionGet :one
-- The catalogue's version: raised by every change to products, plans or prices.
SELECT version FROM catalogue_version;
