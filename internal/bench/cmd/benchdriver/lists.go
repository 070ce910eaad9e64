package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
)

// The lists benchmark (issue 29): every list operation that reads the tables growing with
// traffic, with each of its filters, first page and following page, answered by an API over
// a database holding -lists-rows request logs and as many growth events, against one over a
// database of the same cluster holding -lists-small-rows of each. Both servers run the same
// binary at the same time; each read is timed on both alternately, round after round, and the
// ratio of their median latencies is compared with listRatioTarget (docs/performance.md,
// "Lists at 10 million rows").

// listRatioTarget: a read at 10 million rows answers within 20 % of its time at 10 thousand.
const listRatioTarget = 1.2

// A read is timed with one connection a side, one request after another, for at least
// listReadTime and listReadMin requests, after listWarmup untimed ones.
const (
	listReadTime = time.Second
	listReadMin  = 5
	listWarmup   = 2
)

// listRead is one read of the benchmark, as a path and query for a database's fixture.
type listRead struct {
	name     string
	operator bool // as the operator (dev:operator), else with the big organization's keys
	paged    bool // a list: its following page is read too
	target   func(f *listFixture) string
}

func listReads(now time.Time) []listRead {
	day := func(d int) string {
		return url.QueryEscape(now.Add(time.Duration(d) * 24 * time.Hour).Format(time.RFC3339))
	}
	logs := func(name, query string) listRead {
		return listRead{name: "request-logs " + name, paged: true, target: func(*listFixture) string { return "/v1/request-logs?" + query }}
	}
	reads := []listRead{
		logs("(no filter)", ""),
		logs("status_class=5xx (1 %)", "status_class=5xx"),
		logs("status_class=4xx (5 %)", "status_class=4xx"),
		logs("method=POST (15 %)", "method=POST"),
		logs("method=DELETE (none)", "method=DELETE"),
		logs("path=/v1/taxauth (10 %)", "path=/v1/taxauth"),
		logs("operation=createSubscription (5 %)", "operation=createSubscription"),
		logs("idempotency_key (none)", "idempotency_key="+listBenchMissing),
		logs("since=1 day ago", "since="+day(-1)),
		logs("until=before the oldest (none)", "until="+day(-30)),
		{name: "request-logs api_key_id (12 %)", paged: true, target: func(f *listFixture) string {
			return "/v1/request-logs?api_key_id=" + f.APIKeyIDs[0].String()
		}},
		{name: "request-logs operator, organization_id", operator: true, paged: true, target: func(f *listFixture) string {
			return "/v1/request-logs?organization_id=" + f.BigOrg
		}},
		{name: "request-logs operator, organization_id, status_class=5xx", operator: true, paged: true, target: func(f *listFixture) string {
			return "/v1/request-logs?status_class=5xx&organization_id=" + f.BigOrg
		}},
	}
	summary := func(name, query string, operator bool) listRead {
		return listRead{name: "growth-summary " + name, operator: operator, target: func(*listFixture) string { return "/v1/growth/summary?" + query }}
	}
	reads = append(reads,
		summary("organization (30 days)", "", false),
		summary("organization include_internal_traffic", "include_internal_traffic=true", false),
		summary("organization since=365 days ago", "since="+day(-365), false),
		summary("operator (30 days)", "", true),
		summary("operator include_internal_traffic", "include_internal_traffic=true", true),
		summary("operator since=365 days ago", "since="+day(-365), true),
		listRead{name: "growth-summary operator, organization_id", operator: true, target: func(f *listFixture) string {
			return "/v1/growth/summary?organization_id=" + f.BigOrg
		}},
	)
	return reads
}

// listSide is one of the two servers with its database's fixture.
type listSide struct {
	p   *process
	fix *listFixture
}

// listCase is a read resolved for both sides: the URL each requests.
type listCase struct {
	name        string
	operator    bool
	small, big  string
	unavailable string // why the case is not measured, if it is not
}

// listResult is a case's figures: per round, the median latency on each side.
type listResult struct {
	listCase
	smallTimes, bigTimes []time.Duration
	ratios               []float64
}

// runLists is -lists: it seeds both databases, resolves the reads and times them.
func runLists(ctx context.Context, o options) error {
	env, err := startListsEnvironment(ctx, o)
	if err != nil {
		return err
	}
	defer env.stop()
	small, big := listSide{p: env.floor}, listSide{p: env.api}
	if small.fix, big.fix, err = seededFixtures(ctx, env, o); err != nil {
		return err
	}
	reads := slices.DeleteFunc(listReads(time.Now().UTC()), func(r listRead) bool {
		return o.only != nil && !o.only.MatchString(r.name)
	})
	cases, err := resolveListCases(ctx, reads, small, big)
	if err != nil {
		return err
	}
	results := make([]listResult, len(cases))
	for i, c := range cases {
		results[i].listCase = c
	}
	for round := range max(o.rounds, 1) {
		for i := range results {
			r := &results[i]
			if r.unavailable != "" {
				continue
			}
			atSmall, atBig, err := timePairs(ctx, small, big, r.listCase, round%2 == 1)
			if err != nil {
				return fmt.Errorf("%s: %w", r.name, err)
			}
			r.smallTimes, r.bigTimes = append(r.smallTimes, atSmall), append(r.bigTimes, atBig)
			r.ratios = append(r.ratios, float64(atBig)/float64(max(atSmall, 1)))
		}
		log.Printf("lists: round %d of %d done", round+1, max(o.rounds, 1))
	}
	printListTable(os.Stdout, results, o)
	return nil
}

// seededFixtures seeds both databases, or with -lists-seeded reads the fixtures a previous
// run kept beside them.
func seededFixtures(ctx context.Context, env *environment, o options) (small, big *listFixture, err error) {
	kept := filepath.Join(env.dir, "fixtures.json")
	var fixtures struct{ Small, Big *listFixture }
	if o.listsSeeded != "" {
		if data, err := os.ReadFile(kept); err == nil {
			log.Printf("measuring the databases seeded in %s", env.dir)
			err := json.Unmarshal(data, &fixtures)
			return fixtures.Small, fixtures.Big, err
		}
	}
	started := time.Now()
	if fixtures.Small, err = seedLists(ctx, env.floor.base, env.cluster.DSN(listsSmallDatabase), o.listsSmallRows); err != nil {
		return nil, nil, fmt.Errorf("seeding %d rows: %w", o.listsSmallRows, err)
	}
	if fixtures.Big, err = seedLists(ctx, env.api.base, env.cluster.DSN("postgres"), o.listsRows); err != nil {
		return nil, nil, fmt.Errorf("seeding %d rows: %w", o.listsRows, err)
	}
	log.Printf("seeded both databases in %v", time.Since(started).Round(time.Second))
	if o.listsSeeded == "" {
		return fixtures.Small, fixtures.Big, nil
	}
	data, err := json.Marshal(fixtures)
	if err != nil {
		return nil, nil, err
	}
	return fixtures.Small, fixtures.Big, os.WriteFile(kept, data, 0o644)
}

// createDatabase creates database name in the cluster of dsn.
func createDatabase(ctx context.Context, dsn, name string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var exists bool // kept with -lists-seeded
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil || exists {
		return err
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	return err
}

// listsSmallDatabase is the database of the small side, in the same cluster.
const listsSmallDatabase = "lists_small"

// startListsEnvironment starts a cluster with two databases and the API over each: the big
// one in the API's place, the small one in the floor's.
func startListsEnvironment(ctx context.Context, o options) (*environment, error) {
	env, err := startCluster(ctx, o)
	if err != nil {
		return nil, err
	}
	if err := createDatabase(ctx, env.cluster.DSN("postgres"), listsSmallDatabase); err != nil {
		env.stop()
		return nil, err
	}
	if env.api, err = env.apiProcess(fmt.Sprintf("api (%d rows)", o.listsRows), o.server, env.cluster.DSN("postgres"), "coreapi.log", os.Getenv("BENCH_API_ENV")); err != nil {
		env.stop()
		return nil, err
	}
	if env.floor, err = env.apiProcess(fmt.Sprintf("api (%d rows)", o.listsSmallRows), o.server, env.cluster.DSN(listsSmallDatabase), "coreapi-small.log", os.Getenv("BENCH_API_ENV")); err != nil {
		env.stop()
		return nil, err
	}
	if err := env.startServers(ctx); err != nil {
		env.stop()
		return nil, err
	}
	return env, nil
}

// resolveListCases turns the reads into cases: a list's following page is requested with the
// next_cursor of its first page on each side; when the small side has none (its first page
// was the last), that page exists only at scale and is not compared.
func resolveListCases(ctx context.Context, reads []listRead, small, big listSide) ([]listCase, error) {
	var cases []listCase
	for _, r := range reads {
		first := listCase{name: r.name, operator: r.operator, small: r.target(small.fix), big: r.target(big.fix)}
		if !r.paged {
			cases = append(cases, first)
			continue
		}
		first.name += ", first page"
		cases = append(cases, first)
		next := listCase{name: r.name + ", following page", operator: r.operator}
		var err error
		if next.small, err = withCursor(ctx, small, first.small, r.operator); err != nil {
			return nil, err
		}
		if next.big, err = withCursor(ctx, big, first.big, r.operator); err != nil {
			return nil, err
		}
		if next.small == "" || next.big == "" {
			next.unavailable = "no following page at the small size"
		}
		cases = append(cases, next)
	}
	return cases, nil
}

// withCursor is path with the next_cursor of its first page, or "" when it has none.
func withCursor(ctx context.Context, s listSide, path string, operator bool) (string, error) {
	body, err := getList(ctx, s, path, operator, 0)
	if err != nil {
		return "", err
	}
	var page struct {
		NextCursor *string `json:"next_cursor"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		return "", err
	}
	if page.NextCursor == nil {
		return "", nil
	}
	return path + "&cursor=" + url.QueryEscape(*page.NextCursor), nil
}

// getList requests path on side s, with the i-th of the big organization's keys unless as
// the operator, and returns the body of its 200.
func getList(ctx context.Context, s listSide, path string, operator bool, i int) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", s.p.base+path, nil)
	if err != nil {
		return nil, err
	}
	token := "dev:operator"
	if !operator {
		token = s.fix.Keys[i%len(s.fix.Keys)]
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s on %s: %d %s", path, s.p.name, resp.StatusCode, body)
	}
	return body, nil
}

// timePairs returns the median latencies of case c on each side, requested in pairs, one
// side then the other (the big one first when bigFirst), so that the loaded machine's
// moments fall on both alike: at least listReadMin pairs and listReadTime, after listWarmup
// untimed ones.
func timePairs(ctx context.Context, small, big listSide, c listCase, bigFirst bool) (time.Duration, time.Duration, error) {
	type leg struct {
		side  listSide
		path  string
		times []time.Duration
	}
	legs := []*leg{{side: small, path: c.small}, {side: big, path: c.big}}
	if bigFirst {
		legs[0], legs[1] = legs[1], legs[0]
	}
	begun := time.Now()
	for i := 0; i < listWarmup+listReadMin || time.Since(begun) < listReadTime; i++ {
		for _, l := range legs {
			start := time.Now()
			if _, err := getList(ctx, l.side, l.path, c.operator, i); err != nil {
				return 0, 0, err
			}
			if i >= listWarmup {
				l.times = append(l.times, time.Since(start))
			} else {
				begun = time.Now()
			}
		}
	}
	if bigFirst {
		legs[0], legs[1] = legs[1], legs[0]
	}
	return median(legs[0].times), median(legs[1].times), nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func printListTable(w io.Writer, results []listResult, o options) {
	fmt.Fprintf(w, "\nLists: median latency of each read, one connection a side, the sides requested alternately for at least %v and %d pairs per round, %d round(s); "+
		"ratio = median over rounds of (%d rows / %d rows). Target: ratio ≤ %.1f.\n\n", listReadTime, listReadMin, max(o.rounds, 1), o.listsRows, o.listsSmallRows, listRatioTarget)
	fmt.Fprintf(w, "| read | %d rows | %d rows | ratio | rounds' ratios | target |\n|---|---:|---:|---:|---|---|\n", o.listsSmallRows, o.listsRows)
	missed := 0
	for _, r := range results {
		if r.unavailable != "" {
			fmt.Fprintf(w, "| %s | | | | | %s |\n", r.name, r.unavailable)
			continue
		}
		ratios := slices.Clone(r.ratios)
		sort.Float64s(ratios)
		ratio := ratios[len(ratios)/2]
		verdict := "met"
		if ratio > listRatioTarget {
			verdict, missed = "MISSED", missed+1
		}
		var each string
		for i, x := range r.ratios {
			if i > 0 {
				each += " "
			}
			each += fmt.Sprintf("%.2f", x)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %.2f | %s | %s |\n", r.name, ms(median(r.smallTimes)), ms(median(r.bigTimes)), ratio, each, verdict)
	}
	fmt.Fprintf(w, "\n%d of %d reads missed the target.\n", missed, len(results))
}
