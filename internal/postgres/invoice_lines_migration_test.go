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

// TestInvoiceLinesMigrationAddsUp: invoices stored before migration 00250, whose lines had
// only a component type, a description and an amount, gain each line's period, quantity,
// unit amount and tax, and the lines' taxes add up to the invoice's exactly; they open their
// plan selection and nothing is paid on them. The migration rolls back and forward again.
func TestInvoiceLinesMigrationAddsUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn, d := openUpgradable(t)
	services := postgres.NewServices(d, devBox(t), webhook.DefaultPolicy(true))
	operator := core.WithPrincipal(ctx, &core.Principal{Kind: core.PrincipalOperator, Subject: "dev:operator"})
	org, err := services.Organizations.CreateOrganization(operator, core.OrganizationCreate{
		LegalNameAr: "شركة", LegalNameEn: "Buyer", DisplayName: "B", OrganizationType: "standard_customer", Country: "SA"})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := services.Subscriptions.CreateSubscription(operator, core.SubscriptionCreate{
		OrganizationID: org.ID, ProductID: core.OnboardingProductID, PlanID: core.OnboardingPlanID})
	if err != nil {
		t.Fatal(err)
	}
	annual := uuid.MustParse("0193a000-0000-7000-8000-000000000102") // setup fee waived by a discount
	sel, err := services.Subscriptions.SelectPlan(operator, sub.ID, annual)
	if err != nil || sel.Invoice == nil {
		t.Fatalf("select-plan: %v %+v", err, sel)
	}

	if err := postgres.MigrateDownTo(ctx, dsn, 249); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Pool.Exec(ctx, `UPDATE billing_invoices SET lines = (SELECT jsonb_agg(jsonb_build_object(
		'component_type', l->'component_type', 'description', l->'description', 'amount', l->'amount') ORDER BY n)
		FROM jsonb_array_elements(lines) WITH ORDINALITY AS x(l, n)) WHERE id = $1`, sel.Invoice.ID); err != nil {
		t.Fatal(err)
	}
	if err := postgres.Migrate(ctx, dsn, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}

	inv, err := services.Invoices.FindInvoice(operator, sel.Invoice.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !inv.OpensSelection || inv.AmountPaid != 0 || len(inv.Lines) != len(sel.Invoice.Lines) {
		t.Fatalf("migrated invoice %+v", inv)
	}
	var amount, tax int64
	for i, l := range inv.Lines {
		amount += l.Amount
		tax += l.Tax
		if l.Quantity != 1 || l.UnitAmount != l.Amount || l.Tax != sel.Invoice.Lines[i].Tax ||
			!l.PeriodStart.Equal(inv.PeriodStart) || !l.PeriodEnd.Equal(inv.PeriodEnd) {
			t.Errorf("line %d migrated to %+v, issued as %+v", i, l, sel.Invoice.Lines[i])
		}
	}
	if amount != inv.Subtotal-inv.Discount || tax != inv.Tax {
		t.Errorf("lines add up to %d with tax %d; invoice %d - %d with tax %d", amount, tax, inv.Subtotal, inv.Discount, inv.Tax)
	}
}
