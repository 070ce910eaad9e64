package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestDunningStepsOnce: runs of the wall-clock worker racing over a subscription whose invoice
// fell due ten days ago (so its overdue step and all three retries are due) take each dunning
// step exactly once: one overdue, two failed retries, one write-off, each with one event and
// one audit record, and the invoice written off once.
func TestDunningStepsOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, operator := openOperatorDB(t)
	org := newRenewalOrganization(t, db, operator)
	now := time.Now().UTC()
	sub := overdueSubscription(t, db, org, now.AddDate(0, 0, -10)) // renews in 20 days
	invoice := uuid.Must(uuid.NewV7())
	if _, err := db.Pool.Exec(ctx, `INSERT INTO billing_invoices (id, organization_id, subscription_id, plan_id, period_start, period_end, lines,
		subtotal, discount, tax, total, currency, status, tax_document_status, issued_at, due_at)
		VALUES ($1, $2, $3, $4, '2025-01-15', '2025-02-14', '[]', 100, 0, 15, 115, 'SAR', 'issued', 'pending', $5, $6)`,
		invoice, org, sub, renewalPlan, now.AddDate(0, 0, -24), now.AddDate(0, 0, -10)); err != nil {
		t.Fatal(err)
	}

	taken := runsAtOnce(t, db, 3)
	if got := taken[0] + taken[1] + taken[2]; got != 4 {
		t.Errorf("the runs took %v steps, want 4 in all (overdue, three retries)", taken)
	}
	if n := countRows(t, db, `SELECT count(*) FROM subscriptions WHERE id = $1 AND billing_status = 'written_off' AND commercial_status = 'paused'
		AND service_status = 'suspended' AND suspended_by = 'billing' AND dunning_invoice_id = $2 AND dunning_retries = 3 AND dunning_next_at IS NULL`, sub, invoice); n != 1 {
		t.Errorf("the subscription is not written off")
	}
	if n := countRows(t, db, `SELECT count(*) FROM billing_invoices WHERE id = $1 AND status = 'uncollectible'`, invoice); n != 1 {
		t.Errorf("the invoice is not uncollectible")
	}
	for action, want := range map[string]int{"subscription.overdue": 1, "subscription.payment_retry_failed": 2, "subscription.written_off": 1} {
		if n := countRows(t, db, `SELECT count(*) FROM webhook_events WHERE type = $1 AND data->>'id' = $2`, action, sub.String()); n != want {
			t.Errorf("%d %s events, want %d", n, action, want)
		}
		if n := countRows(t, db, `SELECT count(*) FROM audit_events WHERE action = $1 AND resource_id = $2`, action, sub.String()); n != want {
			t.Errorf("%d %s audit records, want %d", n, action, want)
		}
	}
	if n := countRows(t, db, `SELECT count(*) FROM audit_events WHERE action = 'billing_invoice.uncollectible' AND resource_id = $1`, invoice.String()); n != 1 {
		t.Errorf("%d write-offs of the invoice audited, want 1", n)
	}
	// No payment method on file: the retries charged nothing.
	if n := countRows(t, db, `SELECT count(*) FROM billing_payments WHERE invoice_id = $1`, invoice); n != 0 {
		t.Errorf("%d payments without a payment method on file", n)
	}
	if n, err := db.BillDue(ctx); err != nil || n != 0 {
		t.Errorf("a further run took %d steps (%v), want none: written off, nothing is due", n, err)
	}
}
