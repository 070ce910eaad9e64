package postgres_test

import (
	"context"
	"log/slog"
	"maps"
	"testing"

	"github.com/provider/coreapi/internal/postgres"
)

// TestRetiredPricesMigration: migration 00630 marks the prices a retirement deactivated before
// it (the plan's retirement stamped them with its own updated_at) as still billing the
// plan's subscriptions, and leaves alone a price that was inactive before the plan retired.
func TestRetiredPricesMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn, d := openUpgradable(t)
	if err := postgres.MigrateDownTo(ctx, dsn, 620); err != nil {
		t.Fatal(err)
	}
	// The seeded address-standard plan: its package price made inactive first, then the plan
	// retired as the releases before 00630 did it.
	const plan = "0193a000-0000-7000-8000-000000000202"
	for _, stmt := range []string{
		`UPDATE prices SET status = 'inactive', updated_at = '2025-04-01T00:00:00Z' WHERE id = '0193a000-0000-7000-8000-000000002003'`,
		`UPDATE plans SET status = 'retired', updated_at = '2025-05-01T00:00:00Z' WHERE id = '` + plan + `'`,
		`UPDATE prices SET status = 'inactive', updated_at = '2025-05-01T00:00:00Z' WHERE plan_id = '` + plan + `' AND status <> 'inactive'`,
	} {
		if _, err := d.Pool.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	if err := postgres.Migrate(ctx, dsn, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	rows, err := d.Pool.Query(ctx, `SELECT id::text, status, retired_with_plan FROM prices WHERE plan_id = $1 ORDER BY id`, plan)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]bool{}
	for rows.Next() {
		var id, status string
		var retired bool
		if err := rows.Scan(&id, &status, &retired); err != nil {
			t.Fatal(err)
		}
		if status != "inactive" {
			t.Errorf("price %s: %s after the plan retired", id, status)
		}
		got[id] = retired
	}
	want := map[string]bool{"0193a000-0000-7000-8000-000000002002": true, "0193a000-0000-7000-8000-000000002003": false}
	if !maps.Equal(got, want) {
		t.Errorf("retired_with_plan %v, want %v", got, want)
	}
}
