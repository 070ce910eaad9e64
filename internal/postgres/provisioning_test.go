package postgres_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/pgtest"
	"github.com/provider/coreapi/internal/postgres"
	"github.com/provider/coreapi/internal/webhook"
)

const (
	seedProductEinvoice = "0193a000-0000-7000-8000-000000000001"
	seedPlanSandbox     = "0193a000-0000-7000-8000-000000000103"
)

func TestProvisioningWorker(t *testing.T) {
	t.Parallel()
	type fixture struct {
		db       *postgres.DB
		services core.Services
		ctx      context.Context // the operator's
		newSub   func(t *testing.T) *core.Subscription
		worker   func() *postgres.ProvisioningWorker
	}
	setup := func(t *testing.T) fixture {
		t.Helper()
		db, err := postgres.Open(context.Background(), pgtest.NewDatabase(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		f := fixture{
			db:       db,
			services: postgres.NewServices(db, devBox(t), webhook.DefaultPolicy(true)),
			ctx:      core.WithPrincipal(context.Background(), &core.Principal{Kind: core.PrincipalOperator, Subject: "dev:operator"}),
		}
		f.newSub = func(t *testing.T) *core.Subscription {
			t.Helper()
			org, err := f.services.Organizations.CreateOrganization(f.ctx, core.OrganizationCreate{
				LegalNameAr: "شركة", LegalNameEn: "Company", DisplayName: "Co", OrganizationType: "standard_customer", Country: "SA"})
			if err != nil {
				t.Fatal(err)
			}
			sub, err := f.services.Subscriptions.CreateSubscription(f.ctx, core.SubscriptionCreate{
				OrganizationID: org.ID.String(), ProductID: seedProductEinvoice, PlanID: seedPlanSandbox})
			if err != nil {
				t.Fatal(err)
			}
			return sub
		}
		f.worker = func() *postgres.ProvisioningWorker {
			return postgres.NewProvisioningWorker(db, slog.New(slog.NewTextHandler(io.Discard, nil)), time.Hour)
		}
		return f
	}
	serviceOf := func(t *testing.T, f fixture, id uuid.UUID) string {
		t.Helper()
		sub, err := f.services.Subscriptions.FindSubscriptionByID(f.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return sub.ServiceStatus
	}
	count := func(t *testing.T, f fixture, query string, args ...any) int {
		t.Helper()
		var n int
		if err := f.db.Pool.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	t.Run("PendingJobSurvivesACrashedWorker", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		sub := f.newSub(t)
		// A worker claims the job and dies before committing: its transaction rolls back.
		tx, err := f.db.Pool.Begin(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var claimed uuid.UUID
		if err := tx.QueryRow(context.Background(), "SELECT id FROM provisioning_jobs WHERE status = 'pending' FOR UPDATE SKIP LOCKED").Scan(&claimed); err != nil {
			t.Fatal(err)
		}
		// While it holds the job, another worker skips it rather than waiting or taking it.
		if n, err := f.worker().WorkDue(context.Background()); err != nil || n != 0 {
			t.Fatalf("a held job was worked: %d, %v", n, err)
		}
		if err := tx.Rollback(context.Background()); err != nil {
			t.Fatal(err)
		}
		if s := serviceOf(t, f, sub.ID); s != core.ServiceProvisioning {
			t.Fatalf("service %s after the crash, want provisioning", s)
		}
		// After a restart, a new worker finds the job and completes it.
		if n, err := f.worker().WorkDue(context.Background()); err != nil || n != 1 {
			t.Fatalf("worked %d jobs, %v; want 1", n, err)
		}
		if s := serviceOf(t, f, sub.ID); s != core.ServiceActive {
			t.Errorf("service %s, want active", s)
		}
		if n, _ := f.worker().WorkDue(context.Background()); n != 0 {
			t.Errorf("a completed job ran again (%d)", n)
		}
	})

	t.Run("WorkersShareTheQueue", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		const subs, workers = 20, 4
		for range subs {
			f.newSub(t)
		}
		var mu sync.Mutex
		total := 0
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				n, err := f.worker().WorkDue(context.Background())
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				total += n
				mu.Unlock()
			})
		}
		wg.Wait()
		if total != subs {
			t.Errorf("workers ran %d jobs for %d subscriptions", total, subs)
		}
		if n := count(t, f, "SELECT count(*) FROM subscriptions WHERE service_status = 'active'"); n != subs {
			t.Errorf("%d active subscriptions, want %d", n, subs)
		}
		if n := count(t, f, "SELECT count(*) FROM provisioning_jobs WHERE status = 'succeeded' AND attempts = 1"); n != subs {
			t.Errorf("%d jobs succeeded at the first attempt, want %d", n, subs)
		}
		if n := count(t, f, "SELECT count(DISTINCT resource_id) FROM audit_events WHERE action = 'subscription.provisioned'"); n != subs {
			t.Errorf("%d subscriptions audited as provisioned, want %d", n, subs)
		}
		if n := count(t, f, "SELECT count(*) FROM audit_events WHERE action = 'subscription.provisioned'"); n != subs {
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
		if n, err := f.worker().WorkDue(context.Background()); err != nil || n != 1 {
			t.Fatalf("worked %d, %v", n, err)
		}
		if s := serviceOf(t, f, sub.ID); s != core.ServiceSuspended {
			t.Errorf("service %s, want suspended", s)
		}
		if n := count(t, f, "SELECT count(*) FROM provisioning_jobs WHERE subscription_id = $1 AND status = 'succeeded'", sub.ID); n != 1 {
			t.Error("the job is not done")
		}
	})

	t.Run("FailedAttemptBacksOffThenFails", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		sub := f.newSub(t)
		other := f.newSub(t)
		if n, err := f.worker().WorkDue(context.Background()); err != nil || n != 2 {
			t.Fatalf("worked %d, %v", n, err)
		}
		// A job naming a subscription outside its organization cannot be provisioned.
		bad := uuid.Must(uuid.NewV7())
		if _, err := f.db.Pool.Exec(context.Background(), `INSERT INTO provisioning_jobs (id, organization_id, subscription_id, status)
			VALUES ($1, $2, $3, 'pending')`, bad, other.OrganizationID, sub.ID); err != nil {
			t.Fatal(err)
		}
		if n, err := f.worker().WorkDue(context.Background()); err != nil || n != 1 {
			t.Fatalf("worked %d, %v; want the failing job once", n, err)
		}
		if n := count(t, f, `SELECT count(*) FROM provisioning_jobs WHERE id = $1 AND status = 'pending' AND attempts = 1
			AND last_error IS NOT NULL AND run_at > now()`, bad); n != 1 {
			t.Error("a failed attempt is not recorded with a backoff")
		}
		if n, _ := f.worker().WorkDue(context.Background()); n != 0 {
			t.Errorf("a job backing off ran again at once (%d)", n)
		}
		if _, err := f.db.Pool.Exec(context.Background(), "UPDATE provisioning_jobs SET attempts = 9, run_at = now() WHERE id = $1", bad); err != nil {
			t.Fatal(err)
		}
		if n, err := f.worker().WorkDue(context.Background()); err != nil || n != 1 {
			t.Fatalf("worked %d, %v", n, err)
		}
		if n := count(t, f, "SELECT count(*) FROM provisioning_jobs WHERE id = $1 AND status = 'failed' AND attempts = 10 AND finished_at IS NOT NULL", bad); n != 1 {
			t.Error("the job did not fail for good after its last attempt")
		}
	})

	t.Run("RunStopsWithItsContext", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		sub := f.newSub(t)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			postgres.NewProvisioningWorker(f.db, slog.New(slog.NewTextHandler(io.Discard, nil)), 10*time.Millisecond).Run(ctx)
		}()
		deadline := time.Now().Add(5 * time.Second)
		for serviceOf(t, f, sub.ID) != core.ServiceActive {
			if time.Now().After(deadline) {
				t.Fatal("Run did not provision the subscription")
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("Run did not return after its context ended")
		}
	})
}
