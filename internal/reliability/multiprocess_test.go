//go:build reliability

package reliability_test

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestThreeProcessesOneDatabase runs three server processes on one database and a mixed
// load across all of them at once: idempotent creates raced on every process, a spend
// limit consumed from every process, a rate-limited key hammered on every process, and
// subscriptions whose provisioning jobs the three workers share; once straight to PostgreSQL and
// once through PgBouncer in transaction mode.
func TestThreeProcessesOneDatabase(t *testing.T) {
	t.Parallel()
	forEachRoute(t, threeProcessesOneDatabase)
}

func threeProcessesOneDatabase(t *testing.T, c *cluster, env []string) {
	procs := []*server{startServer(t, c.dsn(), "", env...), startServer(t, c.dsn(), "", env...), startServer(t, c.dsn(), "", env...)}
	db := c.pool(t)
	client := &http.Client{Timeout: 60 * time.Second}

	// Idempotency: every key is sent to all three processes at the same moment, and each
	// sender retries while the key is busy: one organization per key, one answer per key.
	t.Run("Idempotency", func(t *testing.T) {
		t.Parallel()
		const keys = 40
		var inProgress atomic.Int64
		for k := range keys {
			key := fmt.Sprintf("multi-%03d", k)
			ids := make([]string, len(procs))
			var wg sync.WaitGroup
			for i, p := range procs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 200 {
						r := call(client, http.MethodPost, p.url("/v1/organizations"), operator, orgBody(key), http.Header{"Idempotency-Key": {key}})
						if r.status == http.StatusConflict && r.code() == "idempotency_request_in_progress" {
							inProgress.Add(1)
							time.Sleep(10 * time.Millisecond)
							continue
						}
						if r.status != http.StatusCreated {
							t.Errorf("%s on process %d: %d %v %s", key, i, r.status, r.err, r.body)
							return
						}
						ids[i] = r.json()["id"].(string)
						return
					}
				}()
			}
			wg.Wait()
			if ids[0] == "" || ids[0] != ids[1] || ids[1] != ids[2] {
				t.Errorf("%s: the processes answered %v", key, ids)
			}
		}
		if n := count(t, db, "SELECT count(*) FROM organizations WHERE legal_name_en LIKE 'multi-%'"); n != keys {
			t.Errorf("%d organizations for %d keys", n, keys)
		}
		t.Logf("idempotency figures: %d keys x 3 processes; %d answers were 409 in progress (retried)", keys, inProgress.Load())
	})

	// Spend limits are exact across processes: the counter is a row in PostgreSQL.
	t.Run("SpendLimitExact", func(t *testing.T) {
		t.Parallel()
		org := createOrg(t, procs[0], "Spender", "standard_customer")
		const limit = 25
		put := call(client, http.MethodPut, procs[1].url("/v1/spend-controls/address"), orgToken(org),
			fmt.Sprintf(`{"organization_id":%q,"warning_threshold_percent":80,"monthly_budget_minor_units":null,"hard_operation_limit":%d,"notification_recipients":[],"enabled":true}`, org, limit), nil)
		if put.status != http.StatusOK {
			t.Fatalf("put spend control: %d %s", put.status, put.body)
		}
		var ok, refused atomic.Int64
		var wg sync.WaitGroup
		for i := range 12 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := procs[i%3]
				for range 6 {
					r := call(client, http.MethodPost, p.url("/v1/address/resolve-short"), orgToken(org), `{"short_address":"RRRD2929","language":"en"}`, nil)
					switch {
					case r.status == http.StatusOK:
						ok.Add(1)
					case r.status == http.StatusTooManyRequests && r.code() == "spend_limit_reached":
						refused.Add(1)
					default:
						t.Errorf("resolve: %d %v %s", r.status, r.err, r.body)
					}
				}
			}()
		}
		wg.Wait()
		if ok.Load() != limit || refused.Load() != 72-limit {
			t.Errorf("%d operations allowed and %d refused; want exactly %d allowed of 72", ok.Load(), refused.Load(), limit)
		}
		t.Logf("spend figures: 72 operations from 12 clients over 3 processes, limit %d: %d allowed, %d refused 429", limit, ok.Load(), refused.Load())
	})

	// Rate limits are per process (token buckets in memory, README): each process refuses a
	// burst beyond its own bucket, and three processes together allow about three buckets.
	t.Run("RateLimitPerProcess", func(t *testing.T) {
		t.Parallel()
		org := createOrg(t, procs[0], "Limited", "standard_customer")
		r := call(client, http.MethodPost, procs[0].url("/v1/api-keys"), operator,
			fmt.Sprintf(`{"organization_id":%q,"name":"strict","environment":"sandbox","scopes":["organizations:read"],"rate_limit_policy":"strict"}`, org), nil)
		if r.status != http.StatusCreated {
			t.Fatalf("create key: %d %s", r.status, r.body)
		}
		key := r.json()["full_key"].(string)
		// Each process is sent requests until it refuses one (at most maxPerProcess): how many
		// it allowed before does not depend on how fast the machine is, only on its bucket.
		const maxPerProcess = 200 // the strict policy: 10/s, burst 20
		allowed := make([]atomic.Int64, len(procs))
		sent := make([]atomic.Int64, len(procs))
		refused := make([]atomic.Bool, len(procs))
		start := time.Now()
		var wg sync.WaitGroup
		for i, p := range procs {
			for range 4 {
				wg.Go(func() {
					for !refused[i].Load() && sent[i].Add(1) <= maxPerProcess {
						r := call(client, http.MethodGet, p.url("/v1/organizations/"+org), key, "", nil)
						switch {
						case r.status == http.StatusOK:
							allowed[i].Add(1)
						case r.status == http.StatusTooManyRequests && r.code() == "rate_limited":
							refused[i].Store(true)
						default:
							t.Errorf("get: %d %v %s", r.status, r.err, r.body)
						}
					}
				})
			}
		}
		wg.Wait()
		elapsed := time.Since(start)
		ceiling := int64(20 + 10*elapsed.Seconds() + 1)
		var total int64
		for i := range allowed {
			n := allowed[i].Load()
			total += n
			if n < 20 || n > ceiling || !refused[i].Load() {
				t.Errorf("process %d allowed %d in %v (refused one: %v); want its own bucket: at least the burst of 20, at most %d, then a refusal",
					i, n, elapsed, refused[i].Load(), ceiling)
			}
		}
		if total <= ceiling {
			t.Errorf("the three processes allowed %d together: the limit looks global, the README says per process", total)
		}
		t.Logf("rate-limit figures: strict key, each process sent requests until its first refusal, in %v: allowed %d / %d / %d (one bucket allows at most %d)",
			elapsed.Round(time.Millisecond), allowed[0].Load(), allowed[1].Load(), allowed[2].Load(), ceiling)
	})

	// Provisioning jobs: subscriptions created through every process; the three workers
	// share the queue and each job runs exactly once.
	t.Run("ProvisioningJobs", func(t *testing.T) {
		t.Parallel()
		const subs = 30
		ids := make([]string, 0, subs)
		for i := range subs {
			org := createOrg(t, procs[i%3], fmt.Sprintf("Subscriber %d", i), "standard_customer")
			r := call(client, http.MethodPost, procs[(i+1)%3].url("/v1/subscriptions"), orgToken(org), subscriptionBody(org), nil)
			if r.status != http.StatusCreated {
				t.Fatalf("create subscription: %d %s", r.status, r.body)
			}
			ids = append(ids, r.json()["id"].(string))
		}
		// Only this subtest's jobs: the others running beside it (PaymentsAppliedOnce) subscribe too.
		const ownJobs = "SELECT count(*) FROM river_job WHERE kind = 'provision_subscription' AND args->>'subscription_id' = ANY($1::text[])"
		deadline := time.Now().Add(30 * time.Second)
		for count(t, db, ownJobs+" AND state <> 'completed'", ids) > 0 {
			if time.Now().After(deadline) {
				t.Fatal("provisioning jobs still pending after 30 s")
			}
			time.Sleep(50 * time.Millisecond)
		}
		for _, id := range ids {
			if n := count(t, db, "SELECT count(*) FROM subscriptions WHERE id = $1 AND service_status = 'active'", id); n != 1 {
				t.Errorf("subscription %s is not active", id)
			}
			if n := count(t, db, "SELECT count(*) FROM audit_events WHERE resource_id = $1 AND action = 'subscription.provisioned'", id); n != 1 {
				t.Errorf("subscription %s provisioned %d times", id, n)
			}
		}
		if n := count(t, db, ownJobs+" AND state = 'completed' AND attempt = 1", ids); n != subs {
			t.Errorf("%d of %d jobs succeeded at their first attempt", n, subs)
		}
		t.Logf("provisioning figures: %d subscriptions over 3 processes, each provisioned exactly once", subs)
	})
	// Payments: one invoice paid from every process at once, each payment sent to all three
	// with its Idempotency-Key (retried while the key is busy): every key answers once, and
	// no payment is applied twice or beyond the invoice's total.
	t.Run("PaymentsAppliedOnce", func(t *testing.T) {
		t.Parallel()
		org := createOrg(t, procs[0], "Payer", "standard_customer")
		token := orgToken(org)
		sub := call(client, http.MethodPost, procs[1].url("/v1/subscriptions"), token, subscriptionBody(org), nil)
		if sub.status != http.StatusCreated {
			t.Fatalf("subscribe: %d %s", sub.status, sub.body)
		}
		sel := call(client, http.MethodPost, procs[2].url("/v1/subscriptions/"+sub.json()["id"].(string)+"/select-plan"), token,
			`{"plan_id":"0193a000-0000-7000-8000-000000000101"}`, nil) // growth monthly: 91885 SAR minor units
		if sel.status != http.StatusOK {
			t.Fatalf("select-plan: %d %s", sel.status, sel.body)
		}
		invoice := sel.json()["invoice"].(map[string]any)["id"].(string)
		const keys, each = 6, 20000 // four fit in 91885, two are refused
		answers := make([][3]int, keys)
		var wg sync.WaitGroup
		for k := range keys {
			for i, p := range procs {
				wg.Go(func() {
					for range 200 {
						r := call(client, http.MethodPost, p.url("/v1/invoices/"+invoice+"/payments"), token,
							fmt.Sprintf(`{"amount":%d,"payment_method":"pm_sandbox_success"}`, each), http.Header{"Idempotency-Key": {fmt.Sprintf("pay-%d", k)}})
						if r.status == http.StatusConflict && r.code() == "idempotency_request_in_progress" {
							time.Sleep(10 * time.Millisecond)
							continue
						}
						answers[k][i] = r.status
						return
					}
				})
			}
		}
		wg.Wait()
		succeeded := 0
		for k, a := range answers {
			if a[0] != a[1] || a[1] != a[2] || (a[0] != http.StatusCreated && a[0] != http.StatusUnprocessableEntity) {
				t.Errorf("key %d: the processes answered %v", k, a)
			}
			if a[0] == http.StatusCreated {
				succeeded++
			}
		}
		paid := count(t, db, "SELECT amount_paid::int FROM billing_invoices WHERE organization_id = $1 AND id = $2", org, invoice)
		if stored := count(t, db, "SELECT count(*) FROM billing_payments WHERE organization_id = $1 AND invoice_id = $2", org, invoice); succeeded != 4 || stored != 4 || paid != 4*each {
			t.Errorf("%d keys answered 201, %d payments stored, %d applied; want 4, 4 and %d", succeeded, stored, paid, 4*each)
		}
		t.Logf("payment figures: %d keys x 3 processes on one invoice: %d payments applied once each", keys, succeeded)
	})
}
