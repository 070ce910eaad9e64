package postgres_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/postgres"
)

// TestGrowthSummaryRollups checks that the summary read from the rollups is the summary read
// from the events, provider-wide and for organizations (one never seen), for windows that
// start at every part of a day, with and without internal traffic, over events inserted in
// many statements, before migration 00560 (its backfill) and after it concurrently (COPY and
// the service), in random order (so most of them backdated behind their visitor's last
// sighting), and ones dated after their arrival that the window reaches.
func TestGrowthSummaryRollups(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn, db := openUpgradable(t)
	operator := core.WithPrincipal(ctx, &core.Principal{Kind: core.PrincipalOperator, Subject: "dev:operator"})
	now := time.Now()
	event := func(rng *rand.Rand, at time.Time) []any {
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
		org := fmt.Sprintf("org-%02d", rng.IntN(40))
		if rng.IntN(3) == 0 { // a busy organization, whose last sightings fill most hours (00590)
			org = "org-00"
		}
		return []any{uuid.Must(uuid.NewV7()), org, at,
			core.GrowthEventNames[rng.IntN(len(core.GrowthEventNames))], core.TrafficTypes[rng.IntN(len(core.TrafficTypes))],
			anon, product, source, []byte(`{}`)}
	}
	insert := func(rows [][]any) error {
		_, err := db.Pool.CopyFrom(ctx, pgx.Identifier{"growth_events"},
			[]string{"id", "organization_id", "occurred_at", "event_name", "traffic_type", "anonymous_id", "product", "source", "properties"},
			pgx.CopyFromRows(rows))
		return err
	}
	randomEvents := func(rng *rand.Rand) (rows [][]any) {
		for range 300 {
			rows = append(rows, event(rng, now.Add(-time.Duration(rng.Int64N(int64(40*24*time.Hour))))))
		}
		return rows
	}
	if err := postgres.MigrateDownTo(ctx, dsn, 559); err != nil {
		t.Fatal(err)
	}
	for i := range 3 { // 3 statements of 300 events over the last 40 days, for the backfill
		if err := insert(randomEvents(rand.New(rand.NewPCG(5, uint64(i))))); err != nil {
			t.Fatal(err)
		}
	}
	// Dated after their arrival: 00580 folds those due by then into the last sightings
	// (soon), and keeps the other pending (after the window).
	rng := rand.New(rand.NewPCG(3, 4))
	soon := time.Now().Add(100 * time.Millisecond)
	if err := insert([][]any{event(rng, soon), event(rng, soon), event(rng, soon), event(rng, now.Add(time.Hour))}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(soon))
	if err := postgres.Migrate(ctx, dsn, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	// Then 4 writers at once, each 5 statements.
	errs := make(chan error, 4)
	for w := range 4 {
		go func() {
			rng := rand.New(rand.NewPCG(3, uint64(w)))
			for range 5 {
				if err := insert(randomEvents(rng)); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// Dated after their arrival, but before the summaries: those of the first half second are
	// due before the service's inserts below (which fold them into the last sightings), those
	// dated three seconds on are due only after them (the summary looks them up): the inserts
	// have that long to finish, under -race on a loaded machine too (with one second, one
	// insert that ended late folded a pending sighting).
	arrival := time.Now()
	const pendingAfter = 3 * time.Second
	var folded, pending [][]any
	for range 50 {
		folded = append(folded, event(rng, arrival.Add(time.Duration(rng.Int64N(int64(time.Second/2))))))
		pending = append(pending, event(rng, arrival.Add(pendingAfter+time.Duration(rng.Int64N(int64(time.Second/2))))))
	}
	if err := insert(append(folded, pending...)); err != nil {
		t.Fatal(err)
	}
	if err := insert([][]any{event(rng, now.Add(time.Hour))}); err != nil { // after the window
		t.Fatal(err)
	}
	time.Sleep(time.Until(arrival.Add(time.Second / 2)))
	growth := postgres.NewGrowthService(db)
	for i := range 30 {
		e := core.GrowthEvent{
			EventName: "page_view", OrganizationID: fmt.Sprintf("org-%02d", i), AnonymousID: ptr(fmt.Sprintf("visitor-%04d", i)),
		}
		if i%3 == 0 { // backdated by the API's occurred_at
			e.OccurredAt = now.Add(-time.Duration(i) * 20 * time.Hour)
		}
		if err := growth.RecordGrowthEvent(operator, e); err != nil {
			t.Fatal(err)
		}
	}
	if time.Since(arrival) >= pendingAfter {
		t.Fatalf("the service's inserts ended %v after the pending sightings' arrival, later than they are dated", time.Since(arrival))
	}
	time.Sleep(time.Until(arrival.Add(pendingAfter + time.Second)))
	var due, later int
	if err := db.Pool.QueryRow(ctx, "SELECT count(*) FILTER (WHERE occurred_at <= now()), count(*) FILTER (WHERE occurred_at > now()) FROM growth_pending_sightings").Scan(&due, &later); err != nil {
		t.Fatal(err)
	}
	if due != len(pending) || later != 2 {
		t.Errorf("pending sightings: %d due and %d later, want %d and 2 (the others folded)", due, later, len(pending))
	}

	raw := postgres.NewGrowthService(db)
	raw.SummaryFromEvents()
	windows := []time.Duration{40 * time.Minute, 2*time.Hour + 17*time.Minute + 3*time.Second, 11*time.Hour + 59*time.Minute,
		13 * time.Hour, 23*time.Hour + 30*time.Minute, 36 * time.Hour, 3 * 24 * time.Hour, 20*24*time.Hour + 5*time.Hour,
		30 * 24 * time.Hour, 45 * 24 * time.Hour, -time.Hour}
	for range 4 {
		windows = append(windows, time.Duration(rng.Int64N(int64(41*24*time.Hour))))
	}
	sinces := []*time.Time{nil} // the default window
	for _, window := range windows {
		sinces = append(sinces, ptr(time.Now().Add(-window)))
	}
	// The hourly counts (00580) serve the first day's whole hours, to the hour nearest to
	// since: sinces on, just before and just after an hour and a half hour, in either half
	// of the day.
	hour := time.Now().Truncate(time.Hour)
	for _, at := range []time.Duration{-5 * time.Hour, -17 * time.Hour, -(9*24 + 20) * time.Hour} {
		for _, offset := range []time.Duration{0, -time.Microsecond, 30*time.Minute - time.Microsecond, 30 * time.Minute} {
			sinces = append(sinces, ptr(hour.Add(at+offset)))
		}
	}
	for _, org := range []*string{nil, ptr("org-00"), ptr("org-07"), ptr("org-99")} {
		for _, since := range sinces {
			for _, internal := range []bool{false, true} {
				f := core.GrowthSummaryFilter{IncludeInternalTraffic: internal, OrganizationID: org, Since: since}
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
					t.Errorf("organization %v, since %v, internal %v: from the rollups\n%+v\nfrom the events\n%+v", org, since, internal, got, want)
				} else if org == nil && since == nil && got.TotalEvents < 1_000 {
					t.Errorf("too few events counted to mean anything: %d", got.TotalEvents)
				}
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }
