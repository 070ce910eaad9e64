package postgres_test

import (
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/postgres"
	"github.com/provider/coreapi/internal/webhook"
)

const day = 24 * time.Hour

// idAt is a UUIDv7 of instant at, as uuid.NewV7 would have made it then.
func idAt(at time.Time) uuid.UUID {
	id := uuid.Must(uuid.NewV7())
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(at.UnixMilli()))
	copy(id[:6], ms[2:])
	return id
}

// appendOnlyRows writes one request log, one audit event (provider-wide when org is nil) and
// one growth event, each with an id of instant at, and returns their ids.
func appendOnlyRows(t *testing.T, d *postgres.DB, at time.Time, org *uuid.UUID) (requestLog, audit, growth uuid.UUID) {
	t.Helper()
	requestLog, audit, growth = idAt(at), idAt(at), idAt(at)
	stored := uuid.Nil
	if org != nil {
		stored = *org
	}
	for _, stmt := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO request_logs (id, organization_id, request_id, occurred_at, principal_type, method, path, status, latency_ms)
		  VALUES ($1, $2, 'req', $3, 'organization', 'GET', '/v1/x', 200, 1)`, []any{requestLog, stored, at}},
		{`INSERT INTO audit_events (id, organization_id, occurred_at, actor_type, action, resource_type, resource_id)
		  VALUES ($1, $2, $3, 'system', 'thing.created', 'thing', 'x')`, []any{audit, stored, at}},
		{`INSERT INTO growth_events (id, organization_id, occurred_at, received_at, event_name, traffic_type)
		  VALUES ($1, 'org-1', $2, $2, 'page_view', 'public')`, []any{growth, at}},
	} {
		if _, err := d.Pool.Exec(t.Context(), stmt.sql, stmt.args...); err != nil {
			t.Fatalf("%s: %v", stmt.sql, err)
		}
	}
	return requestLog, audit, growth
}

// tenantRows are an organization and a webhook endpoint of it, which the webhook and usage
// rows refer to.
func tenantRows(t *testing.T, d *postgres.DB) (org, endpoint uuid.UUID) {
	t.Helper()
	org, endpoint = uuid.New(), uuid.New()
	if _, err := d.Pool.Exec(t.Context(), `INSERT INTO organizations (id, legal_name_ar, legal_name_en, display_name, organization_type,
		country, verification_status, risk_status, data_residency_policy, lifecycle_status)
		VALUES ($1, 'شركة', 'Company', 'Co', 'standard_customer', 'SA', 'verified', 'normal', 'sa_only', 'active')`, org); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Pool.Exec(t.Context(), `INSERT INTO webhook_endpoints (id, organization_id, url, enabled_events, secret, status)
		VALUES ($1, $2, 'https://example.com/hooks', '{api_key.created}', '\x00', 'enabled')`, endpoint, org); err != nil {
		t.Fatal(err)
	}
	return org, endpoint
}

// webhookRows writes a webhook event of instant at with a delivery to endpoint (of status
// status) and its first attempt, and a usage event of instant at; it returns their ids.
func webhookRows(t *testing.T, d *postgres.DB, at time.Time, org, endpoint uuid.UUID, status string) (event, delivery, attempt, usage uuid.UUID) {
	t.Helper()
	event, delivery, attempt, usage = idAt(at), idAt(at), idAt(at), idAt(at)
	for _, stmt := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO webhook_events (id, organization_id, type, data) VALUES ($1, $2, 'api_key.created', '{}')`, []any{event, org}},
		{`INSERT INTO webhook_deliveries (id, organization_id, event_id, endpoint_id, status, completed_at)
		  VALUES ($1, $2, $3, $4, $5, CASE WHEN $5 = 'pending' THEN NULL ELSE now() END)`, []any{delivery, org, event, endpoint, status}},
		{`INSERT INTO webhook_delivery_attempts (id, organization_id, event_id, delivery_id, attempt, attempted_at, succeeded, latency_ms)
		  VALUES ($1, $2, $3, $4, 1, $5, false, 1)`, []any{attempt, org, event, delivery, at}},
		{`INSERT INTO usage_events (id, organization_id, product, occurred_at) VALUES ($1, $2, 'address', $3)`, []any{usage, org, at}},
	} {
		if _, err := d.Pool.Exec(t.Context(), stmt.sql, stmt.args...); err != nil {
			t.Fatalf("%s: %v", stmt.sql, err)
		}
	}
	return event, delivery, attempt, usage
}

// attemptsNeedTheirEvent: an attempt of delivery is stored only with its event, and in a
// day that has a partition: since migration 00620 there is no DEFAULT partition to take
// either, so neither finds a partition (check_violation).
func attemptsNeedTheirEvent(t *testing.T, d *postgres.DB, org, delivery uuid.UUID) {
	t.Helper()
	for _, c := range []struct {
		name  string
		event any
	}{
		{"without its event", nil},
		{"of a day without a partition", idAt(time.Now().AddDate(1, 0, 0))},
	} {
		_, err := d.Pool.Exec(t.Context(), `INSERT INTO webhook_delivery_attempts (id, organization_id, event_id, delivery_id, attempt, attempted_at, succeeded, latency_ms)
			VALUES ($1, $2, $3, $4, 2, now(), true, 1)`, uuid.Must(uuid.NewV7()), org, c.event, delivery)
		if pgErr := (*pgconn.PgError)(nil); !errors.As(err, &pgErr) || pgErr.Code != "23514" {
			t.Errorf("an attempt %s: %v, want a check_violation", c.name, err)
		}
	}
	var unrouted int
	if err := d.Pool.QueryRow(t.Context(), "SELECT count(*) FROM pg_class WHERE relname = 'webhook_delivery_attempts_unrouted'").Scan(&unrouted); err != nil || unrouted != 0 {
		t.Errorf("webhook_delivery_attempts_unrouted: %d (%v), want it dropped", unrouted, err)
	}
}

// present says which of ids table holds.
func present(t *testing.T, d *postgres.DB, table string, ids ...uuid.UUID) []bool {
	t.Helper()
	got := make([]bool, len(ids))
	for i, id := range ids {
		if err := d.Pool.QueryRow(t.Context(), "SELECT EXISTS (SELECT 1 FROM "+table+" WHERE id = $1)", id).Scan(&got[i]); err != nil {
			t.Fatal(err)
		}
	}
	return got
}

func partitionNames(ps []postgres.Partition) []string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return names
}

// TestPartitionsFollowTime moves time forward over a migrated database: maintenance creates
// the partitions of the days and months ahead of the new time and drops exactly the
// partitions whose period is past their table's retention. The rows of the partitions kept,
// and every other table, are untouched, and rows are written at the new time. A webhook
// event goes with its deliveries and attempts, but not while one of its day's deliveries is
// pending.
func TestPartitionsFollowTime(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, d := openUpgradable(t)
	now := time.Now().UTC()

	// Migrate created the partitions ahead: a week of days, two months.
	parts, err := d.Partitions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := partitionNames(parts)
	for _, want := range []string{"request_logs_legacy", "request_logs" + now.Add(6*day).Format("_p20060102"),
		"audit_events_legacy", "audit_events" + now.AddDate(0, 0, 45).Format("_p200601"), "growth_events_legacy"} {
		if !slices.Contains(names, want) {
			t.Errorf("after migration, no partition %s in %v", want, names)
		}
	}

	org := uuid.New()
	logNow, auditNow, growthNow := appendOnlyRows(t, d, now, nil)
	logSoon, _, _ := appendOnlyRows(t, d, now.Add(3*day), &org)
	logLater, auditLater, growthLater := appendOnlyRows(t, d, now.Add(6*day), &org)
	tenant, endpoint := tenantRows(t, d)
	eventNow, deliveryNow, attemptNow, usageNow := webhookRows(t, d, now, tenant, endpoint, "succeeded")
	eventPending, deliveryPending, attemptPending, _ := webhookRows(t, d, now.Add(3*day), tenant, endpoint, "pending")
	eventLater, deliveryLater, _, usageLater := webhookRows(t, d, now.Add(6*day), tenant, endpoint, "failed")
	attemptsNeedTheirEvent(t, d, tenant, deliveryLater)
	var organizations, rollups int
	if err := d.Pool.QueryRow(ctx, "SELECT (SELECT count(*) FROM organizations), (SELECT count(*) FROM growth_hourly_counts)").Scan(&organizations, &rollups); err != nil {
		t.Fatal(err)
	}

	// 35 days on: request logs older than 30 days go, by whole days; nothing else does.
	at := now.Add(35 * day)
	created, dropped, err := d.MaintainPartitions(ctx, at, postgres.DefaultRetention)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(partitionNames(created), "request_log_bodies"+at.Format("_p20060102")) ||
		!slices.Contains(partitionNames(created), "request_logs"+at.Format("_p20060102")) ||
		!slices.Contains(partitionNames(created), "request_logs"+at.Add(6*day).Format("_p20060102")) {
		t.Errorf("created %v, want the days from %s on", partitionNames(created), at.Format(time.DateOnly))
	}
	daily := []string{"request_logs", "request_log_bodies", "webhook_events", "webhook_deliveries", "webhook_delivery_attempts"}
	for _, p := range dropped {
		if !slices.Contains(daily, p.Table) || p.To.After(at.Add(-30*day)) {
			t.Errorf("dropped %+v, within retention", p)
		}
	}
	for _, table := range daily[2:] {
		if !slices.Contains(partitionNames(created), table+at.Format("_p20060102")) {
			t.Errorf("created %v, no %s partition for the new day", partitionNames(created), table)
		}
	}
	if got := present(t, d, "webhook_events", eventNow, eventPending, eventLater); !slices.Equal(got, []bool{false, true, true}) {
		t.Errorf("webhook events of now, +3 (a delivery pending) and +6 days present: %v, want the first gone", got)
	}
	if got := append(present(t, d, "webhook_deliveries", deliveryNow, deliveryPending), present(t, d, "webhook_delivery_attempts", attemptNow, attemptPending)...); !slices.Equal(got, []bool{false, true, false, true}) {
		t.Errorf("deliveries and attempts of now and +3 days present: %v, want those of now gone with their event", got)
	}
	if got := present(t, d, "usage_events", usageNow, usageLater); !slices.Equal(got, []bool{true, true}) {
		t.Errorf("usage events present %v", got)
	}
	// Once the delivery is no longer pending, the next run drops its day.
	if _, err := d.Pool.Exec(ctx, "UPDATE webhook_deliveries SET status = 'succeeded', completed_at = now() WHERE organization_id = $1 AND event_id = $2", tenant, eventPending); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.MaintainPartitions(ctx, at, postgres.DefaultRetention); err != nil {
		t.Fatal(err)
	}
	if got := append(present(t, d, "webhook_events", eventPending, eventLater), present(t, d, "webhook_delivery_attempts", attemptPending)...); !slices.Equal(got, []bool{false, true, false}) {
		t.Errorf("webhook event and attempt of +3 days and event of +6 present: %v, want the day of +3 gone once its delivery finished", got)
	}
	if got := present(t, d, "request_logs", logNow, logSoon, logLater); !slices.Equal(got, []bool{false, false, true}) {
		t.Errorf("request logs of now, +3 and +6 days present: %v, want only +6 (the day ending after the horizon)", got)
	}
	if got := present(t, d, "audit_events", auditNow, auditLater); !slices.Equal(got, []bool{true, true}) {
		t.Errorf("audit events present %v", got)
	}
	if got := present(t, d, "growth_events", growthNow, growthLater); !slices.Equal(got, []bool{true, true}) {
		t.Errorf("growth events present %v", got)
	}
	var organizationsAfter, rollupsAfter int
	if err := d.Pool.QueryRow(ctx, "SELECT (SELECT count(*) FROM organizations), (SELECT count(*) FROM growth_hourly_counts)").Scan(&organizationsAfter, &rollupsAfter); err != nil {
		t.Fatal(err)
	}
	if organizationsAfter != organizations || rollupsAfter != rollups {
		t.Errorf("organizations %d → %d, growth rollups %d → %d", organizations, organizationsAfter, rollups, rollupsAfter)
	}
	newLog, _, _ := appendOnlyRows(t, d, at.Add(5*day), &org)
	if got := present(t, d, "request_logs", newLog); !got[0] {
		t.Error("a request log written 5 days after the new time is not stored")
	}

	// 450 days on: the audit events of the first month (400 days) and the growth events of
	// the first month (396 days) go; the later month's are kept.
	at = now.Add(450 * day)
	if _, _, err := d.MaintainPartitions(ctx, at, postgres.DefaultRetention); err != nil {
		t.Fatal(err)
	}
	if got := present(t, d, "audit_events", auditNow, auditLater); got[0] {
		t.Errorf("audit events of now and +6 days present: %v, want the first gone", got)
	}
	if got := present(t, d, "growth_events", growthNow); got[0] {
		t.Errorf("growth event of 450 days ago present")
	}
	if got := present(t, d, "usage_events", usageNow); got[0] {
		t.Errorf("usage event of 450 days ago present")
	}
	parts, err = d.Partitions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range parts {
		if horizon := at.Add(-map[string]time.Duration{"request_logs": 30 * day, "request_log_bodies": 30 * day, "audit_events": 400 * day, "growth_events": 396 * day,
			"webhook_events": 30 * day, "webhook_deliveries": 30 * day, "webhook_delivery_attempts": 30 * day, "usage_events": 400 * day}[p.Table]); !p.To.After(horizon) {
			t.Errorf("partition %s (to %s) kept past its retention", p.Name, p.To)
		}
	}
}

// TestWebhookRetentionOutlastsRetries: the least webhook event retention is longer than the
// longest a delivery can keep retrying on the production policy's own schedule (each delay
// at most the cap with its jitter, or the longest Retry-After honoured, plus the attempts'
// timeouts), so only a delivery sent again by hand can still be pending when its day is
// past retention (and that day is then kept).
func TestWebhookRetentionOutlastsRetries(t *testing.T) {
	t.Parallel()
	p := webhook.DefaultPolicy(false)
	longest := time.Duration(p.MaxAttempts) * p.Timeout
	for range p.MaxAttempts - 1 {
		longest += max(p.RetryCap*5/4, p.MaxRetryAfter)
	}
	if longest >= postgres.MinWebhookEventRetention {
		t.Errorf("a delivery may retry for %v, not less than the least retention %v", longest, postgres.MinWebhookEventRetention)
	}
}

// TestTimePartitionMigrationKeepsRows: rows stored before migrations 00390 and 00460 are in
// the partitioned tables after them (the old table is their first partition), provider-wide
// audit events and webhook events with their deliveries and attempts included, and the
// growth rollups still follow inserts; the migrations roll back with every row.
func TestTimePartitionMigrationKeepsRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn, d := openUpgradable(t)
	now := time.Now().UTC()
	org := uuid.New()
	partitioned := [][3]uuid.UUID{}
	log, audit, growth := appendOnlyRows(t, d, now, &org)
	partitioned = append(partitioned, [3]uuid.UUID{log, audit, growth})
	tenant, endpoint := tenantRows(t, d)
	event, delivery, attempt, usage := webhookRows(t, d, now, tenant, endpoint, "pending")

	if err := postgres.MigrateDownTo(ctx, dsn, 311); err != nil {
		t.Fatal(err)
	}
	var plain [3]uuid.UUID // written to the plain tables: a provider-wide audit event's organization is NULL
	plain[0], plain[1], plain[2] = idAt(now), idAt(now), idAt(now)
	for _, stmt := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO request_logs (id, organization_id, request_id, occurred_at, principal_type, method, path, status, latency_ms)
		  VALUES ($1, $2, 'req', now(), 'organization', 'GET', '/v1/x', 200, 1)`, []any{plain[0], org}},
		{`INSERT INTO audit_events (id, organization_id, actor_type, action, resource_type, resource_id)
		  VALUES ($1, NULL, 'system', 'thing.created', 'thing', 'x')`, []any{plain[1]}},
		{`INSERT INTO growth_events (id, organization_id, occurred_at, event_name, traffic_type)
		  VALUES ($1, 'org-1', now(), 'page_view', 'public')`, []any{plain[2]}},
	} {
		if _, err := d.Pool.Exec(ctx, stmt.sql, stmt.args...); err != nil {
			t.Fatal(err)
		}
	}
	if err := postgres.Migrate(ctx, dsn, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}

	for _, ids := range append(partitioned, plain) {
		for i, table := range []string{"request_logs", "audit_events", "growth_events"} {
			var partition string
			if err := d.Pool.QueryRow(ctx, "SELECT tableoid::regclass::text FROM "+table+" WHERE id = $1", ids[i]).Scan(&partition); err != nil {
				t.Fatalf("%s %s after the migration: %v", table, ids[i], err)
			}
			if partition != table+"_legacy" {
				t.Errorf("%s %s is in %s, want %s_legacy", table, ids[i], partition, table)
			}
		}
	}
	for table, id := range map[string]uuid.UUID{"webhook_events": event, "webhook_deliveries": delivery, "webhook_delivery_attempts": attempt, "usage_events": usage} {
		var partition string
		if err := d.Pool.QueryRow(ctx, "SELECT tableoid::regclass::text FROM "+table+" WHERE id = $1", id).Scan(&partition); err != nil || partition != table+"_legacy" {
			t.Errorf("%s %s after the migrations: in %q (%v), want %s_legacy", table, id, partition, err, table)
		}
	}
	var stored uuid.UUID
	if err := d.Pool.QueryRow(ctx, "SELECT organization_id FROM audit_events WHERE id = $1", plain[1]).Scan(&stored); err != nil || stored != uuid.Nil {
		t.Errorf("provider-wide audit event stored under %v (%v), want the nil UUID", stored, err)
	}
	// A NULL organization, which v1.1.0 wrote and 00390's trigger stored as the nil UUID until
	// 00620, is refused like any other NULL.
	_, err := d.Pool.Exec(ctx, `INSERT INTO audit_events (id, organization_id, actor_type, action, resource_type, resource_id)
		VALUES ($1, NULL, 'system', 'thing.created', 'thing', 'x')`, idAt(now))
	if pgErr := (*pgconn.PgError)(nil); !errors.As(err, &pgErr) || pgErr.Code != "23502" {
		t.Errorf("a provider-wide audit event with a NULL organization: %v, want a not_null_violation", err)
	}
	var before, after int
	if err := d.Pool.QueryRow(ctx, "SELECT coalesce(sum(events), 0) FROM growth_hourly_counts WHERE dimension = 'event_name'").Scan(&before); err != nil {
		t.Fatal(err)
	}
	appendOnlyRows(t, d, now, &org)
	if err := d.Pool.QueryRow(ctx, "SELECT coalesce(sum(events), 0) FROM growth_hourly_counts WHERE dimension = 'event_name'").Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after != before+1 {
		t.Errorf("growth rollup went from %d to %d events on one insert, want +1", before, after)
	}
}

// TestEventListPrunesPartitions: a list of webhook events filtered by created_after and
// created_before reads only the daily partitions of that window (widened by the hour of
// clock skew), with a custom plan and with the generic plan pgx may cache.
func TestEventListPrunesPartitions(t *testing.T) {
	t.Parallel()
	_, d := openUpgradable(t)
	org, endpoint := tenantRows(t, d)
	now := time.Now().UTC()
	event, _, _, _ := webhookRows(t, d, now, org, endpoint, "succeeded")
	parts, err := d.Partitions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, e := explaining(t, d, &core.Principal{Kind: core.PrincipalOrganization, OrganizationID: org})
	after, before := now.Add(-10*time.Minute), now.Add(10*time.Minute)
	events, _, err := postgres.NewWebhookDeliveryService(d, webhook.DefaultPolicy(true)).ListEvents(ctx,
		core.WebhookEventFilter{CreatedAfter: &after, CreatedBefore: &before, Limit: 10})
	if err != nil || len(events) != 1 || events[0].ID != event {
		t.Fatalf("listed %v, %v; want event %s", events, err, event)
	}
	window := postgres.Partition{From: after.Add(-time.Hour), To: before.Add(time.Hour)}
	for _, x := range e.plans {
		read := 0
		var walk func(n planNode)
		walk = func(n planNode) {
			if i := slices.IndexFunc(parts, func(p postgres.Partition) bool { return p.Name == n.RelationName }); i >= 0 && parts[i].Table == "webhook_events" {
				read++
				if p := parts[i]; !p.From.Before(window.To) || !window.From.Before(p.To) {
					t.Errorf("%s reads %s [%s, %s), outside the window [%s, %s)", x.query, p.Name, p.From, p.To, window.From, window.To)
				}
			}
			for _, c := range n.Plans {
				walk(c)
			}
		}
		walk(x.plan)
		if read == 0 {
			t.Errorf("%s reads no partition of webhook_events", x.query)
		}
	}
	if len(e.plans) == 0 {
		t.Error("no query was explained")
	}
}
