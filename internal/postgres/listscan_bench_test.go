package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/postgres"
)

// BenchmarkFilteredLists times the first page of listRequestLogs and listAuditEvents, with
// each of their filters, over one organization holding 10 thousand and a million rows, none
// of which matches the filter but the oldest few (the worst case: the page walks its whole
// bound, core.FilterScanRows). Run it with
// `go test -run x -bench FilteredLists -benchtime 50x ./internal/postgres/` (seeding the
// million rows takes a minute); docs/performance.md has the figures.
func BenchmarkFilteredLists(b *testing.B) {
	for _, rows := range []int{10_000, 1_000_000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			org := uuid.New()
			base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			ids := newIDs(b, rows)
			d := openSeeded(b, func(ctx context.Context, d *postgres.DB) error {
				return seedListRows(ctx, d, org, ids, base)
			})
			ctx := core.WithPrincipal(context.Background(), &core.Principal{Kind: core.PrincipalOrganization, OrganizationID: org})
			str := func(s string) *string { return &s }
			oldest := base.Add(5 * time.Second)
			logs := postgres.NewRequestLogService(d)
			for name, f := range map[string]core.RequestLogFilter{
				"RequestLogs/none":         {},
				"RequestLogs/status_class": {StatusClass: str("5xx")},
				"RequestLogs/method":       {Method: str("POST")},
				"RequestLogs/path":         {PathPrefix: str("/v1/taxauth")},
				"RequestLogs/since":        {Since: &oldest},
				"RequestLogs/until":        {Until: &oldest},
			} {
				b.Run(name, func(b *testing.B) {
					f.Limit = core.DefaultPageLimit
					for b.Loop() {
						if _, _, err := logs.ListRequestLogs(ctx, f); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
			audit := postgres.NewAuditService(d)
			for name, f := range map[string]core.AuditFilter{
				"AuditEvents/none":          {},
				"AuditEvents/resource_type": {ResourceType: str("webhook_endpoint")},
				"AuditEvents/resource_id":   {ResourceType: str("api_key"), ResourceID: str("rare")},
				"AuditEvents/action":        {Action: str("webhook_endpoint.created")},
				"AuditEvents/since":         {Since: &oldest},
				"AuditEvents/until":         {Until: &oldest},
			} {
				b.Run(name, func(b *testing.B) {
					f.Limit = core.DefaultPageLimit
					for b.Loop() {
						if _, _, err := audit.ListAuditEvents(ctx, f); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}

// seedListRows COPYs one request log and one audit event per id into org, a second apart
// from base: GET 200s and api_key.created events, but for the five oldest (a 503, a
// webhook_endpoint.created event of the resource "rare").
func seedListRows(ctx context.Context, d *postgres.DB, org uuid.UUID, ids []uuid.UUID, base time.Time) error {
	const rare = 5
	at := func(i int) time.Time { return base.Add(time.Duration(i) * time.Second) }
	if _, err := d.Pool.CopyFrom(ctx, pgx.Identifier{"request_logs"},
		[]string{"id", "organization_id", "request_id", "occurred_at", "principal_type", "method", "path", "status", "latency_ms"},
		pgx.CopyFromSlice(len(ids), func(i int) ([]any, error) {
			status := 200
			if i < rare {
				status = 503
			}
			return []any{ids[i], org, "req", at(i), "organization", "GET", "/v1/usage", status, 1}, nil
		})); err != nil {
		return err
	}
	if _, err := d.Pool.CopyFrom(ctx, pgx.Identifier{"audit_events"},
		[]string{"id", "occurred_at", "organization_id", "actor_type", "action", "resource_type", "resource_id"},
		pgx.CopyFromSlice(len(ids), func(i int) ([]any, error) {
			if i < rare {
				return []any{ids[i], at(i), org, "organization", "webhook_endpoint.created", "webhook_endpoint", "rare"}, nil
			}
			return []any{ids[i], at(i), org, "organization", "api_key.created", "api_key", fmt.Sprint(i % 100)}, nil
		})); err != nil {
		return err
	}
	_, err := d.Pool.Exec(ctx, "VACUUM ANALYZE request_logs, audit_events")
	return err
}
