//go:build reliability

package reliability_test

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestCrashDuringIdempotentCreates SIGKILLs the server twice while clients create
// organizations with an Idempotency-Key each, and restarts it on the same address. The
// clients retry every key until it is acknowledged, through the kills. Afterwards, checked in
// the database: every key created exactly one organization, every acknowledgement of a key
// (first answer or replay) names that one organization, and nothing was created twice.
func TestCrashDuringIdempotentCreates(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	s := startServer(t, c.dsn(), "")
	addr := s.addr

	const clients, perClient = 8, 40
	var (
		mu       sync.Mutex
		answers  = map[string][]string{} // key -> organization ids of its 201 answers
		replays  atomic.Int64
		retries  atomic.Int64
		acked    atomic.Int64
		failures = map[string]int{}
		wg       sync.WaitGroup
	)
	client := &http.Client{Timeout: 30 * time.Second}
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perClient {
				key := fmt.Sprintf("crash-%02d-%03d", w, i)
				deadline := time.Now().Add(2 * time.Minute)
				for attempt := 0; ; attempt++ {
					if time.Now().After(deadline) {
						t.Errorf("%s: not acknowledged within 2 minutes", key)
						return
					}
					if attempt > 0 {
						retries.Add(1)
						time.Sleep(20 * time.Millisecond)
					}
					r := call(client, http.MethodPost, "http://"+addr+"/v1/organizations", operator, orgBody(key),
						http.Header{"Idempotency-Key": {key}})
					mu.Lock()
					switch {
					case r.err != nil:
						failures["transport"]++
					case r.status == http.StatusCreated:
						answers[key] = append(answers[key], r.json()["id"].(string))
					default:
						failures[fmt.Sprintf("%d %s", r.status, r.code())]++
					}
					mu.Unlock()
					if r.status == http.StatusCreated {
						acked.Add(1)
						if r.header.Get("Idempotent-Replayed") == "true" {
							replays.Add(1)
						}
						// Now and then ask again: the replay must name the same organization.
						if i%10 == 0 {
							again := call(client, http.MethodPost, "http://"+addr+"/v1/organizations", operator, orgBody(key),
								http.Header{"Idempotency-Key": {key}})
							if again.status == http.StatusCreated {
								mu.Lock()
								answers[key] = append(answers[key], again.json()["id"].(string))
								mu.Unlock()
							}
						}
						break
					}
					if r.err == nil && r.status != http.StatusServiceUnavailable && r.code() != "idempotency_request_in_progress" {
						t.Errorf("%s: %d %s", key, r.status, r.body)
						return
					}
				}
			}
		}()
	}

	kills := 0
	for _, at := range []int64{60, 180} {
		for acked.Load() < at {
			time.Sleep(2 * time.Millisecond)
		}
		s.signal(syscall.SIGKILL)
		kills++
		time.Sleep(300 * time.Millisecond) // clients meet a dead address meanwhile
		s = startServer(t, c.dsn(), addr)
	}
	wg.Wait()

	db := c.pool(t)
	total := clients * perClient
	if n := count(t, db, "SELECT count(*) FROM organizations WHERE legal_name_en LIKE 'crash-%'"); n != total {
		t.Errorf("%d organizations for %d keys", n, total)
	}
	if n := count(t, db, "SELECT count(*) FROM (SELECT legal_name_en FROM organizations GROUP BY 1 HAVING count(*) > 1) d"); n != 0 {
		t.Errorf("%d keys created more than one organization", n)
	}
	for key, ids := range answers {
		for _, id := range ids[1:] {
			if id != ids[0] {
				t.Errorf("%s: acknowledged as %s and as %s", key, ids[0], id)
			}
		}
		var name string
		if err := db.QueryRow(t.Context(), "SELECT legal_name_en FROM organizations WHERE id = $1", ids[0]).Scan(&name); err != nil || name != key {
			t.Errorf("%s: acknowledged organization %s: %q %v", key, ids[0], name, err)
		}
	}
	if len(answers) != total {
		t.Errorf("%d of %d keys acknowledged", len(answers), total)
	}
	if n := count(t, db, "SELECT count(*) FROM audit_events WHERE action = 'organization.created'"); n != total {
		t.Errorf("%d organization.created audit events for %d organizations", n, total)
	}
	t.Logf("crash figures: %d keys over %d clients, %d SIGKILLs; %d acknowledgements, %d of them replays; %d retries; failed attempts by kind %v",
		total, clients, kills, acked.Load(), replays.Load(), retries.Load(), failures)
}
