package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/postgres"
)

// The seeded Growth (monthly) plan of the e-invoice product: recurring fee 29900 SAR.
const (
	renewalProduct = "0193a000-0000-7000-8000-000000000001"
	renewalPlan    = "0193a000-0000-7000-8000-000000000101"
)

// newRenewalOrganization creates an organization for the renewal tests.
func newRenewalOrganization(t *testing.T, db *postgres.DB, operator context.Context) uuid.UUID {
	t.Helper()
	org, err := postgres.NewOrganizationService(db).CreateOrganization(operator, core.OrganizationCreate{
		LegalNameAr: "شركة", LegalNameEn: "Renewals", DisplayName: "Renewals", OrganizationType: "standard_customer", Country: "SA",
	})
	if err != nil {
		t.Fatal(err)
	}
	return org.ID
}

// overdueSubscription inserts a running monthly subscription of org whose cycle began at
// anchor and whose first renewal is a month later (long past by the wall clock).
func overdueSubscription(t *testing.T, db *postgres.DB, org uuid.UUID, anchor time.Time) uuid.UUID {
	t.Helper()
	id := uuid.Must(uuid.NewV7())
	if _, err := db.Pool.Exec(context.Background(), `INSERT INTO subscriptions (id, organization_id, product_id, plan_id, commercial_status,
		service_status, billing_status, started_at, billing_anchor_at, renews_at, provisioned_at)
		VALUES ($1, $2, $3, $4, 'active', 'active', 'current', $5, $5, $6, $5)`, id, org, renewalProduct, renewalPlan, anchor, anchor.AddDate(0, 1, 0)); err != nil {
		t.Fatal(err)
	}
	return id
}

func countRows(t *testing.T, db *postgres.DB, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := db.Pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// runsAtOnce starts n renewal runs (DB.BillDue) at once, as n processes would, and returns
// how many steps each took; a run that fails fails t.
func runsAtOnce(t *testing.T, db *postgres.DB, n int) []int {
	t.Helper()
	var wg sync.WaitGroup
	taken := make([]int, n)
	for i := range taken {
		wg.Go(func() {
			took, err := db.BillDue(context.Background())
			if err != nil {
				t.Errorf("run %d: %v", i, err)
			}
			taken[i] = took
		})
	}
	wg.Wait()
	return taken
}

// periodsSince counts the renewals a monthly cycle anchored at anchor has had by now.
func periodsSince(anchor, now time.Time) int {
	n := 0
	for k := 1; !anchor.AddDate(0, k, 0).After(now); k++ {
		n++
	}
	return n
}

// TestBillDue: the wall-clock renewal run catches an overdue subscription up one period at a
// time, one invoice per period with the period's arithmetic; it leaves alone organizations on
// a test clock and selections awaiting their first payment, and a second run takes nothing.
// Several runs at once (as several processes run them) still take each period once.
func TestBillDue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, operator := openOperatorDB(t)
	anchor := time.Date(2025, 1, 15, 10, 0, 0, 0, time.UTC)

	clocked := newRenewalOrganization(t, db, operator)
	awaiting := newRenewalOrganization(t, db, operator)
	subs := []uuid.UUID{ // on the wall clock
		overdueSubscription(t, db, newRenewalOrganization(t, db, operator), anchor),
		overdueSubscription(t, db, newRenewalOrganization(t, db, operator), anchor.Add(time.Hour)),
	}
	onClock := overdueSubscription(t, db, clocked, anchor)
	if _, err := postgres.NewTestClockService(db).CreateTestClock(operator, clocked, anchor.AddDate(0, 0, 1)); err != nil {
		t.Fatal(err)
	}
	// A selection whose first invoice is unpaid: it does not renew until the invoice is paid.
	unpaid := overdueSubscription(t, db, awaiting, anchor)
	invoice := uuid.Must(uuid.NewV7())
	if _, err := db.Pool.Exec(ctx, `INSERT INTO billing_invoices (id, organization_id, subscription_id, plan_id, period_start, period_end, lines,
		subtotal, discount, tax, total, currency, status, tax_document_status, issued_at, opens_selection)
		VALUES ($1, $2, $3, $4, '2025-01-15', '2025-02-14', '[]', 100, 0, 15, 115, 'SAR', 'issued', 'pending', $5, true)`, invoice, awaiting, unpaid, renewalPlan, anchor); err != nil {
		t.Fatal(err)
	}

	// Three runs at once.
	taken := runsAtOnce(t, db, 3)
	periods := periodsSince(anchor, time.Now())
	if got := taken[0] + taken[1] + taken[2]; got != 2*periods {
		t.Errorf("the runs took %v steps, want %d in all (2 subscriptions x %d periods)", taken, 2*periods, periods)
	}
	for _, sub := range subs {
		if n := countRows(t, db, `SELECT count(*) FROM billing_invoices WHERE subscription_id = $1`, sub); n != periods {
			t.Errorf("subscription %s: %d invoices, want %d", sub, n, periods)
		}
		if n := countRows(t, db, `SELECT count(DISTINCT period_start) FROM billing_invoices WHERE subscription_id = $1
			AND subtotal = 29900 AND discount = 0 AND tax = 4485 AND total = 34385 AND status = 'issued'
			AND period_end = (period_start + interval '1 month' - interval '1 day')::date`, sub); n != periods {
			t.Errorf("subscription %s: %d invoices of distinct whole months at 29900 + 4485 VAT, want %d", sub, n, periods)
		}
		if n := countRows(t, db, `SELECT count(*) FROM subscription_renewals r JOIN billing_invoices i ON i.id = r.invoice_id
			AND i.period_start = r.period_start WHERE r.subscription_id = $1`, sub); n != periods {
			t.Errorf("subscription %s: %d renewals recorded with their invoice, want %d", sub, n, periods)
		}
		if n := countRows(t, db, `SELECT count(*) FROM subscriptions WHERE id = $1 AND renews_at > now() AND renews_at <= now() + interval '1 month'`, sub); n != 1 {
			t.Errorf("subscription %s: renews_at is not the next renewal after now", sub)
		}
		if n := countRows(t, db, `SELECT count(*) FROM webhook_events WHERE type = 'subscription.renewed' AND data->>'id' = $1`, sub.String()); n != periods {
			t.Errorf("subscription %s: %d subscription.renewed events, want %d", sub, n, periods)
		}
	}
	for what, sub := range map[string]uuid.UUID{"on a test clock": onClock, "awaiting its first payment": unpaid} {
		if n := countRows(t, db, `SELECT count(*) FROM subscription_renewals WHERE subscription_id = $1`, sub); n != 0 {
			t.Errorf("the subscription %s renewed %d times", what, n)
		}
	}
	if n, err := db.BillDue(ctx); err != nil || n != 0 {
		t.Errorf("a second run took %d steps (%v), want none", n, err)
	}

	// Paid, the selection renews at the next run.
	if _, err := db.Pool.Exec(ctx, `UPDATE billing_invoices SET status = 'paid', paid_at = now(), amount_paid = total WHERE id = $1`, invoice); err != nil {
		t.Fatal(err)
	}
	if n, err := db.BillDue(ctx); err != nil || n != periods {
		t.Errorf("after the payment the run took %d steps (%v), want %d", n, err, periods)
	}
}

// TestBillDue_WorkersAndRunsAtOnce: two runs at once, each taking up to four batches at a time
// on four connections (here each read is one batch, which the two runs' claims share between
// them), renew every period of every subscription exactly once; a subscription
// whose row someone else holds (as a request does) is skipped without waiting, and the next
// run renews it.
func TestBillDue_WorkersAndRunsAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, operator := openOperatorDB(t)
	db.Renewals.Concurrency = 4
	anchor := time.Now().UTC().AddDate(0, -2, -1).Truncate(time.Second)
	periods := periodsSince(anchor, time.Now())
	subs := make([]uuid.UUID, 24)
	for i := range subs {
		subs[i] = overdueSubscription(t, db, newRenewalOrganization(t, db, operator), anchor.Add(time.Duration(i)*time.Second))
	}
	held, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Rollback(ctx) //nolint:errcheck // committed or rolled back below
	if _, err := held.Exec(ctx, `SELECT 1 FROM subscriptions WHERE id = $1 FOR UPDATE`, subs[0]); err != nil {
		t.Fatal(err)
	}

	taken := runsAtOnce(t, db, 2)
	if got, want := taken[0]+taken[1], (len(subs)-1)*periods; got != want {
		t.Errorf("the runs took %v steps, want %d in all (%d subscriptions not held x %d periods)", taken, want, len(subs)-1, periods)
	}
	wantRenewals := func(sub uuid.UUID, want int) {
		t.Helper()
		if n := countRows(t, db, `SELECT count(*) FROM subscription_renewals WHERE subscription_id = $1`, sub); n != want {
			t.Errorf("subscription %s: %d renewals, want %d", sub, n, want)
		}
		if n := countRows(t, db, `SELECT count(*) FROM billing_invoices WHERE subscription_id = $1`, sub); n != want {
			t.Errorf("subscription %s: %d invoices, want %d", sub, n, want)
		}
	}
	for _, sub := range subs[1:] {
		wantRenewals(sub, periods)
	}
	wantRenewals(subs[0], 0) // skipped while held

	if err := held.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := db.BillDue(ctx); err != nil || n != periods {
		t.Errorf("once released, the run took %d steps (%v), want %d", n, err, periods)
	}
	wantRenewals(subs[0], periods)
}
