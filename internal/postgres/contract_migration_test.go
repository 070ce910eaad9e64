package postgres_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/postgres"
)

// TestContractMigrationGivesJobsTheirEvent: migration 00620 gives the delivery jobs v1.2.0
// queued without their event, still waiting to run, their delivery's event, and leaves the
// finished jobs and those of deliveries that are gone; the job then makes its attempt. It
// drops what 00390 and 00460 kept for the releases before v1.3.0, and rolls back.
func TestContractMigrationGivesJobsTheirEvent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn, d := openUpgradable(t)
	tenant, endpoint := tenantRows(t, d)
	event, delivery, _, _ := webhookRows(t, d, time.Now().UTC(), tenant, endpoint, "pending")
	if err := postgres.MigrateDownTo(ctx, dsn, 619); err != nil {
		t.Fatal(err)
	}
	job := func(delivery uuid.UUID, state string) int64 {
		t.Helper()
		var id int64
		if err := d.Pool.QueryRow(ctx, `INSERT INTO river_job (state, args, kind, queue, max_attempts, finalized_at)
			VALUES ($3::river_job_state, jsonb_build_object('organization_id', $1::uuid, 'delivery_id', $2::uuid), 'deliver_webhook', 'webhooks', 25,
			        CASE WHEN $3 = 'completed' THEN now() END)
			RETURNING id`, tenant, delivery, state).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	waiting, finished, orphan := job(delivery, "available"), job(delivery, "completed"), job(uuid.New(), "available")

	if err := postgres.Migrate(ctx, dsn, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	eventOf := func(job int64) string {
		t.Helper()
		var e *string
		if err := d.Pool.QueryRow(ctx, "SELECT args->>'event_id' FROM river_job WHERE id = $1", job).Scan(&e); err != nil {
			t.Fatal(err)
		}
		if e == nil {
			return ""
		}
		return *e
	}
	if got, want := eventOf(waiting), event.String(); got != want {
		t.Errorf("waiting job's event: %q, want %q", got, want)
	}
	for name, id := range map[string]int64{"finished": finished, "gone delivery's": orphan} {
		if got := eventOf(id); got != "" {
			t.Errorf("%s job's event: %q, want none", name, got)
		}
	}
	if a, err := d.StartWebhookAttempt(ctx, tenant, event, delivery, 0); err != nil || a == nil || a.EventID != event {
		t.Errorf("the waiting job's attempt: %+v, %v; want one of event %s", a, err, event)
	}

	var kept int
	check := func(want int) {
		t.Helper()
		if err := d.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM pg_trigger WHERE tgname IN ('audit_events_provider_wide', 'webhook_delivery_attempts_route'))
			+ (SELECT count(*) FROM pg_class WHERE relname IN ('webhook_delivery_attempts_unrouted', 'webhook_events_created_at'))`).Scan(&kept); err != nil {
			t.Fatal(err)
		}
		if kept < want || (want == 0 && kept != 0) {
			t.Errorf("%d of the triggers, partition and index kept for earlier releases, want %d or more", kept, want)
		}
	}
	check(0)
	if err := postgres.MigrateDownTo(ctx, dsn, 619); err != nil {
		t.Fatal(err)
	}
	check(4) // the audit trigger is on the table and each of its partitions
}
