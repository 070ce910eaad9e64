package postgres_test

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/httpapi"
	"github.com/provider/coreapi/internal/pgtest"
	"github.com/provider/coreapi/internal/postgres"
)

// TestRenewalBatch_SameAsStepByStep: the wall-clock run with renewal batches and the run that
// takes every step in a transaction of its own leave the same rows, byte for byte but for the
// ids and instants each generates, over two copies of one seed: plain rated renewals (usage
// across every tier, and none), a subscription three periods behind, a suspended service, the
// end of a trial, webhook endpoints that do and do not receive each event, and the steps the
// batch leaves to the per-step path (the end of a cancelled service, an organization with a
// credit balance, a dunning step). The jobs queued are the same too.
func TestRenewalBatch_SameAsStepByStep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn, _ := seedRenewalCases(t)
	copyName := copyDatabase(t, dsn)

	// The batch's renewals share a transaction, hence one instant of their events; steps of
	// their own each have their own.
	const transactions = `SELECT count(DISTINCT created_at) FROM webhook_events WHERE type = 'subscription.renewed'`
	const renewals = `SELECT count(*) FROM webhook_events WHERE type = 'subscription.renewed'`
	run := func(database string, stepByStep bool) (map[uuid.UUID]string, *recordingJobs) {
		db, err := postgres.Open(ctx, dsn, func(c *pgxpool.Config) { c.ConnConfig.Database = database })
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		jobs := &recordingJobs{queued: map[string]int{}}
		db.Events, db.Jobs = httpapi.EventEncoder{}, jobs
		if stepByStep {
			db.RenewStepByStep()
		}
		if _, err := db.BillDue(ctx); err != nil {
			t.Fatalf("BillDue (step by step: %v): %v", stepByStep, err)
		}
		if tx, n := countRows(t, db, transactions), countRows(t, db, renewals); (tx < n) == stepByStep {
			t.Fatalf("step by step: %v; %d renewals in %d transactions", stepByStep, n, tx)
		}
		return billingRows(t, db), jobs
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	batched, batchJobs := run(cfg.Database, false)
	stepped, stepJobs := run(copyName, true)

	if len(batched) != len(stepped) {
		t.Fatalf("%d subscriptions with batches, %d step by step", len(batched), len(stepped))
	}
	for id, want := range stepped {
		if got := batched[id]; got != want {
			t.Errorf("subscription %s:\nwith batches: %s\nstep by step: %s", id, got, want)
		}
	}
	if fmt.Sprint(batchJobs.queued) != fmt.Sprint(stepJobs.queued) {
		t.Errorf("jobs queued with batches %v, step by step %v", batchJobs.queued, stepJobs.queued)
	}
	if batchJobs.queued["tax_documents"] == 0 || batchJobs.queued["webhook_delivery"] == 0 {
		t.Errorf("jobs queued %v: the seed should queue tax documents and deliveries", batchJobs.queued)
	}
}

// TestRenewalBatch_LockedAndFailingSteps: a subscription locked by someone else is skipped by
// the batch and renewed by the next run; a renewal that fails (its period already recorded)
// fails alone, after its batch falls back to steps of their own: every other subscription is
// renewed exactly once, and the failing one not at all.
func TestRenewalBatch_LockedAndFailingSteps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := seedDatabase(t, 5)
	db, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	db.Events, db.Jobs = httpapi.EventEncoder{}, noJobs{}
	subs := subscriptionIDs(t, db)
	locked, failing := subs[0], subs[1]
	if _, err := db.Pool.Exec(ctx, `INSERT INTO subscription_renewals (organization_id, subscription_id, period_start, period_end, renewed_at)
		SELECT organization_id, id, renews_at::date, renews_at::date, now() FROM subscriptions WHERE id = $1`, failing); err != nil {
		t.Fatal(err)
	}
	holder, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Exec(ctx, `SELECT 1 FROM subscriptions WHERE id = $1 FOR UPDATE`, locked); err != nil {
		t.Fatal(err)
	}

	took, err := db.BillDue(ctx)
	if err == nil || took != len(subs)-2 {
		t.Errorf("the run took %d steps (%v), want %d and the failing one's error", took, err, len(subs)-2)
	}
	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if took, _ := db.BillDue(ctx); took != 1 {
		t.Errorf("the next run took %d steps, want the one that was locked", took)
	}
	for _, sub := range subs {
		want := 1
		if sub == failing {
			want = 0
		}
		if n := countRows(t, db, `SELECT count(*) FROM billing_invoices WHERE subscription_id = $1`, sub); n != want {
			t.Errorf("subscription %s: %d invoices, want %d", sub, n, want)
		}
		if n := countRows(t, db, `SELECT count(*) FROM webhook_events WHERE type = 'subscription.renewed' AND data->>'id' = $1`, sub.String()); n != want {
			t.Errorf("subscription %s: %d subscription.renewed events, want %d", sub, n, want)
		}
	}
}

// seedDatabase is a new database with the renewal benchmark's plan and n subscriptions on it,
// each with 9 units of usage, due an hour ago.
func seedDatabase(t *testing.T, n int) string {
	t.Helper()
	dsn := pgtest.NewDatabase(t)
	seedRenewals(t, dsn, n)
	return dsn
}

// seedRenewalCases seeds, besides three rated renewals (one without usage), one subscription
// of the seeded Growth plan per case of TestRenewalBatch_SameAsStepByStep, and returns the
// database's dsn (no connection left open, so it can be copied) and the cases.
func seedRenewalCases(t *testing.T) (string, map[string]uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	dsn := seedDatabase(t, 3)
	db, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	operator := core.WithPrincipal(ctx, &core.Principal{Kind: core.PrincipalOperator, Subject: "dev:operator"})
	now := time.Now().UTC().Truncate(time.Second)
	cases := map[string]uuid.UUID{}
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := db.Pool.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	rated := subscriptionIDs(t, db)
	exec(`DELETE FROM usage_events WHERE organization_id = (SELECT organization_id FROM subscriptions WHERE id = $1)`, rated[0])
	// Endpoints of another rated organization: each event reaches those subscribed to it, and
	// the deprecated alias only those that do not also name invoice.issued.
	for _, events := range [][]string{{"invoice.issued", "subscription.renewed"}, {"billing_invoice.issued"}, {"invoice.issued", "billing_invoice.issued"}} {
		exec(`INSERT INTO webhook_endpoints (id, organization_id, url, enabled_events, secret, status)
			SELECT $1, organization_id, 'https://example.com/hook', $2, '\x00', 'enabled' FROM subscriptions WHERE id = $3`, uuid.Must(uuid.NewV7()), events, rated[1])
	}
	exec(`INSERT INTO webhook_endpoints (id, organization_id, url, enabled_events, secret, status, disabled_reason)
		SELECT $1, organization_id, 'https://example.com/off', '{invoice.issued}', '\x00', 'disabled', 'by hand' FROM subscriptions WHERE id = $2`, uuid.Must(uuid.NewV7()), rated[1])

	cases["three periods behind"] = overdueSubscription(t, db, newRenewalOrganization(t, db, operator), now.AddDate(0, -3, -1))
	cases["suspended"] = overdueSubscription(t, db, newRenewalOrganization(t, db, operator), now.AddDate(0, -1, -1))
	exec(`UPDATE subscriptions SET service_status = 'suspended', suspended_by = 'operator', suspended_at = billing_anchor_at WHERE id = $1`, cases["suspended"])
	cases["trial end"] = overdueSubscription(t, db, newRenewalOrganization(t, db, operator), now.AddDate(0, -1, 0).Add(-time.Hour))
	exec(`UPDATE subscriptions SET billing_anchor_at = renews_at WHERE id = $1`, cases["trial end"])
	cases["service end"] = overdueSubscription(t, db, newRenewalOrganization(t, db, operator), now.AddDate(0, -1, -1))
	exec(`UPDATE subscriptions SET commercial_status = 'cancelled', cancelled_by = 'organization', service_ends_at = renews_at, renews_at = NULL WHERE id = $1`, cases["service end"])
	cases["credit balance"] = overdueSubscription(t, db, newRenewalOrganization(t, db, operator), now.AddDate(0, -1, -1))
	exec(`INSERT INTO customer_credit_balances (organization_id, currency, balance, updated_at)
		SELECT organization_id, 'SAR', 5000, now() FROM subscriptions WHERE id = $1`, cases["credit balance"])
	cases["dunning"] = overdueSubscription(t, db, newRenewalOrganization(t, db, operator), now.AddDate(0, -1, 1))
	exec(`INSERT INTO billing_invoices (id, organization_id, subscription_id, plan_id, period_start, period_end, lines,
		subtotal, discount, tax, total, currency, status, tax_document_status, issued_at, due_at)
		SELECT $1, organization_id, id, plan_id, '2025-01-15', '2025-02-14', '[]', 100, 0, 15, 115, 'SAR', 'issued', 'pending', $2, $2
		FROM subscriptions WHERE id = $3`, uuid.Must(uuid.NewV7()), now.AddDate(0, 0, -2), cases["dunning"])
	return dsn, cases
}

// subscriptionIDs are the ids of the subscriptions of db, in id order.
func subscriptionIDs(t *testing.T, db *postgres.DB) []uuid.UUID {
	t.Helper()
	rows, err := db.Pool.Query(context.Background(), `SELECT id FROM subscriptions ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// billingRows is, by subscription, everything a billing step writes of it and its
// organization (the subscription, its renewals and invoices, the organization's audit trail,
// webhook events with the endpoints they are delivered to, and credit ledger), as JSON in which
// every uuid and every instant is replaced by its rank of first appearance: two runs compare
// equal when they wrote the same values and the same equalities among the generated ones.
func billingRows(t *testing.T, db *postgres.DB) map[uuid.UUID]string {
	t.Helper()
	rows, err := db.Pool.Query(context.Background(), `SELECT s.id, jsonb_build_object(
		'subscription', to_jsonb(s),
		'renewals', (SELECT jsonb_agg(to_jsonb(r) ORDER BY r.period_start) FROM subscription_renewals r
		             WHERE r.organization_id = s.organization_id AND r.subscription_id = s.id),
		'invoices', (SELECT jsonb_agg(to_jsonb(i) ORDER BY i.period_start, i.id) FROM billing_invoices i
		             WHERE i.organization_id = s.organization_id AND i.subscription_id = s.id),
		'audit', (SELECT jsonb_agg(to_jsonb(a) ORDER BY a.id) FROM audit_events a WHERE a.organization_id = s.organization_id),
		'events', (SELECT jsonb_agg(jsonb_build_object('event', to_jsonb(e), 'endpoints',
		               (SELECT jsonb_agg(d.endpoint_id ORDER BY d.endpoint_id) FROM webhook_deliveries d
		                WHERE d.organization_id = e.organization_id AND d.event_id = e.id)) ORDER BY e.id)
		           FROM webhook_events e WHERE e.organization_id = s.organization_id),
		'credit', (SELECT jsonb_agg(to_jsonb(c) ORDER BY c.id) FROM customer_credit_transactions c WHERE c.organization_id = s.organization_id)
	)::text FROM subscriptions s`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[uuid.UUID]string{}
	for rows.Next() {
		var id uuid.UUID
		var text string
		if err := rows.Scan(&id, &text); err != nil {
			t.Fatal(err)
		}
		out[id] = byFirstAppearance(text)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

var generated = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}(:\d{2})?)`)

// byFirstAppearance replaces each uuid and instant of text by its rank of first appearance.
func byFirstAppearance(text string) string {
	rank := map[string]string{}
	return generated.ReplaceAllStringFunc(text, func(s string) string {
		if r, ok := rank[s]; ok {
			return r
		}
		rank[s] = fmt.Sprintf("<%d>", len(rank))
		return rank[s]
	})
}

// recordingJobs counts the jobs queued, by kind.
type recordingJobs struct {
	mu     sync.Mutex
	queued map[string]int
}

func (j *recordingJobs) add(kind string, n int) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if n > 0 {
		j.queued[kind] += n
	}
	return nil
}

func (j *recordingJobs) InsertProvisioning(context.Context, pgx.Tx, uuid.UUID, uuid.UUID) error {
	return j.add("provisioning", 1)
}

func (j *recordingJobs) InsertWebhookDelivery(context.Context, pgx.Tx, uuid.UUID, uuid.UUID, uuid.UUID) error {
	return j.add("webhook_delivery", 1)
}

func (j *recordingJobs) RequeueWebhookDeliveries(_ context.Context, _ pgx.Tx, _ uuid.UUID, d []postgres.RequeuedDelivery) error {
	return j.add("webhook_delivery_requeued", len(d))
}

func (j *recordingJobs) InsertTaxDocuments(context.Context, pgx.Tx, uuid.UUID, uuid.UUID) error {
	return j.add("tax_documents", 1)
}

func (j *recordingJobs) InsertMany(_ context.Context, _ pgx.Tx, jobs postgres.QueuedJobs) error {
	_ = j.add("tax_documents", len(jobs.TaxDocuments))
	return j.add("webhook_delivery", len(jobs.Deliveries))
}
