// Package db holds the SQL of the service: migrations (applied on start, embedded here) and
// the queries sqlc compiles into gen/dbq.
package db

import "embed"

// Migrations are the goose migrations in apply order.
//
//go:embed migrations/*.sql
var Migrations embed.FS
