package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/provider/coreapi/internal/core"
)

// TestSweepWebhookEvents: events past the retention go, a batch at a time, with their
// deliveries; newer ones and those with a pending delivery stay.
func TestSweepWebhookEvents(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	org, err := f.services.Organizations.CreateOrganization(f.ctx, core.OrganizationCreate{
		LegalNameAr: "شركة", LegalNameEn: "Company", DisplayName: "Co", OrganizationType: "standard_customer", Country: "SA"})
	if err != nil {
		t.Fatal(err)
	}
	endpoint, err := f.services.Webhooks.CreateWebhookEndpoint(f.ctx, core.WebhookEndpointCreate{
		OrganizationID: org.ID, URL: "http://127.0.0.1:9/hooks", EnabledEvents: []string{string(core.EventAPIKeyCreated)}})
	if err != nil {
		t.Fatal(err)
	}
	for range 4 { // each publishes api_key.created, delivered (pending: no worker runs) to the endpoint
		if _, err := f.services.APIKeys.CreateAPIKey(f.ctx, core.APIKeyCreate{
			OrganizationID: org.ID, Name: "k", Environment: "sandbox", Scopes: []string{"organizations:read"}}); err != nil {
			t.Fatal(err)
		}
	}
	const retention = 30 * 24 * time.Hour
	// Three events are past the retention, their deliveries finished; one of them keeps a
	// pending delivery. The fourth is recent.
	if _, err := f.db.Pool.Exec(ctx, `UPDATE webhook_events SET created_at = now() - interval '31 days'
		WHERE organization_id = $1 AND id IN (SELECT id FROM webhook_events WHERE organization_id = $1 ORDER BY id LIMIT 3)`, org.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.Pool.Exec(ctx, `UPDATE webhook_deliveries SET status = 'failed', completed_at = now()
		WHERE endpoint_id = $1 AND event_id IN (SELECT id FROM webhook_events WHERE organization_id = $2 ORDER BY id LIMIT 2)`, endpoint.ID, org.ID); err != nil {
		t.Fatal(err)
	}
	events := "SELECT count(*) FROM webhook_events WHERE organization_id = $1"
	before := f.count(t, events, org.ID)

	n, err := f.db.SweepWebhookEvents(ctx, retention, 1)
	if err != nil || n != 1 {
		t.Fatalf("first sweep: %d, %v; want 1 (its batch)", n, err)
	}
	if n, err = f.db.SweepWebhookEvents(ctx, retention, 10); err != nil || n != 1 {
		t.Fatalf("second sweep: %d, %v; want the other finished old event", n, err)
	}
	if n, err = f.db.SweepWebhookEvents(ctx, retention, 10); err != nil || n != 0 {
		t.Fatalf("third sweep: %d, %v; want nothing left to sweep", n, err)
	}
	if got := f.count(t, events, org.ID); got != before-2 {
		t.Errorf("%d events left, want %d", got, before-2)
	}
	if got := f.count(t, "SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1", endpoint.ID); got != 2 {
		t.Errorf("%d deliveries left, want the pending old one and the recent one", got)
	}
	if got := f.count(t, "SELECT count(*) FROM webhook_deliveries d LEFT JOIN webhook_events e ON e.id = d.event_id WHERE e.id IS NULL"); got != 0 {
		t.Errorf("%d deliveries outlived their event", got)
	}
}
