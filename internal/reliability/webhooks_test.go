//go:build reliability

// The webhook part of the multi-process and secrets tests: deliveries from three processes,
// signatures, and the signing secret at rest and in logs. It speaks only the contract
// (createWebhookEndpoint, the webhookEvent callback with Standard Webhooks signatures).

package reliability_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestWebhookDeliveryThreeProcesses: three processes share one outbox; every event of 30
// subscriptions activated through all three is delivered, once, with a valid signature, and
// the signing secret is stored sealed and never logged.
func TestWebhookDeliveryThreeProcesses(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	procs := []*server{
		startServer(t, c.dsn(), "", "LOG_LEVEL=debug"),
		startServer(t, c.dsn(), "", "LOG_LEVEL=debug"),
		startServer(t, c.dsn(), "", "LOG_LEVEL=debug"),
	}
	var (
		mu         sync.Mutex
		deliveries = map[string]int{} // webhook-id -> deliveries
		bodies     = map[string][]byte{}
		headers    = map[string]http.Header{}
	)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		id := r.Header.Get("webhook-id")
		mu.Lock()
		deliveries[id]++
		bodies[id], headers[id] = b, r.Header.Clone()
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()

	org := createOrg(t, procs[0], "Hooked", "standard_customer")
	r := call(nil, http.MethodPost, procs[1].url("/v1/webhook-endpoints"), orgToken(org),
		fmt.Sprintf(`{"organization_id":%q,"url":%q,"enabled_events":["subscription.activated"]}`, org, receiver.URL), nil)
	if r.status != http.StatusCreated {
		t.Fatalf("create endpoint: %d %s", r.status, r.body)
	}
	secret := r.json()["secret"].(string)
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatalf("secret %q: %v", secret, err)
	}

	const subs = 30
	for i := range subs {
		p := procs[i%3]
		r := call(nil, http.MethodPost, p.url("/v1/subscriptions"), orgToken(org), subscriptionBody(org), nil)
		if r.status != http.StatusCreated && r.status != http.StatusConflict {
			t.Fatalf("create subscription: %d %s", r.status, r.body)
		}
	}
	db := c.pool(t)
	want := count(t, db, "SELECT count(*) FROM subscriptions WHERE organization_id = $1", org)
	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		n := len(deliveries)
		mu.Unlock()
		if n >= want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d events delivered after 60 s", n, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // a duplicate would arrive meanwhile
	mu.Lock()
	defer mu.Unlock()
	for id, n := range deliveries {
		if n != 1 {
			t.Errorf("event %s delivered %d times", id, n)
		}
		h := headers[id]
		mac := hmac.New(sha256.New, key)
		fmt.Fprintf(mac, "%s.%s.%s", id, h.Get("webhook-timestamp"), bodies[id])
		expected := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
		if !strings.Contains(" "+h.Get("webhook-signature")+" ", " "+expected+" ") {
			t.Errorf("event %s: signature %q does not verify", id, h.Get("webhook-signature"))
		}
	}
	for _, col := range scanColumns(t, db) {
		if n := count(t, db, col.query, col.arg(secret)); n > 0 {
			t.Errorf("the webhook secret is stored in clear in %s", col.name)
		}
	}
	for i, p := range procs {
		if strings.Contains(p.out.String(), secret) || strings.Contains(p.out.String(), strings.TrimPrefix(secret, "whsec_")) {
			t.Errorf("process %d logged the webhook secret", i)
		}
	}
	t.Logf("webhook figures: %d events over 3 processes, each delivered once, signatures valid", len(deliveries))
}
