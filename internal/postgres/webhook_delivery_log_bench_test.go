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
	"github.com/provider/coreapi/internal/webhook"
)

// BenchmarkWebhookDeliveryList times a page of an endpoint's deliveries, with their attempts,
// when a million attempts are stored (250 000 deliveries of four attempts each): the first
// page and a page deep in the list (keyset pages cost the same), unfiltered and filtered by
// outcome. Run it with `go test -run x -bench WebhookDeliveryList ./internal/postgres/`;
// seeding takes a minute or so.
func BenchmarkWebhookDeliveryList(b *testing.B) {
	ctx := context.Background()
	db := openDB(b)
	start := time.Now()
	endpoint := seedWebhookAttempts(b, db, 250_000, 4)
	b.Logf("seeded a million attempts in %v", time.Since(start).Round(time.Millisecond))

	svc := postgres.NewWebhookDeliveryService(db, webhook.DefaultPolicy(true))
	operator := core.WithPrincipal(ctx, &core.Principal{Kind: core.PrincipalOperator})
	// The cursor of a page about 200 000 deliveries deep.
	var deep string
	if err := db.Pool.QueryRow(ctx, "SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY id DESC OFFSET 200000 LIMIT 1", endpoint).Scan(&deep); err != nil {
		b.Fatal(err)
	}
	failed := core.WebhookDeliveryFailed
	for _, bc := range []struct {
		name   string
		cursor *string
		status *string
	}{
		{"FirstPage", nil, nil},
		{"DeepPage", &deep, nil},
		{"FirstPageFailed", nil, &failed},
		{"DeepPageFailed", &deep, &failed},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				page, _, err := svc.ListDeliveries(operator, core.WebhookDeliveryFilter{EndpointID: endpoint, Cursor: bc.cursor, Status: bc.status, Limit: 50})
				if err != nil {
					b.Fatal(err)
				}
				if len(page) != 50 || len(page[0].Attempts) != 4 {
					b.Fatalf("%d deliveries, want a full page with their attempts", len(page))
				}
			}
		})
	}
}

// seedWebhookAttempts COPYs deliveries events, each delivered to one endpoint with attempts
// attempts (one delivery in ten failed, the others succeeded at their last attempt), and
// returns the endpoint's id.
func seedWebhookAttempts(b *testing.B, db *postgres.DB, deliveries, attempts int) uuid.UUID {
	b.Helper()
	ctx := context.Background()
	operator := core.WithPrincipal(ctx, &core.Principal{Kind: core.PrincipalOperator})
	o, err := postgres.NewOrganizationService(db).CreateOrganization(operator, core.OrganizationCreate{
		LegalNameAr: "شركة", LegalNameEn: "Company", DisplayName: "Co", OrganizationType: "standard_customer", Country: "SA"})
	if err != nil {
		b.Fatal(err)
	}
	e, err := postgres.NewWebhookService(db, devBox(b), webhook.DefaultPolicy(true)).CreateWebhookEndpoint(operator, core.WebhookEndpointCreate{
		OrganizationID: o.ID, URL: "https://hooks.example.com/x", EnabledEvents: []string{string(core.EventAPIKeyCreated)}})
	if err != nil {
		b.Fatal(err)
	}
	org, endpoint := o.ID, e.ID
	now := time.Now()
	events := make([][]any, deliveries)
	rows := make([][]any, deliveries)
	tries := make([][]any, 0, deliveries*attempts)
	body := "ok"
	for i := range deliveries {
		at := now.Add(time.Duration(i-deliveries) * time.Second)
		event, delivery := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
		events[i] = []any{event, org, at, "api_key.created", []byte(`{"id":"x"}`)}
		status, lastError := "succeeded", (*string)(nil)
		if i%10 == 0 {
			e := "HTTP 503: unavailable"
			status, lastError = "failed", &e
		}
		rows[i] = []any{delivery, org, at, at, event, endpoint, status, int32(attempts), at, lastError, at}
		for n := 1; n <= attempts; n++ {
			ok := status == "succeeded" && n == attempts
			code, errText := int32(503), &body
			if ok {
				code, errText = 200, nil
			}
			tries = append(tries, []any{uuid.Must(uuid.NewV7()), org, event, delivery, int32(n), at.Add(time.Duration(n) * time.Millisecond), ok, code, int32(40), errText, &body})
		}
	}
	copyRows(b, db, "webhook_events", []string{"id", "organization_id", "created_at", "type", "data"}, events)
	copyRows(b, db, "webhook_deliveries", []string{"id", "organization_id", "created_at", "updated_at", "event_id", "endpoint_id",
		"status", "attempts", "next_attempt_at", "last_error", "completed_at"}, rows)
	copyRows(b, db, "webhook_delivery_attempts", []string{"id", "organization_id", "event_id", "delivery_id", "attempt", "attempted_at",
		"succeeded", "status_code", "latency_ms", "error", "response_body"}, tries)
	// Visibility map and statistics, as autovacuum would leave them.
	if _, err := db.Pool.Exec(ctx, "VACUUM ANALYZE webhook_events, webhook_deliveries, webhook_delivery_attempts"); err != nil {
		b.Fatal(err)
	}
	return endpoint
}

func copyRows(b *testing.B, db *postgres.DB, table string, columns []string, rows [][]any) {
	b.Helper()
	n, err := db.Pool.CopyFrom(context.Background(), pgx.Identifier{table}, columns, pgx.CopyFromRows(rows))
	if err != nil || n != int64(len(rows)) {
		b.Fatal(fmt.Errorf("copy %d rows into %s: %d, %w", len(rows), table, n, err))
	}
}
