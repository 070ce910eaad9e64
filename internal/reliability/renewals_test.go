//go:build reliability

package reliability_test

import (
	"fmt"
	"net/http"
	"syscall"
	"testing"
	"time"
)

// TestRenewalsThreeProcessesAndAKill makes many subscriptions six months overdue at once,
// lets the renewal runs of three processes (every 200 ms each) race over them, SIGKILLs one
// process in the middle of it and starts another. Afterwards, checked in the database: every
// subscription has exactly one invoice per period, six each, every invoice belongs to a
// recorded renewal (a step cut by the kill left nothing), and nothing is due any more.
func TestRenewalsThreeProcessesAndAKill(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	fast := "RENEWAL_INTERVAL=200ms"
	procs := []*server{startServer(t, c.dsn(), "", fast), startServer(t, c.dsn(), "", fast), startServer(t, c.dsn(), "", fast)}
	db := c.pool(t)
	client := &http.Client{Timeout: 60 * time.Second}

	// Monthly subscriptions (Growth: 29900 + 15 % VAT a month), made six months overdue in one
	// statement so every process finds them due at once.
	const subs, periods = 90, 6
	for i := range subs {
		org := createOrg(t, procs[i%3], fmt.Sprintf("Renewing %d", i), "standard_customer")
		body := `{"organization_id":"` + org + `","product_id":"` + einvoiceProduct + `","plan_id":"0193a000-0000-7000-8000-000000000101"}`
		if r := call(client, http.MethodPost, procs[(i+1)%3].url("/v1/subscriptions"), orgToken(org), body, nil); r.status != http.StatusCreated {
			t.Fatalf("create subscription: %d %s", r.status, r.body)
		}
	}
	if _, err := db.Exec(t.Context(), `UPDATE subscriptions SET started_at = started_at - interval '6 months',
		billing_anchor_at = billing_anchor_at - interval '6 months', renews_at = renews_at - interval '6 months'`); err != nil {
		t.Fatal(err)
	}

	// Kill one process once the runs are under way, and start another in its place.
	deadline := time.Now().Add(time.Minute)
	for count(t, db, "SELECT count(*) FROM subscription_renewals") < subs/2 {
		if time.Now().After(deadline) {
			t.Fatal("fewer than half a period renewed after a minute")
		}
		time.Sleep(5 * time.Millisecond)
	}
	procs[0].signal(syscall.SIGKILL)
	atKill := count(t, db, "SELECT count(*) FROM subscription_renewals")
	if atKill >= subs*periods {
		t.Fatalf("every renewal was done (%d) before the kill: nothing was cut", atKill)
	}
	procs[0] = startServer(t, c.dsn(), "", fast)

	deadline = time.Now().Add(2 * time.Minute)
	for count(t, db, "SELECT count(*) FROM subscription_billing_steps WHERE due_at <= now()") > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("billing steps still due after 2 minutes (%d renewals)", count(t, db, "SELECT count(*) FROM subscription_renewals"))
		}
		time.Sleep(50 * time.Millisecond)
	}

	if n := count(t, db, `SELECT count(*) FROM (SELECT subscription_id, period_start FROM billing_invoices
		GROUP BY subscription_id, period_start HAVING count(*) > 1) d`); n != 0 {
		t.Errorf("%d periods invoiced more than once", n)
	}
	if n := count(t, db, `SELECT count(*) FROM subscriptions s WHERE (SELECT count(*) FROM billing_invoices i
		WHERE i.subscription_id = s.id AND i.total = 34385) <> $1`, periods); n != 0 {
		t.Errorf("%d subscriptions without exactly %d invoices of 29900 + 4485 VAT", n, periods)
	}
	if n := count(t, db, `SELECT count(*) FROM billing_invoices i WHERE NOT EXISTS (
		SELECT 1 FROM subscription_renewals r WHERE r.invoice_id = i.id AND r.period_start = i.period_start)`); n != 0 {
		t.Errorf("%d invoices without their renewal", n)
	}
	if n := count(t, db, "SELECT count(*) FROM subscription_renewals"); n != subs*periods {
		t.Errorf("%d renewals, want %d", n, subs*periods)
	}
	if n := count(t, db, `SELECT count(*) FROM subscriptions WHERE renews_at <= now() OR renews_at > now() + interval '1 month'`); n != 0 {
		t.Errorf("%d subscriptions whose renews_at is not the next renewal", n)
	}
	if n := count(t, db, `SELECT count(*) FROM webhook_events WHERE type = 'subscription.renewed'`); n != subs*periods {
		t.Errorf("%d subscription.renewed events, want %d", n, subs*periods)
	}
	t.Logf("renewal figures: %d subscriptions x %d periods over 3 processes; one SIGKILLed after %d renewals and replaced; each period invoiced exactly once",
		subs, periods, atKill)
}
