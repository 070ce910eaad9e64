package jobs_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/httpapi"
	"github.com/provider/coreapi/internal/jobs"
	"github.com/provider/coreapi/internal/pgtest"
	"github.com/provider/coreapi/internal/postgres"
	"github.com/provider/coreapi/internal/secretbox"
	"github.com/provider/coreapi/internal/webhook"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var (
	seedProductEinvoice = uuid.MustParse("0193a000-0000-7000-8000-000000000001")
	seedPlanSandbox     = uuid.MustParse("0193a000-0000-7000-8000-000000000103")
)

type fixture struct {
	db       *postgres.DB
	box      *secretbox.Box
	services core.Services
	ctx      context.Context // the operator's
}

func setup(t *testing.T) *fixture {
	t.Helper()
	db, err := postgres.Open(context.Background(), pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	db.Events = httpapi.EventEncoder{}
	box, err := secretbox.New(secretbox.DevelopmentKey())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{db: db, box: box, ctx: core.WithPrincipal(context.Background(), &core.Principal{Kind: core.PrincipalOperator, Subject: "dev:operator"})}
	db.Jobs = f.queue(t) // inserts only until started
	f.services = postgres.NewServices(db, box, webhook.DefaultPolicy(true))
	return f
}

// queue returns a process's job queue over f's database, stopped when t ends.
func (f *fixture) queue(t *testing.T) *jobs.Queue {
	t.Helper()
	q, err := jobs.New(f.db, jobs.Config{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Box: f.box, Webhooks: webhook.DefaultPolicy(true),
		PollInterval: 10 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Stop(context.Background()) })
	return q
}

func (f *fixture) start(t *testing.T) *jobs.Queue {
	t.Helper()
	q := f.queue(t)
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return q
}

func (f *fixture) newSub(t *testing.T) *core.Subscription {
	t.Helper()
	org, err := f.services.Organizations.CreateOrganization(f.ctx, core.OrganizationCreate{
		LegalNameAr: "شركة", LegalNameEn: "Company", DisplayName: "Co", OrganizationType: "standard_customer", Country: "SA"})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := f.services.Subscriptions.CreateSubscription(f.ctx, core.SubscriptionCreate{
		OrganizationID: org.ID, ProductID: seedProductEinvoice, PlanID: seedPlanSandbox})
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

func (f *fixture) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	if err := f.db.Pool.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitFor polls query until it counts want, for at most 10 s.
func (f *fixture) waitFor(t *testing.T, want int, query string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := f.count(t, query, args...)
		if n == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d after 10 s, want %d", query, n, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (f *fixture) serviceOf(t *testing.T, id uuid.UUID) string {
	t.Helper()
	sub, err := f.services.Subscriptions.FindSubscriptionByID(f.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return sub.ServiceStatus
}

const provisioningJobs = "SELECT count(*) FROM river_job WHERE kind = 'provision_subscription' AND args->>'subscription_id' = $1"

func TestProvisioning(t *testing.T) {
	t.Parallel()

	t.Run("QueuedWithTheSubscriptionAndRunOnce", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		sub := f.newSub(t)
		if n := f.count(t, provisioningJobs+" AND state = 'available' AND attempt = 0 AND args->>'organization_id' = $2",
			sub.ID.String(), sub.OrganizationID.String()); n != 1 {
			t.Fatalf("%d available provisioning jobs for the new subscription, want 1", n)
		}
		// A creation that fails (a second live subscription to the product) queues nothing.
		if _, err := f.services.Subscriptions.CreateSubscription(f.ctx, core.SubscriptionCreate{
			OrganizationID: sub.OrganizationID, ProductID: seedProductEinvoice, PlanID: seedPlanSandbox}); core.ErrorCode(err) != core.EConflict {
			t.Fatalf("second subscription: %v, want a conflict", err)
		}
		if n := f.count(t, "SELECT count(*) FROM river_job WHERE kind = 'provision_subscription'"); n != 1 {
			t.Fatalf("%d provisioning jobs after a failed creation, want 1", n)
		}
		if s := f.serviceOf(t, sub.ID); s != core.ServiceProvisioning {
			t.Fatalf("service %s before any worker ran, want provisioning", s)
		}
		f.start(t)
		f.waitFor(t, 1, provisioningJobs+" AND state = 'completed' AND attempt = 1", sub.ID.String())
		if s := f.serviceOf(t, sub.ID); s != core.ServiceActive {
			t.Errorf("service %s, want active", s)
		}
		if n := f.count(t, "SELECT count(*) FROM audit_events WHERE action = 'subscription.provisioned' AND resource_id = $1", sub.ID.String()); n != 1 {
			t.Errorf("%d provisioned audit events, want 1", n)
		}
	})

	t.Run("ProcessesShareTheQueue", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		const subs = 20
		for range subs {
			f.newSub(t)
		}
		for range 3 {
			f.start(t)
		}
		f.waitFor(t, subs, "SELECT count(*) FROM subscriptions WHERE service_status = 'active'")
		f.waitFor(t, subs, "SELECT count(*) FROM river_job WHERE kind = 'provision_subscription' AND state = 'completed' AND attempt = 1")
		if n := f.count(t, "SELECT count(*) FROM audit_events WHERE action = 'subscription.provisioned'"); n != subs {
			t.Errorf("%d provisioned audit events, want %d (one each)", n, subs)
		}
	})

	t.Run("SuspendedWhileWaitingStaysSuspended", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		sub := f.newSub(t)
		if _, err := f.services.Subscriptions.Suspend(f.ctx, sub.ID, "held for review"); err != nil {
			t.Fatal(err)
		}
		f.start(t)
		f.waitFor(t, 1, provisioningJobs+" AND state = 'completed'", sub.ID.String())
		if s := f.serviceOf(t, sub.ID); s != core.ServiceSuspended {
			t.Errorf("service %s, want suspended", s)
		}
	})

	t.Run("FailedAttemptBacksOff", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		sub := f.newSub(t)
		other := f.newSub(t)
		// A job naming a subscription outside its organization cannot be provisioned.
		ctx := context.Background()
		tx, err := f.db.Pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.db.Jobs.InsertProvisioning(ctx, tx, other.OrganizationID, sub.ID); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		f.start(t)
		// The failed attempt is recorded, and the next one waits for its backoff (a second, then
		// two, ...): in two seconds the job runs two or three times, not more.
		bad := provisioningJobs + " AND args->>'organization_id' = $2"
		f.waitFor(t, 1, bad+" AND attempt >= 1 AND max_attempts = 10 AND cardinality(errors) = attempt", sub.ID.String(), other.OrganizationID.String())
		time.Sleep(2 * time.Second)
		var state string
		var attempt int
		if err := f.db.Pool.QueryRow(ctx, "SELECT state, attempt FROM river_job WHERE kind = 'provision_subscription' AND args->>'organization_id' = $1 AND args->>'subscription_id' = $2",
			other.OrganizationID.String(), sub.ID.String()).Scan(&state, &attempt); err != nil {
			t.Fatal(err)
		}
		if state == "completed" || state == "discarded" || attempt < 2 || attempt > 3 {
			t.Errorf("the failing job is %s after %d attempts in about 2 s; want it waiting to retry after 2 or 3", state, attempt)
		}
		f.waitFor(t, 2, "SELECT count(*) FROM subscriptions WHERE service_status = 'active'")
	})

	t.Run("StopHandsBackTheJobInFlight", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		sub := f.newSub(t)
		ctx := context.Background()
		// The worker's transaction waits on the subscription's row, which the test holds.
		lock, err := f.db.Pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer lock.Rollback(ctx) //nolint:errcheck
		if _, err := lock.Exec(ctx, "SELECT 1 FROM subscriptions WHERE id = $1 FOR UPDATE", sub.ID); err != nil {
			t.Fatal(err)
		}
		q := f.start(t)
		f.waitFor(t, 1, provisioningJobs+" AND state = 'running' AND attempt = 1", sub.ID.String())
		f.waitFor(t, 1, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FROM subscriptions%FOR NO KEY UPDATE%'")
		stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := q.Stop(stopCtx); err != nil {
			t.Fatal(err)
		}
		if n := f.count(t, provisioningJobs+" AND state = 'available' AND attempt = 0 AND errors IS NULL", sub.ID.String()); n != 1 {
			t.Fatal("the job in flight at the stop was not handed back untouched")
		}
		if err := lock.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if s := f.serviceOf(t, sub.ID); s != core.ServiceProvisioning {
			t.Fatalf("service %s after the stop, want provisioning", s)
		}
		f.start(t)
		f.waitFor(t, 1, provisioningJobs+" AND state = 'completed' AND attempt = 1", sub.ID.String())
		if s := f.serviceOf(t, sub.ID); s != core.ServiceActive {
			t.Errorf("service %s, want active", s)
		}
	})
}

func TestSweepsArePeriodicJobs(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.start(t)
	// Each runs once when a process starts leading, then on its schedule.
	f.waitFor(t, 1, "SELECT count(*) FROM river_job WHERE kind = 'sweep_idempotency_keys' AND state = 'completed'")
	f.waitFor(t, 1, "SELECT count(*) FROM river_job WHERE kind = 'maintain_partitions' AND state = 'completed'")
}

// TestInsertMany: a renewal batch's jobs (tax documents and first delivery attempts) are
// queued in its transaction, each with the arguments InsertTaxDocuments and
// InsertWebhookDelivery give it; rolled back, none is.
func TestInsertMany(t *testing.T) {
	t.Parallel()
	f := setup(t)
	q := f.queue(t)
	ctx := context.Background()
	org, invoice, event, delivery := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	batch := postgres.QueuedJobs{
		TaxDocuments: []postgres.InvoiceOfOrganization{{OrganizationID: org, InvoiceID: invoice}},
		Deliveries:   []postgres.QueuedDelivery{{OrganizationID: org, EventID: event, DeliveryID: delivery}},
	}
	for _, commit := range []bool{false, true} {
		tx, err := f.db.Pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := q.InsertMany(ctx, tx, batch); err != nil {
			t.Fatal(err)
		}
		end := tx.Rollback
		if commit {
			end = tx.Commit
		}
		if err := end(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.count(t, `SELECT count(*) FROM river_job WHERE kind = 'issue_tax_documents'
		AND args->>'organization_id' = $1 AND args->>'invoice_id' = $2`, org.String(), invoice.String()); n != 1 {
		t.Errorf("%d tax document jobs, want 1", n)
	}
	if n := f.count(t, `SELECT count(*) FROM river_job WHERE kind = 'deliver_webhook'
		AND args->>'organization_id' = $1 AND args->>'event_id' = $2 AND args->>'delivery_id' = $3`, org.String(), event.String(), delivery.String()); n != 1 {
		t.Errorf("%d delivery jobs, want 1", n)
	}
	if err := q.InsertMany(ctx, nil, postgres.QueuedJobs{}); err != nil {
		t.Errorf("nothing to queue: %v", err)
	}
}
