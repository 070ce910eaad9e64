package postgres_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/httpapi"
	"github.com/provider/coreapi/internal/postgres"
)

// TestEntitlementCacheForgetsThisProcessesChanges isolates what the HTTP tests cannot: a
// cache that hears no notification at all still obeys, on its very next decision, every
// change its own process made (DB.credentialsChanged after commit), and keeps what it
// decided otherwise (so it does cache).
func TestEntitlementCacheForgetsThisProcessesChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, operator := openOperatorDB(t)
	org, err := postgres.NewOrganizationService(db).CreateOrganization(operator, core.OrganizationCreate{
		LegalNameAr: "شركة", LegalNameEn: "Company", DisplayName: "Co", OrganizationType: "standard_customer", Country: "SA",
		LifecycleStatus: "active", VerificationStatus: "verified",
	})
	if err != nil {
		t.Fatal(err)
	}
	// A provisioning subscription to einvoice, as CreateSubscription leaves it (which would
	// need the job queue to be running).
	sub := uuid.Must(uuid.NewV7())
	if _, err := db.Pool.Exec(ctx, `INSERT INTO subscriptions (id, organization_id, product_id, plan_id, commercial_status,
		service_status, billing_status, started_at, billing_anchor_at)
		VALUES ($1, $2, '0193a000-0000-7000-8000-000000000001', '0193a000-0000-7000-8000-000000000103', 'active',
		'provisioning', 'current', now(), now())`, sub, org.ID); err != nil {
		t.Fatal(err)
	}
	cache := postgres.NewCredentialCache(db, time.Hour, slog.New(slog.NewTextHandler(io.Discard, nil)))
	cache.HearNothing()
	use := core.Access{Act: core.ActUseProduct, Environment: "sandbox", Product: "einvoice"}
	decide := func(step, want string) {
		t.Helper()
		got := ""
		if err := db.Entitle(ctx, org.ID, use); err != nil {
			got = core.ErrorCode(err)
		}
		if got != want {
			t.Fatalf("%s: decision %q, want %q", step, got, want)
		}
	}
	decide("provisioning", core.ESubscriptionInactive)
	if err := db.ProvisionSubscription(ctx, org.ID, sub); err != nil {
		t.Fatal(err)
	}
	decide("provisioned by this process, next decision", "")
	if _, err := postgres.NewSubscriptionService(db).Suspend(operator, sub, ""); err != nil {
		t.Fatal(err)
	}
	decide("suspended by this process, next decision", core.ESubscriptionInactive)
	// A change nobody announces to this cache is not seen until the cache is emptied: what
	// it decided is cached, and notifications are how other processes' changes arrive.
	if _, err := db.Pool.Exec(ctx, `UPDATE subscriptions SET service_status = 'active', suspended_at = NULL, suspended_by = NULL
		WHERE id = $1`, sub); err != nil {
		t.Fatal(err)
	}
	decide("changed unannounced", core.ESubscriptionInactive)
}

// openOperatorDB is openDB with the webhook events encoder a server sets, and a context
// acting as the operator.
func openOperatorDB(t *testing.T) (*postgres.DB, context.Context) {
	t.Helper()
	db := openDB(t)
	db.Events = httpapi.EventEncoder{}
	db.Jobs = noJobs{} // invoices issued here queue their tax documents; no process works them
	return db, core.WithPrincipal(context.Background(), &core.Principal{Kind: core.PrincipalOperator, Subject: "dev:operator"})
}
