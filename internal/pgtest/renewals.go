package pgtest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
)

// AddressProduct is the seeded address product, whose usage (usage_events of product
// 'address') counts toward its one metric, short_addresses_resolved.
const AddressProduct = "0193a000-0000-7000-8000-000000000002"

// SeedDueRenewals makes, in the database of pool, n organizations (copies of organization
// template, named renewal-bench), each with one running monthly subscription of the address
// product on plan whose renewal fell due an hour ago, and 9 units of usage in the period that
// renewal closes: the renewal benchmarks' load, written by SQL in a few statements.
func SeedDueRenewals(tb testing.TB, pool *pgxpool.Pool, template, plan uuid.UUID, n int) {
	tb.Helper()
	ctx := context.Background()
	renewsAt := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	anchor := renewsAt.AddDate(0, -1, 0)
	for _, s := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO organizations SELECT (jsonb_populate_record(NULL::organizations,
			to_jsonb(o) || jsonb_build_object('id', gen_random_uuid(), 'display_name', 'renewal-bench'))).*
			FROM organizations o, generate_series(1, $2) WHERE o.id = $1`, []any{template, n}},
		{`INSERT INTO subscriptions (id, organization_id, product_id, plan_id, commercial_status, service_status, billing_status,
			started_at, billing_anchor_at, renews_at, provisioned_at)
			SELECT gen_random_uuid(), id, $1, $2, 'active', 'active', 'current', $3, $3, $4, $3
			FROM organizations WHERE display_name = 'renewal-bench'`, []any{AddressProduct, plan, anchor, renewsAt}},
		{`INSERT INTO usage_events (id, organization_id, product, occurred_at)
			SELECT overlay(gen_random_uuid()::text PLACING left(time_partition_bound(now())::text, 13) FROM 1)::uuid, o.id, 'address', $1::timestamptz + k * interval '1 hour'
			FROM organizations o, generate_series(1, 9) k WHERE display_name = 'renewal-bench'`, []any{anchor}},
		{`ANALYZE`, nil},
	} {
		if _, err := pool.Exec(ctx, s.sql, s.args...); err != nil {
			tb.Fatalf("%s: %v", s.sql, err)
		}
	}
}
