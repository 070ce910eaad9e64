package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/pgtest"
	"github.com/provider/coreapi/internal/postgres"
)

// scanRows is the size of the tables of these tests: several walks of core.FilterScanRows.
const scanRows = 6 * core.FilterScanRows

// explainingTx runs every query of the services in a transaction, after running it under
// EXPLAIN (ANALYZE, FORMAT JSON) twice, with a custom plan and with a generic one (as a
// statement cached by pgx may be run after its fifth execution), and keeping the plans, so a
// test sees what PostgreSQL does for the very statements and arguments of the service.
type explainingTx struct {
	pgx.Tx
	t     *testing.T
	plans []explained
}

type explained struct {
	query string // the sqlc name, and the kind of plan
	plan  planNode
}

// planNode is the part of a JSON plan node the assertions read.
type planNode struct {
	NodeType     string     `json:"Node Type"`
	RelationName string     `json:"Relation Name"`
	IndexName    string     `json:"Index Name"`
	ActualRows   float64    `json:"Actual Rows"`
	ActualLoops  float64    `json:"Actual Loops"`
	RemovedRows  float64    `json:"Rows Removed by Filter"`
	RecheckRows  float64    `json:"Rows Removed by Index Recheck"`
	Plans        []planNode `json:"Plans"`
}

// Begin opens a savepoint (a service's own transaction inside the test's) whose queries are
// explained as the transaction's.
func (e *explainingTx) Begin(ctx context.Context) (pgx.Tx, error) {
	nested, err := e.Tx.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return &explainingSavepoint{Tx: nested, root: e}, nil
}

// explainingSavepoint is a savepoint of an explainingTx.
type explainingSavepoint struct {
	pgx.Tx
	root *explainingTx
}

func (s *explainingSavepoint) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	s.root.explain(ctx, sql, args)
	return s.Tx.Query(ctx, sql, args...)
}

func (s *explainingSavepoint) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	s.root.explain(ctx, sql, args)
	return s.Tx.QueryRow(ctx, sql, args...)
}

func (e *explainingTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	e.explain(ctx, sql, args)
	return e.Tx.Query(ctx, sql, args...)
}

func (e *explainingTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	e.explain(ctx, sql, args)
	return e.Tx.QueryRow(ctx, sql, args...)
}

func (e *explainingTx) explain(ctx context.Context, sql string, args []any) {
	e.t.Helper()
	name, _, _ := strings.Cut(strings.TrimPrefix(sql, "-- name: "), " ")
	// PREPARE is not undone by the rollback: a name of its own, deallocated before the next.
	prepared := fmt.Sprintf("explained_%d", len(e.plans))
	literals := make([]string, len(args))
	for i, a := range args {
		literals[i] = literal(e.t, a)
	}
	for _, step := range []struct{ kind, before, explain string }{
		{"custom", "SET LOCAL plan_cache_mode = force_custom_plan", sql},
		{"generic", "SET LOCAL plan_cache_mode = force_generic_plan; PREPARE " + prepared + " AS " + sql,
			"EXECUTE " + prepared + "(" + strings.Join(literals, ", ") + ")"},
	} {
		if _, err := e.Tx.Exec(ctx, step.before); err != nil {
			e.t.Fatalf("%s: %v", step.before, err)
		}
		var out []struct{ Plan planNode }
		explainArgs := args
		if step.kind == "generic" {
			explainArgs = nil
		}
		err := e.Tx.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+step.explain, explainArgs...).Scan(&out)
		if step.kind == "generic" {
			_, _ = e.Tx.Exec(ctx, "DEALLOCATE "+prepared)
		}
		if err != nil {
			e.t.Fatalf("explain %s (%s plan): %v", name, step.kind, err)
		}
		e.plans = append(e.plans, explained{query: name + " (" + step.kind + " plan)", plan: out[0].Plan})
		if _, err := e.Tx.Exec(ctx, "RESET plan_cache_mode"); err != nil {
			e.t.Fatal(err)
		}
	}
}

// literal writes an argument of the services' queries as an SQL literal.
func literal(t *testing.T, a any) string {
	t.Helper()
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	switch v := a.(type) {
	case uuid.UUID:
		return quote(v.String())
	case int32:
		return fmt.Sprint(v)
	case string:
		return quote(v)
	case *uuid.UUID:
		if v != nil {
			return quote(v.String())
		}
	case *string:
		if v != nil {
			return quote(*v)
		}
	case *int16:
		if v != nil {
			return fmt.Sprint(*v)
		}
	case *time.Time:
		if v != nil {
			return quote(v.Format(time.RFC3339Nano))
		}
	default:
		t.Fatalf("no literal for %T", a)
	}
	return "NULL"
}

// assertBounded fails unless every scan of table in every plan kept reads one of indexes (an
// index scan, or a bitmap heap scan over a bitmap index scan) and examined at most
// core.FilterScanRows rows of the table.
func (e *explainingTx) assertBounded(table string, indexes ...string) {
	e.t.Helper()
	for _, x := range e.plans {
		var walk func(n planNode)
		walk = func(n planNode) {
			if n.RelationName == table {
				examined := (n.ActualRows + n.RemovedRows + n.RecheckRows) * n.ActualLoops
				index := n.IndexName
				if n.NodeType == "Bitmap Heap Scan" && len(n.Plans) == 1 && n.Plans[0].NodeType == "Bitmap Index Scan" {
					index = n.Plans[0].IndexName
				} else if n.NodeType != "Index Scan" && n.NodeType != "Index Only Scan" {
					index = ""
				}
				if !slices.Contains(indexes, index) {
					e.t.Errorf("%s: %s of %s (index %q), want a scan of one of %v", x.query, n.NodeType, table, n.IndexName, indexes)
				}
				if examined > core.FilterScanRows {
					e.t.Errorf("%s: %s of %s (index %q) examined %.0f rows, more than %d", x.query, n.NodeType, table, n.IndexName, examined, core.FilterScanRows)
				}
			}
			for _, c := range n.Plans {
				walk(c)
			}
		}
		walk(x.plan)
	}
	if len(e.plans) == 0 {
		e.t.Error("no query was explained")
	}
}

// explaining returns ctx whose service queries run in an explainingTx of d, as principal p.
func explaining(t *testing.T, d *postgres.DB, p *core.Principal) (context.Context, *explainingTx) {
	t.Helper()
	ctx := context.Background()
	tx, err := d.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	e := &explainingTx{Tx: tx, t: t}
	return postgres.WithTx(core.WithPrincipal(ctx, p), e), e
}

// walkPages follows next_cursor from the first page to the last and returns every id listed
// and the number of pages.
func walkPages(t *testing.T, list func(cursor *string) ([]uuid.UUID, *string, error)) (ids []uuid.UUID, pages int) {
	t.Helper()
	var cursor *string
	for {
		page, next, err := list(cursor)
		if err != nil {
			t.Fatal(err)
		}
		ids, pages = append(ids, page...), pages+1
		if next == nil {
			return ids, pages
		}
		if pages > 2*scanRows/core.FilterScanRows {
			t.Fatalf("still paging after %d pages", pages)
		}
		cursor = next
	}
}

func openSeeded(t testing.TB, seed func(ctx context.Context, d *postgres.DB) error) *postgres.DB {
	t.Helper()
	ctx := context.Background()
	d, err := postgres.Open(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	if err := seed(ctx, d); err != nil {
		t.Fatal(err)
	}
	return d
}

// newIDs returns n time-ordered ids, oldest first.
func newIDs(t testing.TB, n int) []uuid.UUID {
	t.Helper()
	ids := make([]uuid.UUID, n)
	for i := range ids {
		ids[i] = uuid.Must(uuid.NewV7())
	}
	return ids
}

// TestFilteredRequestLogListsDoNotScan: with many more logs than core.FilterScanRows in one
// organization, every filter of listRequestLogs -- matching a few old rows or none -- walks at
// most core.FilterScanRows rows of the key's index per page, and following next_cursor still
// finds every match exactly once.
func TestFilteredRequestLogListsDoNotScan(t *testing.T) {
	t.Parallel()
	org := uuid.New()
	ids := newIDs(t, scanRows)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	errors := ids[100:110] // ten old 5xx rows, far below the first page
	d := openSeeded(t, func(ctx context.Context, d *postgres.DB) error {
		_, err := d.Pool.CopyFrom(ctx, pgx.Identifier{"request_logs"},
			[]string{"id", "organization_id", "request_id", "occurred_at", "principal_type", "method", "path", "status", "latency_ms"},
			pgx.CopyFromSlice(len(ids), func(i int) ([]any, error) {
				status := 200
				if slices.Contains(errors, ids[i]) {
					status = 503
				}
				return []any{ids[i], org, "req", base.Add(time.Duration(i) * time.Second), "organization", "GET", "/v1/usage", status, 1}, nil
			}))
		if err != nil {
			return err
		}
		_, err = d.Pool.Exec(ctx, "VACUUM ANALYZE request_logs")
		return err
	})
	svc := postgres.NewRequestLogService(d)
	str := func(s string) *string { return &s }
	at := func(i int) *time.Time { t := base.Add(time.Duration(i) * time.Second); return &t }
	cases := map[string]struct {
		filter core.RequestLogFilter
		want   []uuid.UUID // newest first
	}{
		"StatusClass":    {core.RequestLogFilter{StatusClass: str("5xx")}, errors},
		"MethodNoMatch":  {core.RequestLogFilter{Method: str("POST")}, nil},
		"PathNoMatch":    {core.RequestLogFilter{PathPrefix: str("/v1/taxauth")}, nil},
		"SinceAndUntil":  {core.RequestLogFilter{Since: at(100), Until: at(110)}, errors},
		"UntilOldestFew": {core.RequestLogFilter{Until: at(3)}, ids[:3]},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, tx := explaining(t, d, &core.Principal{Kind: core.PrincipalOrganization, OrganizationID: org})
			got, pages := walkPages(t, func(cursor *string) ([]uuid.UUID, *string, error) {
				f := c.filter
				f.Cursor, f.Limit = cursor, 50
				logs, next, err := svc.ListRequestLogs(ctx, f)
				var page []uuid.UUID
				for _, l := range logs {
					page = append(page, l.ID)
				}
				return page, next, err
			})
			want := slices.Clone(c.want)
			slices.Reverse(want)
			if !slices.Equal(got, want) {
				t.Errorf("listed %d logs over %d pages, want the %d matching", len(got), pages, len(want))
			}
			if pages < scanRows/core.FilterScanRows {
				t.Errorf("%d pages: the walk cannot have been bounded", pages)
			}
			tx.assertBounded("request_logs", "request_logs_pkey")
		})
	}
}

// TestFilteredAuditEventListsDoNotScan is the same for listAuditEvents, for an organization and
// for the operator's trail over every organization.
func TestFilteredAuditEventListsDoNotScan(t *testing.T) {
	t.Parallel()
	org := uuid.New()
	ids := newIDs(t, scanRows)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rare := ids[200:205] // five old events of one webhook endpoint
	d := openSeeded(t, func(ctx context.Context, d *postgres.DB) error {
		_, err := d.Pool.CopyFrom(ctx, pgx.Identifier{"audit_events"},
			[]string{"id", "occurred_at", "organization_id", "actor_type", "action", "resource_type", "resource_id"},
			pgx.CopyFromSlice(len(ids), func(i int) ([]any, error) {
				if slices.Contains(rare, ids[i]) {
					return []any{ids[i], base.Add(time.Duration(i) * time.Second), org, "organization", "webhook_endpoint.created", "webhook_endpoint", "rare"}, nil
				}
				return []any{ids[i], base.Add(time.Duration(i) * time.Second), org, "organization", "api_key.created", "api_key", fmt.Sprint(i % 100)}, nil
			}))
		if err != nil {
			return err
		}
		_, err = d.Pool.Exec(ctx, "VACUUM ANALYZE audit_events")
		return err
	})
	svc := postgres.NewAuditService(d)
	str := func(s string) *string { return &s }
	at := func(i int) *time.Time { t := base.Add(time.Duration(i) * time.Second); return &t }
	filters := map[string]core.AuditFilter{
		"ResourceType": {ResourceType: str("webhook_endpoint")},
		"ResourceID":   {ResourceType: str("webhook_endpoint"), ResourceID: str("rare")},
		"Action":       {Action: str("webhook_endpoint.created")},
		"SinceUntil":   {Since: at(200), Until: at(205)},
		// The common type and an action none of its events has: the resource index would read
		// every event of the type.
		"CommonTypeNoMatch": {ResourceType: str("api_key"), Action: str("webhook_endpoint.created")},
	}
	principals := map[string]*core.Principal{
		"Organization": {Kind: core.PrincipalOrganization, OrganizationID: org},
		"Operator":     {Kind: core.PrincipalOperator},
	}
	for name, filter := range filters {
		for who, p := range principals {
			t.Run(name+"/"+who, func(t *testing.T) {
				t.Parallel()
				ctx, tx := explaining(t, d, p)
				got, _ := walkPages(t, func(cursor *string) ([]uuid.UUID, *string, error) {
					f := filter
					f.Cursor, f.Limit = cursor, 50
					events, next, err := svc.ListAuditEvents(ctx, f)
					var page []uuid.UUID
					for _, e := range events {
						page = append(page, e.ID)
					}
					return page, next, err
				})
				want := slices.Clone(rare)
				if name == "CommonTypeNoMatch" {
					want = nil
				}
				slices.Reverse(want)
				if !slices.Equal(got, want) {
					t.Errorf("listed %d events, want the %d matching", len(got), len(want))
				}
				tx.assertBounded("audit_events", "audit_events_pkey", "audit_events_organization_id_id", "audit_events_resource")
			})
		}
	}
}

// TestSupportCaseStatusFilterIsServedByItsIndex: listing an organization's open cases among
// many closed ones reads the index (organization_id, status, id) alone, in custom and generic
// plans.
func TestSupportCaseStatusFilterIsServedByItsIndex(t *testing.T) {
	t.Parallel()
	org := uuid.New()
	ids := newIDs(t, scanRows)
	open := ids[:3]
	others := newIDs(t, 199)
	statuses := []string{"in_progress", "waiting_on_customer", "resolved", "closed"}
	now := time.Now()
	d := openSeeded(t, func(ctx context.Context, d *postgres.DB) error {
		conn, err := d.Pool.Acquire(ctx)
		if err != nil {
			return err
		}
		defer conn.Release()
		// The cases' organization is not seeded: no foreign key is checked while copying.
		if _, err := conn.Exec(ctx, "SET session_replication_role = replica"); err != nil {
			return err
		}
		defer conn.Exec(ctx, "RESET session_replication_role") //nolint:errcheck // the connection is discarded with the test database
		_, err = conn.CopyFrom(ctx, pgx.Identifier{"support_cases"},
			[]string{"id", "organization_id", "severity", "category", "status", "opened_at", "resolved_at"},
			pgx.CopyFromSlice(len(ids), func(i int) ([]any, error) {
				switch {
				case slices.Contains(open, ids[i]):
					return []any{ids[i], org, "low", "other", "open", now, nil}, nil
				case i%2 == 1: // other organizations' cases, of every status
					return []any{ids[i], others[i%len(others)], "low", "other", statuses[i%len(statuses)], now, now}, nil
				}
				return []any{ids[i], org, "low", "other", "closed", now, now}, nil
			}))
		if err != nil {
			return err
		}
		_, err = conn.Exec(ctx, "VACUUM ANALYZE support_cases")
		return err
	})
	svc := postgres.NewSupportCaseService(d)
	ctx, tx := explaining(t, d, &core.Principal{Kind: core.PrincipalOrganization, OrganizationID: org})
	status := core.SupportCaseOpen
	got, _ := walkPages(t, func(cursor *string) ([]uuid.UUID, *string, error) {
		cases, next, err := svc.ListSupportCases(ctx, core.SupportCaseFilter{OrganizationID: org, Status: &status, Cursor: cursor, Limit: 2})
		var page []uuid.UUID
		for _, c := range cases {
			page = append(page, c.ID)
		}
		return page, next, err
	})
	if !slices.Equal(got, open) {
		t.Errorf("listed %v, want the open cases %v", got, open)
	}
	tx.assertBounded("support_cases", "support_cases_organization_id_status_id")
}
