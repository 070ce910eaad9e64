package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/postgres"
)

// TestGrowthSummaryRollups checks that the provider-wide summary read from the rollups is
// the summary read from the events, for windows that do and do not start on an hour, with
// and without internal traffic, over events inserted in many statements (COPY and the
// service), backfilled ones, and ones dated after their arrival that the window reaches.
func TestGrowthSummaryRollups(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t)
	operator := core.WithPrincipal(ctx, &core.Principal{Kind: core.PrincipalOperator, Subject: "dev:operator"})
	rng := rand.New(rand.NewPCG(3, 4))
	now := time.Now()
	event := func(at time.Time) []any {
		var anon, product, source *string
		if rng.IntN(3) > 0 {
			a := fmt.Sprintf("visitor-%04d", rng.IntN(400))
			anon = &a
		}
		if rng.IntN(3) > 0 {
			product = &[]string{"einvoice", "address", "platform"}[rng.IntN(3)]
		}
		if rng.IntN(2) == 0 {
			s := fmt.Sprintf("source-%d", rng.IntN(8))
			source = &s
		}
		return []any{uuid.Must(uuid.NewV7()), fmt.Sprintf("org-%02d", rng.IntN(40)), at,
			core.GrowthEventNames[rng.IntN(len(core.GrowthEventNames))], core.TrafficTypes[rng.IntN(len(core.TrafficTypes))],
			anon, product, source, []byte(`{}`)}
	}
	insert := func(rows [][]any) {
		t.Helper()
		_, err := db.Pool.CopyFrom(ctx, pgx.Identifier{"growth_events"},
			[]string{"id", "organization_id", "occurred_at", "event_name", "traffic_type", "anonymous_id", "product", "source", "properties"},
			pgx.CopyFromRows(rows))
		if err != nil {
			t.Fatal(err)
		}
	}
	for range 20 { // 20 statements of 300 events over the last 40 days (10 backfilled)
		var rows [][]any
		for range 300 {
			rows = append(rows, event(now.Add(-time.Duration(rng.Int64N(int64(40*24*time.Hour))))))
		}
		insert(rows)
	}
	var soon [][]any // dated after their arrival, but before the summaries
	for range 50 {
		soon = append(soon, event(now.Add(time.Duration(rng.Int64N(int64(time.Second))))))
	}
	insert(soon)
	insert([][]any{event(now.Add(time.Hour))}) // after the window
	growth := postgres.NewGrowthService(db)
	for i := range 30 {
		if err := growth.RecordGrowthEvent(operator, core.GrowthEvent{
			EventName: "page_view", OrganizationID: fmt.Sprintf("org-%02d", i), AnonymousID: ptr(fmt.Sprintf("visitor-%04d", i)),
		}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Until(now.Add(time.Second)))

	raw := postgres.NewGrowthService(db)
	raw.SummaryFromEvents()
	for _, window := range []time.Duration{0, 40 * time.Minute, 2*time.Hour + 17*time.Minute + 3*time.Second, 3 * 24 * time.Hour, 30 * 24 * time.Hour, 45 * 24 * time.Hour, -time.Hour} {
		for _, internal := range []bool{false, true} {
			f := core.GrowthSummaryFilter{IncludeInternalTraffic: internal}
			if window != 0 {
				since := time.Now().Add(-window)
				f.Since = &since
			}
			want, err := raw.GrowthSummary(operator, f)
			if err != nil {
				t.Fatal(err)
			}
			got, err := growth.GrowthSummary(operator, f)
			if err != nil {
				t.Fatal(err)
			}
			got.Until, want.Until, got.Since, want.Since = time.Time{}, time.Time{}, time.Time{}, time.Time{}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("window %v, internal %v: from the rollups\n%+v\nfrom the events\n%+v", window, internal, got, want)
			} else if window == 30*24*time.Hour && got.TotalEvents < 1_000 {
				t.Errorf("too few events counted to mean anything: %d", got.TotalEvents)
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }
