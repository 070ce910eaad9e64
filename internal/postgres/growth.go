package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"math"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// Growth events are written by group commit: each request waits for its event to be
// stored, and whatever arrives while a COPY runs goes into the next one, so a burst costs a
// few large writes instead of one transaction per event.
const (
	growthEventQueue    = 4_096
	growthEventMaxBatch = 1_000
)

// GrowthService implements core.GrowthService.
type GrowthService struct {
	db *DB
	// rawSummary reads every summary from growth_events, as tests compare with the rollups.
	rawSummary bool
	now        func() time.Time
	batcher    *batcher[dbq.GrowthEventInsertBatchParams]
}

var _ core.GrowthService = (*GrowthService)(nil)

// NewGrowthService returns the growth service over d. Its writer lives as long as the
// process; events are acknowledged only once stored, so there is nothing to flush.
func NewGrowthService(d *DB) *GrowthService {
	return &GrowthService{
		db:  d,
		now: time.Now,
		batcher: newBatcher(growthEventQueue, growthEventMaxBatch, 0,
			func(ctx context.Context, rows []dbq.GrowthEventInsertBatchParams) error {
				_, err := dbq.New(d.Pool).GrowthEventInsertBatch(ctx, rows)
				return translate(err)
			}),
	}
}

// RecordGrowthEvent implements core.GrowthService.
func (s *GrowthService) RecordGrowthEvent(ctx context.Context, e core.GrowthEvent) error {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return err
	}
	if err := p.ActsForGrowth(e.OrganizationID, "/organization_id"); err != nil {
		return err
	}
	if err := storableText(map[string]*string{
		"/organization_id": &e.OrganizationID, "/anonymous_id": e.AnonymousID, "/source": e.Source,
		"/medium": e.Medium, "/campaign": e.Campaign, "/landing_page": e.LandingPage,
		"/page_path": e.PagePath, "/use_case": e.UseCase, "/developer_language": e.DeveloperLanguage,
		"/experiment_id": e.ExperimentID, "/experiment_variant": e.ExperimentVariant,
	}, map[string]json.RawMessage{"/properties": e.Properties}); err != nil {
		return err
	}
	row := dbq.GrowthEventInsertBatchParams{
		ID: uuid.Must(uuid.NewV7()), OrganizationID: e.OrganizationID, OccurredAt: e.OccurredAt,
		EventName: e.EventName, TrafficType: or(e.TrafficType, core.DefaultTrafficType),
		AnonymousID: e.AnonymousID, Product: e.Product, Source: e.Source, Medium: e.Medium,
		Campaign: e.Campaign, LandingPage: e.LandingPage, PagePath: e.PagePath,
		Language: e.Language, DeviceClass: e.DeviceClass, UseCase: e.UseCase,
		DeveloperLanguage: e.DeveloperLanguage, ExperimentID: e.ExperimentID,
		ExperimentVariant: e.ExperimentVariant, ElapsedFromSignupMs: e.ElapsedFromSignupMs,
		Properties: e.Properties,
	}
	if row.OccurredAt.IsZero() {
		row.OccurredAt = s.now()
	}
	if row.Properties == nil {
		row.Properties = json.RawMessage(`{}`)
	}
	if inTx(ctx) {
		// An idempotent request (or onboarding) stores the event with its own effects and
		// its idempotency record, so a retry can never count it twice.
		_, err := s.db.queries(ctx).GrowthEventInsertBatch(ctx, []dbq.GrowthEventInsertBatchParams{row})
		return translate(err)
	}
	return s.batcher.submit(ctx, row)
}

// GrowthSummary implements core.GrowthService.
func (s *GrowthService) GrowthSummary(ctx context.Context, f core.GrowthSummaryFilter) (*core.GrowthSummary, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	org := f.OrganizationID
	switch {
	case org != nil:
		if err := p.ActsForGrowth(*org, "organization_id"); err != nil {
			return nil, err
		}
	case !p.IsOperator():
		id := p.OrganizationID.String()
		org = &id
	}
	until := s.now().UTC()
	since := until.Add(-core.DefaultGrowthWindow)
	if f.Since != nil {
		since = f.Since.UTC()
	}
	var traffic []string
	for _, t := range core.TrafficTypes {
		if f.IncludeInternalTraffic || !core.InternalTrafficTypes[t] {
			traffic = append(traffic, t)
		}
	}
	sum := &core.GrowthSummary{Since: since, Until: until, IncludedTrafficTypes: traffic}
	w := summaryWindow{since: since, until: until, traffic: traffic, includeInternal: f.IncludeInternalTraffic, org: org}
	err = s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		if err := q.GrowthSummaryPlanSettings(ctx); err != nil {
			return err
		}
		read := summaryFromEvents
		if !s.rawSummary {
			read = summaryFromRollups
		}
		return read(ctx, q, w, sum)
	})
	if err != nil {
		return nil, err
	}
	return sum, nil
}

// summaryWindow is what a summary counts: events in [since, until] of the traffic types,
// of one organization or (nil) all.
type summaryWindow struct {
	since, until    time.Time
	traffic         []string
	includeInternal bool
	org             *string
}

// summaryFromEvents reads the summary from growth_events, whose per-organization index
// makes one organization's summary fast.
func summaryFromEvents(ctx context.Context, q *dbq.Queries, w summaryWindow, sum *core.GrowthSummary) error {
	if w.org == nil {
		return summaryFromAllEvents(ctx, q, w, sum)
	}
	org := *w.org
	counts, err := q.GrowthSummaryCounts(ctx, dbq.GrowthSummaryCountsParams{
		Since: w.since, Until: w.until, TrafficTypes: w.traffic, OrganizationID: org,
	})
	if err != nil {
		return err
	}
	uniques, err := q.GrowthSummaryUniques(ctx, dbq.GrowthSummaryUniquesParams{
		Since: w.since, Until: w.until, TrafficTypes: w.traffic, OrganizationID: org,
	})
	if err != nil {
		return err
	}
	funnel, err := q.GrowthSummaryFunnel(ctx, dbq.GrowthSummaryFunnelParams{
		Since: w.since, Until: w.until, TrafficTypes: w.traffic, FunnelEvents: core.GrowthFunnel, OrganizationID: org,
	})
	if err != nil {
		return err
	}
	sum.UniqueOrganizations, sum.UniqueAnonymousVisitors = uniques.Organizations, uniques.AnonymousVisitors
	fillCounts(sum, counts)
	fillFunnel(sum, funnel)
	return nil
}

// summaryFromAllEvents reads the provider-wide summary from growth_events.
func summaryFromAllEvents(ctx context.Context, q *dbq.Queries, w summaryWindow, sum *core.GrowthSummary) error {
	counts, err := allCounts(ctx, q, w.since, w.until, w.traffic)
	if err != nil {
		return err
	}
	uniques, err := q.GrowthSummaryUniquesAnyOrganization(ctx, dbq.GrowthSummaryUniquesAnyOrganizationParams{
		Since: w.since, Until: w.until, TrafficTypes: w.traffic,
	})
	if err != nil {
		return err
	}
	rows, err := q.GrowthSummaryFunnelAnyOrganization(ctx, dbq.GrowthSummaryFunnelAnyOrganizationParams{
		Since: w.since, Until: w.until, TrafficTypes: w.traffic, FunnelEvents: core.GrowthFunnel,
	})
	if err != nil {
		return err
	}
	funnel := make([]dbq.GrowthSummaryFunnelRow, len(rows))
	for i, r := range rows {
		funnel[i] = dbq.GrowthSummaryFunnelRow(r)
	}
	sum.UniqueOrganizations, sum.UniqueAnonymousVisitors = uniques.Organizations, uniques.AnonymousVisitors
	fillCounts(sum, counts)
	fillFunnel(sum, funnel)
	return nil
}

// summaryFromRollups reads the summary from the daily rollups of migration 00560, whose size
// follows days, keys, visitors and organizations rather than events: whole days of counts
// from the daily counts and the partial days at both ends from growth_events; distinct
// visitors, organizations and funnel actors from when each was last seen, which answers
// exactly because the window ends now.
func summaryFromRollups(ctx context.Context, q *dbq.Queries, w summaryWindow, sum *core.GrowthSummary) error {
	counts, err := rollupCounts(ctx, q, w)
	if err != nil {
		return err
	}
	l := sinceLevelsOf(w.since)
	var funnel []dbq.GrowthSummaryFunnelRow
	if w.org == nil {
		uniques, err := q.GrowthDailyUniquesAnyOrganization(ctx, dbq.GrowthDailyUniquesAnyOrganizationParams{
			Since: w.since, Until: w.until, TrafficTypes: w.traffic, IncludeInternal: w.includeInternal,
			DaysFrom: l.daysFrom, HoursFrom: l.hours.from, HoursTo: l.hours.to, HoursSign: l.hours.sign,
			SeenFrom: l.seen.from, SeenTo: l.seen.to, SeenSign: l.seen.sign,
		})
		if err != nil {
			return err
		}
		rows, err := q.GrowthDailyFunnelAnyOrganization(ctx, dbq.GrowthDailyFunnelAnyOrganizationParams{
			Since: w.since, Until: w.until, TrafficTypes: w.traffic, IncludeInternal: w.includeInternal, FunnelEvents: core.GrowthFunnel,
			DaysFrom: l.daysFrom, HoursFrom: l.hours.from, HoursTo: l.hours.to, HoursSign: l.hours.sign,
			SeenFrom: l.seen.from, SeenTo: l.seen.to, SeenSign: l.seen.sign,
		})
		if err != nil {
			return err
		}
		sum.UniqueOrganizations, sum.UniqueAnonymousVisitors = uniques.Organizations, uniques.AnonymousVisitors
		for _, r := range rows {
			funnel = append(funnel, dbq.GrowthSummaryFunnelRow(r))
		}
	} else {
		uniques, err := q.GrowthDailyUniques(ctx, dbq.GrowthDailyUniquesParams{
			OrganizationID: *w.org, Since: w.since, Until: w.until, TrafficTypes: w.traffic, IncludeInternal: w.includeInternal,
			DaysFrom: l.daysFrom, HoursFrom: l.hours.from, HoursTo: l.hours.to, HoursSign: l.hours.sign,
			SeenFrom: l.seen.from, SeenTo: l.seen.to, SeenSign: l.seen.sign,
		})
		if err != nil {
			return err
		}
		rows, err := q.GrowthDailyFunnel(ctx, dbq.GrowthDailyFunnelParams{
			OrganizationID: *w.org, Since: w.since, Until: w.until, TrafficTypes: w.traffic, IncludeInternal: w.includeInternal, FunnelEvents: core.GrowthFunnel,
			DaysFrom: l.daysFrom, HoursFrom: l.hours.from, HoursTo: l.hours.to, HoursSign: l.hours.sign,
			SeenFrom: l.seen.from, SeenTo: l.seen.to, SeenSign: l.seen.sign,
		})
		if err != nil {
			return err
		}
		sum.UniqueOrganizations, sum.UniqueAnonymousVisitors = uniques.Organizations, uniques.AnonymousVisitors
		for _, r := range rows {
			funnel = append(funnel, dbq.GrowthSummaryFunnelRow(r))
		}
	}
	fillCounts(sum, counts)
	fillFunnel(sum, funnel)
	return nil
}

// sinceLevels split the visitors and actors last seen since a time as spanCounts splits the
// events: those last seen from daysFrom, the day start nearest to since, counted by day (the
// *_days tables); those of the whole hours between it and the hour start nearest to since,
// counted by hour (the *_hours tables, migration 00590); and those between that hour start
// and since, counted one by one. Each correction is added or taken off by its sign: at most
// 12 hours and half an hour of last sightings, whatever the window.
type sinceLevels struct {
	daysFrom    time.Time
	hours, seen signedSpan
}

// signedSpan is a span whose last sightings a count adds (sign 1) or takes off (-1).
type signedSpan struct {
	summarySpan
	sign int64
}

func sinceLevelsOf(since time.Time) sinceLevels {
	daysFrom, hourFrom := day.round(since), hour.round(since)
	return sinceLevels{daysFrom: daysFrom, hours: moveStart(daysFrom, hourFrom), seen: moveStart(hourFrom, since)}
}

// moveStart turns a count of the last sightings from one time into the count from another:
// it takes off those in between when the start moves later, and adds them when earlier.
func moveStart(from, to time.Time) signedSpan {
	if to.Before(from) {
		return signedSpan{summarySpan{from: to, to: from}, 1}
	}
	return signedSpan{summarySpan{from: from, to: to}, -1}
}

// rollupCounts are the window's events per dimension: everything from since to the end of
// until's month (spanCounts), less the events after until (dated after their arrival, or
// stored since until was taken).
func rollupCounts(ctx context.Context, q *dbq.Queries, w summaryWindow) ([]dbq.GrowthSummaryCountsRow, error) {
	if w.since.After(w.until) {
		return nil, nil
	}
	end := month.next(month.floor(w.until))
	counts, err := spanCounts(ctx, q, w, summarySpan{from: w.since, to: end}, summaryLevels)
	if err != nil {
		return nil, err
	}
	after, err := rawCounts(ctx, q, w, summarySpan{from: w.until.Add(time.Microsecond), to: end})
	return mergeCounts(append(counts, signed(after, -1)...)), err
}

// summarySpan is the half-open interval [from, to).
type summarySpan struct{ from, to time.Time }

// summaryLevel is a rollup of growth_events' counts by UTC month, day or hour: the start of
// the unit at or before a time, the start of the next one, and the counts of whole units.
type summaryLevel struct {
	floor, next func(time.Time) time.Time
	counts      func(ctx context.Context, q *dbq.Queries, w summaryWindow, from, to time.Time) ([]dbq.GrowthDailyCountsRow, error)
}

// round is the start of the unit nearest to t.
func (l summaryLevel) round(t time.Time) time.Time {
	floor := l.floor(t)
	if next := l.next(floor); next.Sub(t) < t.Sub(floor) {
		return next
	}
	return floor
}

// The levels of the rollups, coarsest first (migrations 00560 and 00580).
var (
	month = summaryLevel{
		floor: func(t time.Time) time.Time {
			t = t.UTC()
			return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
		},
		next: func(t time.Time) time.Time { return t.AddDate(0, 1, 0) },
		counts: func(ctx context.Context, q *dbq.Queries, w summaryWindow, from, to time.Time) ([]dbq.GrowthDailyCountsRow, error) {
			if w.org == nil {
				rows, err := q.GrowthMonthlyCountsAnyOrganization(ctx, dbq.GrowthMonthlyCountsAnyOrganizationParams{FromMonth: from, ToMonth: to, IncludeInternal: w.includeInternal})
				return convertRows(rows, func(r dbq.GrowthMonthlyCountsAnyOrganizationRow) dbq.GrowthDailyCountsRow {
					return dbq.GrowthDailyCountsRow(r)
				}), err
			}
			rows, err := q.GrowthMonthlyCounts(ctx, dbq.GrowthMonthlyCountsParams{OrganizationID: *w.org, FromMonth: from, ToMonth: to, IncludeInternal: w.includeInternal})
			return convertRows(rows, func(r dbq.GrowthMonthlyCountsRow) dbq.GrowthDailyCountsRow { return dbq.GrowthDailyCountsRow(r) }), err
		},
	}
	day = summaryLevel{
		floor: func(t time.Time) time.Time { return t.Truncate(24 * time.Hour) }, // from the zero time, a UTC midnight (as growth_day)
		next:  func(t time.Time) time.Time { return t.Add(24 * time.Hour) },
		counts: func(ctx context.Context, q *dbq.Queries, w summaryWindow, from, to time.Time) ([]dbq.GrowthDailyCountsRow, error) {
			last := to.Add(-24 * time.Hour) // the daily queries' last day is inclusive
			if w.org == nil {
				rows, err := q.GrowthDailyCountsAnyOrganization(ctx, dbq.GrowthDailyCountsAnyOrganizationParams{FromDay: from, ToDay: last, IncludeInternal: w.includeInternal})
				return convertRows(rows, func(r dbq.GrowthDailyCountsAnyOrganizationRow) dbq.GrowthDailyCountsRow {
					return dbq.GrowthDailyCountsRow(r)
				}), err
			}
			return q.GrowthDailyCounts(ctx, dbq.GrowthDailyCountsParams{OrganizationID: *w.org, FromDay: from, ToDay: last, IncludeInternal: w.includeInternal})
		},
	}
	hour = summaryLevel{
		floor: func(t time.Time) time.Time { return t.Truncate(time.Hour) },
		next:  func(t time.Time) time.Time { return t.Add(time.Hour) },
		counts: func(ctx context.Context, q *dbq.Queries, w summaryWindow, from, to time.Time) ([]dbq.GrowthDailyCountsRow, error) {
			if w.org == nil {
				rows, err := q.GrowthHourlyCountsAnyOrganization(ctx, dbq.GrowthHourlyCountsAnyOrganizationParams{FromHour: from, ToHour: to, IncludeInternal: w.includeInternal})
				return convertRows(rows, func(r dbq.GrowthHourlyCountsAnyOrganizationRow) dbq.GrowthDailyCountsRow {
					return dbq.GrowthDailyCountsRow(r)
				}), err
			}
			rows, err := q.GrowthHourlyCounts(ctx, dbq.GrowthHourlyCountsParams{OrganizationID: *w.org, FromHour: from, ToHour: to, IncludeInternal: w.includeInternal})
			return convertRows(rows, func(r dbq.GrowthHourlyCountsRow) dbq.GrowthDailyCountsRow { return dbq.GrowthDailyCountsRow(r) }), err
		},
	}
	summaryLevels = []summaryLevel{month, day, hour}
)

func convertRows[From, To any](rows []From, convert func(From) To) []To {
	out := make([]To, len(rows))
	for i, r := range rows {
		out[i] = convert(r)
	}
	return out
}

// spanCounts are the events per dimension in s: the whole units of the coarsest level between
// the unit starts nearest to its ends, and what lies between those and its ends added or
// taken off at the finer levels, down to growth_events. Each end costs at most half a unit
// of each finer level: half a month of days, half a day of hours, half an hour of events.
func spanCounts(ctx context.Context, q *dbq.Queries, w summaryWindow, s summarySpan, levels []summaryLevel) ([]dbq.GrowthSummaryCountsRow, error) {
	if len(levels) == 0 {
		return rawCounts(ctx, q, w, s)
	}
	level := levels[0]
	whole := summarySpan{from: level.round(s.from), to: level.round(s.to)}
	if !whole.from.Before(whole.to) {
		return spanCounts(ctx, q, w, s, levels[1:])
	}
	rows, err := level.counts(ctx, q, w, whole.from, whole.to)
	if err != nil {
		return nil, err
	}
	counts := levelRows(rows)
	for _, part := range []struct {
		span summarySpan
		sign int64
	}{
		{summarySpan{s.from, whole.from}, 1}, {summarySpan{whole.from, s.from}, -1},
		{summarySpan{whole.to, s.to}, 1}, {summarySpan{s.to, whole.to}, -1},
	} {
		if !part.span.from.Before(part.span.to) {
			continue
		}
		rows, err := spanCounts(ctx, q, w, part.span, levels[1:])
		if err != nil {
			return nil, err
		}
		counts = append(counts, signed(rows, part.sign)...)
	}
	return counts, nil
}

// signed multiplies the counts of rows by sign (-1 takes them off), in place.
func signed(rows []dbq.GrowthSummaryCountsRow, sign int64) []dbq.GrowthSummaryCountsRow {
	for i := range rows {
		rows[i].Events *= sign
	}
	return rows
}

// rawCounts are the events per dimension in s from growth_events.
func rawCounts(ctx context.Context, q *dbq.Queries, w summaryWindow, s summarySpan) ([]dbq.GrowthSummaryCountsRow, error) {
	until := s.to.Add(-time.Microsecond) // the queries' until is inclusive; timestamptz has microseconds
	if w.org == nil {
		return allCounts(ctx, q, s.from, until, w.traffic)
	}
	return q.GrowthSummaryCounts(ctx, dbq.GrowthSummaryCountsParams{
		Since: s.from, Until: until, TrafficTypes: w.traffic, OrganizationID: *w.org,
	})
}

// levelRows spreads a rollup's (dimension, key) rows over the columns of growth_events' rows.
func levelRows(rows []dbq.GrowthDailyCountsRow) []dbq.GrowthSummaryCountsRow {
	counts := make([]dbq.GrowthSummaryCountsRow, len(rows))
	for i, r := range rows {
		counts[i] = dbq.GrowthSummaryCountsRow{Dimension: r.Dimension, Events: r.Events}
		switch r.Dimension {
		case "event_name":
			counts[i].EventName = *r.Key
		case "product":
			counts[i].Product = r.Key
		case "source":
			counts[i].Source = r.Key
		}
	}
	return counts
}

// allCounts are the event counts of every organization in [since, until].
func allCounts(ctx context.Context, q *dbq.Queries, since, until time.Time, traffic []string) ([]dbq.GrowthSummaryCountsRow, error) {
	rows, err := q.GrowthSummaryCountsAnyOrganization(ctx, dbq.GrowthSummaryCountsAnyOrganizationParams{
		Since: since, Until: until, TrafficTypes: traffic,
	})
	counts := make([]dbq.GrowthSummaryCountsRow, len(rows))
	for i, r := range rows {
		counts[i] = dbq.GrowthSummaryCountsRow(r)
	}
	return counts, err
}

// mergeCounts adds up the rows of the same dimension and value, and leaves out the values
// whose corrections took them to no events.
func mergeCounts(rows []dbq.GrowthSummaryCountsRow) []dbq.GrowthSummaryCountsRow {
	type key struct {
		dimension, value string
		null             bool
	}
	index := map[key]int{}
	var out []dbq.GrowthSummaryCountsRow
	for _, r := range rows {
		k := key{dimension: r.Dimension, value: r.EventName}
		switch r.Dimension {
		case "product":
			k.value, k.null = deref(r.Product)
		case "source":
			k.value, k.null = deref(r.Source)
		}
		if i, ok := index[k]; ok {
			out[i].Events += r.Events
			continue
		}
		index[k] = len(out)
		out = append(out, r)
	}
	return slices.DeleteFunc(out, func(r dbq.GrowthSummaryCountsRow) bool { return r.Events == 0 })
}

func deref(s *string) (string, bool) {
	if s == nil {
		return "", true
	}
	return *s, false
}

// fillCounts spreads the grouping-set rows over the summary's counts and breakdowns.
func fillCounts(sum *core.GrowthSummary, rows []dbq.GrowthSummaryCountsRow) {
	byName := map[string]int64{}
	for _, r := range rows {
		switch r.Dimension {
		case "event_name":
			byName[r.EventName] = r.Events
			sum.TotalEvents += r.Events
		case "product":
			if r.Product != nil {
				sum.ByProduct = append(sum.ByProduct, core.GrowthCount{Key: r.Product, Count: r.Events})
			}
		case "source":
			sum.BySource = append(sum.BySource, core.GrowthCount{Key: r.Source, Count: r.Events})
		}
	}
	for _, name := range core.GrowthEventNames {
		sum.EventCounts = append(sum.EventCounts, core.GrowthCount{Key: &name, Count: byName[name]})
	}
	largestFirst(sum.ByProduct)
	largestFirst(sum.BySource)
	if len(sum.BySource) > core.MaxGrowthSources {
		sum.BySource = sum.BySource[:core.MaxGrowthSources]
	}
}

// largestFirst orders counts by count, then by key (no key last) so equal counts come out
// the same way every time.
func largestFirst(counts []core.GrowthCount) {
	slices.SortFunc(counts, func(a, b core.GrowthCount) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		switch {
		case a.Key == nil && b.Key == nil:
			return 0
		case a.Key == nil:
			return 1
		case b.Key == nil:
			return -1
		}
		return cmp.Compare(*a.Key, *b.Key)
	})
}

// fillFunnel lays the distinct actors of each step along the funnel with its conversions.
func fillFunnel(sum *core.GrowthSummary, rows []dbq.GrowthSummaryFunnelRow) {
	actors := map[string]int64{}
	for _, r := range rows {
		actors[r.EventName] = r.Actors
	}
	first := actors[core.GrowthFunnel[0]]
	for i, name := range core.GrowthFunnel {
		step := core.GrowthFunnelStep{Position: i + 1, EventName: name, Count: actors[name]}
		if i > 0 {
			step.ConversionFromPrevious = ratio(step.Count, actors[core.GrowthFunnel[i-1]])
		}
		step.ConversionFromFirst = ratio(step.Count, first)
		sum.Funnel = append(sum.Funnel, step)
	}
}

// ratio is n/d rounded to four decimals, or nil when d is zero.
func ratio(n, d int64) *float64 {
	if d == 0 {
		return nil
	}
	r := math.Round(float64(n)/float64(d)*10_000) / 10_000
	return &r
}
