package httpapi_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/internal/apitest"
)

// lockHolder is a connection of its own to env's database (the server's small pool stays the
// server's), on which a test holds row locks to arrange an interleaving, and watches who waits
// for them: never with sleeps as synchronisation.
type lockHolder struct {
	conn *pgx.Conn
	tx   pgx.Tx
}

// holdLocks opens a transaction on a connection of its own and runs lock in it.
func holdLocks(t testing.TB, env *apitest.Env, lock string, args ...any) *lockHolder {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.ConnectConfig(ctx, env.Pool.Config().ConnConfig.Copy())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, lock, args...); err != nil {
		t.Fatal(err)
	}
	return &lockHolder{conn: conn, tx: tx}
}

// waitForWaiters waits until n backends of the database wait for a lock.
func (h *lockHolder) waitForWaiters(t testing.TB, n int) {
	t.Helper()
	h.waitUntil(t, nil, n)
}

// waitUntil waits until done is closed or n backends of the database wait for a lock.
func (h *lockHolder) waitUntil(t testing.TB, done <-chan struct{}, n int) {
	t.Helper()
	deadline := time.Now().Add(eventually)
	for {
		select {
		case <-done:
			return
		default:
		}
		var waiting int
		// The activity statistics are read once per transaction unless cleared.
		if _, err := h.tx.Exec(context.Background(), "SELECT pg_stat_clear_snapshot()"); err != nil {
			t.Fatal(err)
		}
		if err := h.tx.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d backends waiting for a lock after %s, want %d", waiting, eventually, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// release ends the transaction and so its locks.
func (h *lockHolder) release(t testing.TB) {
	t.Helper()
	if err := h.tx.Rollback(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestBillingRaces_ChangePlanDuringAClockAdvance: a test clock's advance takes every billing
// step of the organization in one transaction, so the credit balance a renewal takes stays
// locked until the advance ends. A change of plan of another subscription that has locked its
// row before the advance reached it must not deadlock with it (one of them answered 503): it
// runs wholly before or wholly after the advance, and both succeed.
func TestBillingRaces_ChangePlanDuringAClockAdvance(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	// B: paid monthly, renews 2025-04-01. A: renews at the end of its 30-day trial, 2025-03-31.
	d := dunnedSelection(t, env)
	d.payInFull(t, env, dunningTotal)
	org, token, clock, b := d.org, d.token, d.clock, d.sub
	a := createSubscription(t, env, token, org, productAddress, planAddressPreview)
	mustStatus(t, subscriptionAction(env, token, a.ID, "select-plan", `{"plan_id":"`+planAddressStandardTrial+`"}`), http.StatusOK)
	waitForService(t, env, token, a.ID, "active") // no provisioning job holds a connection below
	// The organization has a credit balance: every invoice issued takes it under a lock.
	env.Exec(`INSERT INTO customer_credit_balances (organization_id, currency, balance, updated_at) VALUES ($1, 'SAR', 1000000, now())`, org)

	// The test holds B's row, so the change of plan locks it first (it queues first) and the
	// advance, having renewed A, waits behind it.
	hold := holdLocks(t, env, "SELECT 1 FROM subscriptions WHERE id = $1 FOR UPDATE", b)
	var changed, advanced *apitest.Response
	var wg sync.WaitGroup
	wg.Go(func() {
		changed = subscriptionAction(env, token, b, "change-plan", `{"plan_id":"`+planEinvoiceGrowthAnnual+`"}`)
	})
	hold.waitForWaiters(t, 1)
	wg.Go(func() { advanced = advanceRequest(env, token, clock, "2025-04-02T00:00:00Z", nil) })
	hold.waitForWaiters(t, 2) // and the advance waits too, for B or for the change
	hold.release(t)
	wg.Wait()
	mustStatus(t, changed, http.StatusOK)
	mustStatus(t, advanced, http.StatusOK)
	if n := env.Count(`SELECT count(*) FROM subscription_renewals WHERE subscription_id = $1`, a.ID); n != 1 {
		t.Errorf("A renewed %d times, want once", n)
	}
	if s := getSubscription(t, env, token, b); s.PlanID != planEinvoiceGrowthAnnual {
		t.Errorf("B's plan %s, want the annual one", s.PlanID)
	}
	// What the invoices took from the balance is in its ledger, once each.
	if n := env.Count(`SELECT count(*) FROM customer_credit_balances b WHERE b.organization_id = $1 AND b.balance = 1000000 +
		(SELECT coalesce(sum(amount), 0) FROM customer_credit_transactions t WHERE t.organization_id = b.organization_id)`, org); n != 1 {
		t.Errorf("the credit balance disagrees with its ledger")
	}
}

// TestBillingRaces_RecoveryRacesADeclaration: paying a written-off invoice in full resumes its
// subscription's service, degraded while the product has an incident open. A declaration that
// commits while the payment is under way must find the service started (and degrade it) or be
// found by it: the service never ends up active under an open incident. The test holds the
// webhook endpoint that receives subscription.recovered, so the payment waits after deciding
// the service status, and the declaration is sent then.
func TestBillingRaces_RecoveryRacesADeclaration(t *testing.T) {
	t.Parallel()
	env := apitest.New(t) // its own: an incident concerns every subscription of the product
	d := dunnedSelection(t, env)
	advance(t, env, d.token, d.clock, dunningWriteOff)
	d.wantStatuses(t, env, "written_off", "paused", "suspended")
	endpoint := createEndpoint(t, env, d.token, endpointBody(d.org, "https://hooks.example.com/recovered", "subscription.recovered"))["id"]

	hold := holdLocks(t, env, "SELECT 1 FROM webhook_endpoints WHERE id = $1 FOR UPDATE", endpoint)
	var paid, declared *apitest.Response
	var wg sync.WaitGroup
	wg.Go(func() { paid = d.pay(env, d.token, dunningTotal, "pm_sandbox_success") })
	hold.waitForWaiters(t, 1)
	declaring := make(chan struct{})
	wg.Go(func() {
		defer close(declaring)
		declared = openIncidentAs(env, apitest.OperatorToken, productEinvoice, "Racing a recovery")
	})
	// The declaration either completes now or waits for the payment: either way it has begun.
	hold.waitUntil(t, declaring, 2)
	hold.release(t)
	wg.Wait()
	mustStatus(t, paid, http.StatusCreated)
	mustStatus(t, declared, http.StatusCreated)
	d.wantStatuses(t, env, "current", "active", "degraded")
}

// TestBillingRaces_UsageDuringAClockAdvance: a product operation is recorded at its
// organization's billing time, the test clock's. One made while an advance is closing the
// clock's period must be billed: either it happened before the advance (and the renewal counts
// it) or after (at the advanced time, in the period the renewal opens). Recorded at the time
// before the advance but committed after the renewal counted, it would be billed by no invoice.
// The test holds the endpoint receiving subscription.renewed, so the advance waits after its
// renewal counted the usage, and the operation is sent then.
func TestBillingRaces_UsageDuringAClockAdvance(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	d := dunnedSelection(t, env)
	d.payInFull(t, env, dunningTotal)
	mustStatus(t, subscriptionAction(env, d.token, d.sub, "change-plan", `{"plan_id":"`+planEinvoicePayAsYouGo+`"}`), http.StatusOK)
	mustStatus(t, d.generate(t, env), http.StatusCreated) // one operation before
	endpoint := createEndpoint(t, env, d.token, endpointBody(d.org, "https://hooks.example.com/renewed", "subscription.renewed"))["id"]

	hold := holdLocks(t, env, "SELECT 1 FROM webhook_endpoints WHERE id = $1 FOR UPDATE", endpoint)
	var advanced, generated *apitest.Response
	var wg sync.WaitGroup
	wg.Go(func() { advanced = advanceRequest(env, d.token, d.clock, "2025-04-02T00:00:00Z", nil) })
	hold.waitForWaiters(t, 1)
	generating := make(chan struct{})
	wg.Go(func() {
		defer close(generating)
		generated = d.generate(t, env)
	})
	hold.waitUntil(t, generating, 2) // done, or waiting for the advance
	hold.release(t)
	wg.Wait()
	mustStatus(t, advanced, http.StatusOK)
	mustStatus(t, generated, http.StatusCreated)

	// Every operation of March (the closed period) is on its renewal invoice, and the other
	// one, if any, lies in April's.
	billed := int64(0)
	for _, inv := range invoicesOf(t, env, d.sub) {
		for _, l := range inv.Lines {
			if l.ComponentType == "per_unit" {
				billed += l.Quantity
			}
		}
	}
	closed := env.Count(`SELECT count(*) FROM usage_events WHERE organization_id = $1 AND occurred_at < '2025-04-01T09:30:00Z'`, d.org)
	if billed != int64(closed) {
		t.Errorf("%d operations recorded in the closed period, %d billed", closed, billed)
	}
	if n := env.Count(`SELECT count(*) FROM usage_events WHERE organization_id = $1`, d.org); n != 2 {
		t.Errorf("%d operations recorded, want 2", n)
	}
}
