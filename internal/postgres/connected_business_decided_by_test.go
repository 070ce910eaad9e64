package postgres_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/postgres"
	"github.com/provider/coreapi/internal/webhook"
)

// TestDecidedByMigrationKeepsTheOperatorsDecisions: businesses suspended or closed before
// migration 00170 take the actor of the audit event that last updated them, and one without
// such an event is held as the operator's; active businesses have none. The migration rolls
// back and forward again.
func TestDecidedByMigrationKeepsTheOperatorsDecisions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn, d := openUpgradable(t)
	services := postgres.NewServices(d, devBox(t), webhook.DefaultPolicy(true))
	operator := core.WithPrincipal(ctx, &core.Principal{Kind: core.PrincipalOperator, Subject: "dev:operator"})
	org, err := services.Organizations.CreateOrganization(operator, core.OrganizationCreate{
		LegalNameAr: "شركة", LegalNameEn: "Platform", DisplayName: "P", OrganizationType: "reseller", Country: "SA"})
	if err != nil {
		t.Fatal(err)
	}
	platform := core.WithPrincipal(ctx, &core.Principal{Kind: core.PrincipalOrganization, OrganizationID: org.ID, Subject: "test:platform"})
	business := func(ref string, by context.Context, status string) uuid.UUID {
		t.Helper()
		cb, err := services.Businesses.CreateConnectedBusiness(platform, core.ConnectedBusinessCreate{ExternalReference: ref, DisplayName: ref, LegalNameEn: ref})
		if err != nil {
			t.Fatal(err)
		}
		if status != "" {
			if _, err := services.Businesses.UpdateConnectedBusiness(by, cb.ID, core.ConnectedBusinessUpdate{
				LifecycleStatus: core.Field[string]{Set: true, Value: &status}}); err != nil {
				t.Fatal(err)
			}
		}
		return cb.ID
	}
	byPlatform := business("by-platform", platform, "suspended")
	byOperator := business("by-operator", operator, "closed")
	active := business("active", platform, "")
	unaudited := business("unaudited", platform, "")

	if err := postgres.MigrateDownTo(ctx, dsn, 169); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Pool.Exec(ctx, "UPDATE connected_businesses SET lifecycle_status = 'closed' WHERE id = $1", unaudited); err != nil {
		t.Fatal(err)
	}
	if err := postgres.Migrate(ctx, dsn, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[uuid.UUID]string{byPlatform: "organization", byOperator: "operator", unaudited: "operator", active: ""} {
		var got *string
		if err := d.Pool.QueryRow(ctx, "SELECT lifecycle_decided_by FROM connected_businesses WHERE id = $1", id).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if (got == nil) != (want == "") || (got != nil && *got != want) {
			t.Errorf("business %s: decided by %v, want %q", id, got, want)
		}
	}
}
