package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/postgres"
)

// BenchmarkGrowthSummary times the summary over a million events spread over 30 days, as
// the operator sees them (every organization) and as one organization sees its own. Run it
// with `go test -run x -bench GrowthSummary ./internal/postgres/`; seeding takes a while.
func BenchmarkGrowthSummary(b *testing.B) {
	ctx := context.Background()
	db := openDB(b)
	const events = 1_000_000
	start := time.Now()
	org := seedGrowthEvents(b, db, events)
	b.Logf("seeded %d events in %v", events, time.Since(start).Round(time.Millisecond))

	svc := postgres.NewGrowthService(db)
	operator := core.WithPrincipal(ctx, &core.Principal{Kind: core.PrincipalOperator})
	for _, bc := range []struct {
		name   string
		filter core.GrowthSummaryFilter
	}{
		{"Provider", core.GrowthSummaryFilter{}},
		{"ProviderWithInternalTraffic", core.GrowthSummaryFilter{IncludeInternalTraffic: true}},
		{"Organization", core.GrowthSummaryFilter{OrganizationID: &org}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				sum, err := svc.GrowthSummary(operator, bc.filter)
				if err != nil {
					b.Fatal(err)
				}
				if sum.TotalEvents == 0 {
					b.Fatal("no events counted")
				}
			}
		})
	}
}

// seedGrowthEvents COPYs n synthetic events shaped like real traffic (page views dominate,
// each funnel step loses visitors, a tenth is internal traffic) and returns the busiest
// organization id.
func seedGrowthEvents(b *testing.B, db *postgres.DB, n int) string {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	funnelWeights := []int{400, 120, 60, 50, 45, 40, 35, 10, 8} // per core.GrowthFunnel
	var names []string
	for i, name := range core.GrowthFunnel {
		for range funnelWeights[i] {
			names = append(names, name)
		}
	}
	for _, name := range core.GrowthEventNames {
		for range 10 {
			names = append(names, name)
		}
	}
	traffic := []string{"public", "public", "public", "public", "public", "real_customer", "sandbox_customer", "sandbox_customer", "employee", "load_test"}
	products := []string{"einvoice", "address", "platform"}
	orgs := make([]string, 5_000)
	for i := range orgs {
		orgs[i] = uuid.NewString()
	}
	now := time.Now()
	rows := make([][]any, 0, n)
	for range n {
		var anon, product, source *string
		if rng.IntN(3) > 0 {
			a := fmt.Sprintf("visitor-%06d", rng.IntN(150_000))
			anon = &a
		}
		if rng.IntN(4) > 0 {
			product = &products[rng.IntN(len(products))]
		}
		if rng.IntN(2) == 0 {
			s := fmt.Sprintf("source-%02d", rng.IntN(60))
			source = &s
		}
		org := orgs[min(rng.IntN(len(orgs)), rng.IntN(len(orgs)))] // skewed: a few busy organizations
		rows = append(rows, []any{
			uuid.Must(uuid.NewV7()), org, now.Add(-time.Duration(rng.Int64N(int64(30 * 24 * time.Hour)))),
			names[rng.IntN(len(names))], traffic[rng.IntN(len(traffic))], anon, product, source, []byte(`{}`),
		})
	}
	ctx := context.Background()
	_, err := db.Pool.CopyFrom(ctx, pgx.Identifier{"growth_events"},
		[]string{"id", "organization_id", "occurred_at", "event_name", "traffic_type", "anonymous_id", "product", "source", "properties"},
		pgx.CopyFromRows(rows))
	if err != nil {
		b.Fatal(err)
	}
	// Visibility map and statistics, as autovacuum would leave them, for index-only scans.
	if _, err := db.Pool.Exec(ctx, "VACUUM ANALYZE growth_events"); err != nil {
		b.Fatal(err)
	}
	return orgs[0]
}
