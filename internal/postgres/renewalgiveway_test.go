package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/provider/coreapi/internal/httpapi"
	"github.com/provider/coreapi/internal/postgres"
)

// scriptedAPI is an API busy for its first busy answers, then idle.
type scriptedAPI struct{ busy atomic.Int64 }

func (a *scriptedAPI) Busy() bool { return a.busy.Add(-1) >= 0 }

// TestBillDue_GivesWayToRequests: while the API is busy the run takes batches of 10 (the
// renewals of each share a transaction, hence the instant of their events), each followed by a
// pause, and it renews every subscription however long the API stays busy: it never starves.
// Once the API is idle it takes the rest of its batch at once, without pausing. At a share of
// 1 it does not give way. The API's answers are scripted, and the pauses counted, not slept.
func TestBillDue_GivesWayToRequests(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name         string
		due          int
		busyAnswers  int64
		share        float64
		transactions string // the renewals of each transaction, in order
		pauses       int
	}{
		{"AlwaysBusy", 25, 1 << 40, 0, "[10 10 5]", 3},
		{"BusyThenIdle", 45, 2, 0, "[10 10 25]", 2},
		{"ShareOfOneDoesNotGiveWay", 25, 1 << 40, 1, "[25]", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db, err := postgres.Open(ctx, seedDatabase(t, c.due))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(db.Close)
			db.Events, db.Jobs = httpapi.EventEncoder{}, noJobs{}
			api := &scriptedAPI{}
			api.busy.Store(c.busyAnswers)
			db.Requests, db.Renewals.BusyShare = api, c.share
			var (
				mu     sync.Mutex
				pauses []time.Duration
			)
			db.OnRenewalPause(func(p time.Duration) { mu.Lock(); pauses = append(pauses, p); mu.Unlock() })

			if took, err := db.BillDue(ctx); err != nil || took != c.due {
				t.Fatalf("the run took %d steps (%v), want %d", took, err, c.due)
			}
			var sizes []int
			if err := db.Pool.QueryRow(ctx, `SELECT coalesce(array_agg(n ORDER BY at), '{}') FROM (SELECT created_at AS at, count(*) AS n
				FROM webhook_events WHERE type = 'subscription.renewed' GROUP BY created_at) t`).Scan(&sizes); err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(sizes); got != c.transactions {
				t.Errorf("renewals per transaction %s, want %s", got, c.transactions)
			}
			if len(pauses) != c.pauses {
				t.Errorf("%d pauses, want one after each batch taken while busy: %d", len(pauses), c.pauses)
			}
		})
	}
}

// idleThenBusyAPI is an API idle for its first idle answers, then busy.
type idleThenBusyAPI struct{ idle atomic.Int64 }

func (a *idleThenBusyAPI) Busy() bool { return a.idle.Add(-1) < 0 }

// TestBillDue_GivesWayWithinABatch: a batch begun while the API is idle, which finds it busy
// before one of its statements (its third: the API answers idle to the run's first look and
// to the batch's claim and due check), gives way there: it pauses with its transaction open
// and nothing of it committed, pauses again before each later statement and once after its
// end, and commits every renewal exactly once, all in its one transaction. The API's answers
// are scripted, and the pauses observed, not slept.
func TestBillDue_GivesWayWithinABatch(t *testing.T) {
	t.Parallel()
	const due = 25
	ctx := context.Background()
	db, err := postgres.Open(ctx, seedDatabase(t, due))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	db.Events, db.Jobs = httpapi.EventEncoder{}, noJobs{}
	api := &idleThenBusyAPI{}
	api.idle.Store(3)
	db.Requests, db.Renewals.Concurrency = api, 1
	// At each pause: whether the batch's transaction is open, waiting, and how many renewals
	// are committed.
	type pause struct{ open, committed int }
	var pauses []pause
	db.RenewalPause = func(ctx context.Context, _ time.Duration) {
		var p pause
		if err := db.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction'),
			(SELECT count(*) FROM subscription_renewals)`).Scan(&p.open, &p.committed); err != nil {
			t.Error(err)
		}
		pauses = append(pauses, p)
	}

	if took, err := db.BillDue(ctx); err != nil || took != due {
		t.Fatalf("the run took %d steps (%v), want %d", took, err, due)
	}
	if len(pauses) < 2 {
		t.Fatalf("pauses %v, want one before each statement from the third on and one after the batch", pauses)
	}
	for i, p := range pauses[:len(pauses)-1] {
		if p != (pause{open: 1, committed: 0}) {
			t.Errorf("pause %d of %d: %d transactions open and waiting, %d renewals committed; want the batch's, open, and none", i+1, len(pauses), p.open, p.committed)
		}
	}
	if last := pauses[len(pauses)-1]; last != (pause{open: 0, committed: due}) {
		t.Errorf("the last pause: %d transactions open and waiting, %d renewals committed; want it after the batch's commit", last.open, last.committed)
	}
	var renewals, subscriptions, invoices, transactions int
	if err := db.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM subscription_renewals), (SELECT count(DISTINCT subscription_id) FROM subscription_renewals),
		(SELECT count(*) FROM billing_invoices), (SELECT count(DISTINCT created_at) FROM webhook_events WHERE type = 'subscription.renewed')`).Scan(&renewals, &subscriptions, &invoices, &transactions); err != nil {
		t.Fatal(err)
	}
	if renewals != due || subscriptions != due || invoices != due || transactions != 1 {
		t.Errorf("%d renewals of %d subscriptions, %d invoices, in %d transactions; want %d of each, in one", renewals, subscriptions, invoices, transactions, due)
	}
}

// TestPauseAfter: a batch that took worked while the API is busy is followed by a pause that
// makes it share of the time.
func TestPauseAfter(t *testing.T) {
	for _, c := range []struct {
		worked time.Duration
		share  float64
		want   time.Duration
	}{
		{10 * time.Millisecond, postgres.DefaultRenewalBusyShare, 30 * time.Millisecond},
		{10 * time.Millisecond, 0.5, 10 * time.Millisecond},
		{10 * time.Millisecond, 0.1, 90 * time.Millisecond},
		{10 * time.Millisecond, 1, 0},
		{0, 0.25, 0},
	} {
		if got := postgres.PauseAfter(c.worked, c.share); got != c.want {
			t.Errorf("PauseAfter(%v, %v) = %v, want %v", c.worked, c.share, got, c.want)
		}
	}
}

// TestRenewalSettingsFromEnv: the renewal run's settings as the server reads them, and the
// values refused.
func TestRenewalSettingsFromEnv(t *testing.T) {
	for _, c := range []struct {
		env     map[string]string
		want    postgres.RenewalSettings
		refused bool
	}{
		{env: map[string]string{}, want: postgres.RenewalSettings{}},
		{env: map[string]string{"RENEWAL_CONCURRENCY": "4", "RENEWAL_BUSY_SHARE": "0.5"}, want: postgres.RenewalSettings{Concurrency: 4, BusyShare: 0.5}},
		{env: map[string]string{"RENEWAL_BUSY_SHARE": "1"}, want: postgres.RenewalSettings{BusyShare: 1}},
		{env: map[string]string{"RENEWAL_CONCURRENCY": "0"}, refused: true},
		{env: map[string]string{"RENEWAL_BUSY_SHARE": "0"}, refused: true},
		{env: map[string]string{"RENEWAL_BUSY_SHARE": "1.5"}, refused: true},
		{env: map[string]string{"RENEWAL_BUSY_SHARE": "NaN"}, refused: true},
		{env: map[string]string{"RENEWAL_BUSY_SHARE": "25%"}, refused: true},
	} {
		got, err := postgres.RenewalSettingsFromEnv(func(k string) string { return c.env[k] })
		if c.refused != (err != nil) || (!c.refused && got != c.want) {
			t.Errorf("%v: %+v (%v), want %+v (refused: %v)", c.env, got, err, c.want, c.refused)
		}
	}
}
