package postgres_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/httpapi"
	"github.com/provider/coreapi/internal/jobs"
	"github.com/provider/coreapi/internal/pgtest"
	"github.com/provider/coreapi/internal/postgres"
	"github.com/provider/coreapi/internal/webhook"
)

// noJobs queues nothing: the work stays in the tables of the hand-made queues.
type noJobs struct{}

func (noJobs) InsertProvisioning(context.Context, pgx.Tx, uuid.UUID, uuid.UUID) error { return nil }
func (noJobs) InsertWebhookDelivery(context.Context, pgx.Tx, uuid.UUID, uuid.UUID, uuid.UUID) error {
	return nil
}
func (noJobs) RequeueWebhookDeliveries(context.Context, pgx.Tx, uuid.UUID, []postgres.RequeuedDelivery) error {
	return nil
}
func (noJobs) InsertTaxDocuments(context.Context, pgx.Tx, uuid.UUID, uuid.UUID) error { return nil }
func (noJobs) InsertMany(context.Context, pgx.Tx, postgres.QueuedJobs) error          { return nil }

// openUpgradable opens a database of its own, which a test of a migration's data may roll
// back and forward (MigrateDownTo, Migrate), with events rendered and no jobs queued.
func openUpgradable(t *testing.T) (dsn string, d *postgres.DB) {
	t.Helper()
	dsn = pgtest.NewDatabase(t)
	d, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	d.Events = httpapi.EventEncoder{}
	d.Jobs = noJobs{}
	return dsn, d
}

// TestRiverMigrationCarriesPendingWork: work queued by the hand-made queues before the
// upgrade (a pending provisioning job, a pending webhook delivery) becomes River jobs that the
// new workers run, and the migration rolls back.
func TestRiverMigrationCarriesPendingWork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn, d := openUpgradable(t)
	box := devBox(t)
	services := postgres.NewServices(d, box, webhook.DefaultPolicy(true))
	op := core.WithPrincipal(ctx, &core.Principal{Kind: core.PrincipalOperator, Subject: "dev:operator"})
	var received atomic.Int32
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(recv.Close)

	org, err := services.Organizations.CreateOrganization(op, core.OrganizationCreate{
		LegalNameAr: "شركة", LegalNameEn: "Upgraded", DisplayName: "Up", OrganizationType: "standard_customer", Country: "SA"})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := services.Subscriptions.CreateSubscription(op, core.SubscriptionCreate{
		OrganizationID: org.ID, ProductID: seedProductEinvoice, PlanID: seedPlanSandbox})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := services.Webhooks.CreateWebhookEndpoint(op, core.WebhookEndpointCreate{
		OrganizationID: org.ID, URL: recv.URL, EnabledEvents: []string{"subscription.activated"}})
	if err != nil {
		t.Fatal(err)
	}
	test, err := services.Webhooks.SendWebhookTest(op, ep.ID)
	if err != nil {
		t.Fatal(err)
	}

	// The database as the hand-made queues left it: the provisioning job in its table.
	if err := postgres.MigrateDownTo(ctx, dsn, 140); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Pool.Exec(ctx, `INSERT INTO provisioning_jobs (id, organization_id, subscription_id, status, attempts)
		VALUES ($1, $2, $3, 'pending', 2)`, uuid.Must(uuid.NewV7()), org.ID, sub.ID); err != nil {
		t.Fatal(err)
	}
	if err := postgres.Migrate(ctx, dsn, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	count := func(query string, args ...any) int {
		t.Helper()
		var n int
		if err := d.Pool.QueryRow(ctx, query, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count("SELECT count(*) FROM pg_class WHERE relname IN ('provisioning_jobs', 'webhook_deliveries_due')"); n != 0 {
		t.Errorf("%d of the old queue's table and index left", n)
	}
	if n := count(`SELECT count(*) FROM river_job WHERE kind = 'provision_subscription' AND attempt = 2 AND state = 'available'
		AND args = jsonb_build_object('organization_id', $1::text, 'subscription_id', $2::text)`, org.ID.String(), sub.ID.String()); n != 1 {
		t.Errorf("%d River jobs for the pending provisioning job, want 1", n)
	}
	if n := count(`SELECT count(*) FROM river_job j JOIN webhook_deliveries d ON d.id = (j.args->>'delivery_id')::uuid
		WHERE j.kind = 'deliver_webhook' AND d.event_id = $1 AND d.organization_id = (j.args->>'organization_id')::uuid`, test.EventID); n != 1 {
		t.Errorf("%d River jobs for the pending delivery, want 1", n)
	}

	// The new workers run them.
	queue, err := jobs.New(d, jobs.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Box: box,
		Webhooks: webhook.DefaultPolicy(true), PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	d.Jobs = queue
	if err := queue.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = queue.Stop(context.Background()) })
	deadline := time.Now().Add(10 * time.Second)
	for count("SELECT count(*) FROM webhook_deliveries WHERE status = 'succeeded'") < 2 || // the test event and subscription.activated
		count("SELECT count(*) FROM subscriptions WHERE id = $1 AND service_status = 'active'", sub.ID) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the carried-over work was not done within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := received.Load(); n != 2 {
		t.Errorf("the receiver got %d deliveries, want 2", n)
	}
}
