//go:build reliability

// The webhook part of the multi-process and secrets tests: deliveries from three processes,
// signatures, and the signing secret at rest and in logs. It speaks only the contract
// (createWebhookEndpoint, the webhookEvent callback with Standard Webhooks signatures).

package reliability_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestWebhookDeliveryThreeProcesses: three processes share one outbox; the subscription.activated
// event of each of 30 subscriptions, created through all three, is delivered exactly once, with a
// valid signature of its organization's endpoint, and the signing secrets are stored sealed and
// never logged. An organization has one live subscription to a product (docs/design.md,
// "Subscriptions"), so each subscription belongs to an organization of its own, with its own
// endpoint at the one receiver. It runs straight to PostgreSQL and through PgBouncer.
func TestWebhookDeliveryThreeProcesses(t *testing.T) {
	t.Parallel()
	forEachRoute(t, webhookDeliveryThreeProcesses)
}

func webhookDeliveryThreeProcesses(t *testing.T, c *cluster, env []string) {
	env = append(env, "LOG_LEVEL=debug")
	procs := []*server{startServer(t, c.dsn(), "", env...), startServer(t, c.dsn(), "", env...), startServer(t, c.dsn(), "", env...)}
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

	const subs = 30
	keys := map[string][]byte{}            // organization id -> its endpoint's signing key
	subscriptionOrg := map[string]string{} // subscription id -> its organization
	var secrets []string
	for i := range subs {
		org := createOrg(t, procs[i%3], fmt.Sprintf("Hooked %d", i), "standard_customer")
		r := call(nil, http.MethodPost, procs[(i+1)%3].url("/v1/webhook-endpoints"), orgToken(org),
			fmt.Sprintf(`{"organization_id":%q,"url":%q,"enabled_events":["subscription.activated"]}`, org, receiver.URL), nil)
		if r.status != http.StatusCreated {
			t.Fatalf("create endpoint %d: %d %s", i, r.status, r.body)
		}
		secret := r.json()["secret"].(string)
		secrets = append(secrets, secret)
		keys[org] = secretKey(t, secret)
		r = call(nil, http.MethodPost, procs[(i+2)%3].url("/v1/subscriptions"), orgToken(org), subscriptionBody(org), nil)
		if r.status != http.StatusCreated {
			t.Fatalf("create subscription %d: %d %s", i, r.status, r.body)
		}
		subscriptionOrg[r.json()["id"].(string)] = org
	}
	awaitDeliveries(t, &mu, func() int { return len(deliveries) }, subs)
	mu.Lock()
	defer mu.Unlock()
	if len(deliveries) != subs {
		t.Errorf("%d events delivered for %d subscriptions", len(deliveries), subs)
	}
	activated := map[string]int{} // subscription id -> its events delivered
	for id, n := range deliveries {
		if n != 1 {
			t.Errorf("event %s delivered %d times", id, n)
		}
		var ev struct {
			Type           string `json:"type"`
			OrganizationID string `json:"organization_id"`
			Data           struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if err := json.Unmarshal(bodies[id], &ev); err != nil {
			t.Fatalf("event %s: %v %s", id, err, bodies[id])
		}
		activated[ev.Data.ID]++
		org := subscriptionOrg[ev.Data.ID]
		if ev.Type != "subscription.activated" || org == "" || ev.OrganizationID != org {
			t.Errorf("event %s: type %q of organization %q for subscription %q, none of ours", id, ev.Type, ev.OrganizationID, ev.Data.ID)
		}
		if h := headers[id]; !signedWith(keys[org], h, bodies[id]) {
			t.Errorf("event %s: signature %q is not its organization's endpoint's", id, h.Get("webhook-signature"))
		}
	}
	for sub := range subscriptionOrg {
		if activated[sub] != 1 {
			t.Errorf("subscription %s: %d subscription.activated events delivered, want 1", sub, activated[sub])
		}
	}
	db := c.pool(t)
	for _, col := range scanColumns(t, db) {
		if n := count(t, db, col.query, col.arg(secrets[0])); n > 0 {
			t.Errorf("the webhook secret is stored in clear in %s", col.name)
		}
	}
	for i, p := range procs {
		for _, secret := range secrets {
			if strings.Contains(p.out.String(), secret) || strings.Contains(p.out.String(), strings.TrimPrefix(secret, "whsec_")) {
				t.Errorf("process %d logged a webhook secret", i)
			}
		}
	}
	t.Logf("webhook figures: %d events of %d subscriptions over 3 processes, each delivered once, signatures valid", len(deliveries), subs)
}

// secretKey is the HMAC key of an endpoint secret (whsec_<base64>).
func secretKey(t *testing.T, secret string) []byte {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatalf("secret %q: %v", secret, err)
	}
	return key
}

// signedWith reports whether one of the signatures in h's webhook-signature is key's
// signature of body (Standard Webhooks: HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}").
func signedWith(key []byte, h http.Header, body []byte) bool {
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%s.%s", h.Get("webhook-id"), h.Get("webhook-timestamp"), body)
	expected := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	return strings.Contains(" "+h.Get("webhook-signature")+" ", " "+expected+" ")
}

// TestWebhookDeliveryThreeProcessesRotation: three processes deliver test events sent through
// all three before, during and after a rotation of the endpoint's secret with a grace period:
// every event is delivered once, every delivery carries the old secret's signature (the grace
// period lasts), those delivered before the rotation it alone, and every event sent after the
// rotation answered the new one's too.
func TestWebhookDeliveryThreeProcessesRotation(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	procs := []*server{startServer(t, c.dsn(), ""), startServer(t, c.dsn(), ""), startServer(t, c.dsn(), "")}
	var (
		mu         sync.Mutex
		deliveries = map[string][]http.Header{} // webhook-id -> the headers of each delivery
		bodies     = map[string][]byte{}
	)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		id := r.Header.Get("webhook-id")
		mu.Lock()
		deliveries[id] = append(deliveries[id], r.Header.Clone())
		bodies[id] = b
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()

	org := createOrg(t, procs[0], "Rotating", "standard_customer")
	r := call(nil, http.MethodPost, procs[1].url("/v1/webhook-endpoints"), orgToken(org),
		fmt.Sprintf(`{"organization_id":%q,"url":%q,"enabled_events":["api_key.created"]}`, org, receiver.URL), nil)
	if r.status != http.StatusCreated {
		t.Fatalf("create endpoint: %d %s", r.status, r.body)
	}
	endpoint, oldSecret := r.json()["id"].(string), r.json()["secret"].(string)

	// A third of the events is delivered before the rotation, a third is sent while it is
	// made, and a third after it answered; all through the three processes.
	const third = 20
	sent := make([]string, 3*third)
	var wg sync.WaitGroup
	sendEvents := func(from int) {
		for i := from; i < from+third; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := call(nil, http.MethodPost, procs[i%3].url("/v1/webhook-endpoints/"+endpoint+"/test"), orgToken(org), "", nil)
				if r.status != http.StatusAccepted {
					t.Errorf("send test %d: %d %s", i, r.status, r.body)
					return
				}
				sent[i] = r.json()["event_id"].(string)
			}()
		}
	}
	sendEvents(0)
	wg.Wait()
	awaitDeliveries(t, &mu, func() int { return len(deliveries) }, third)
	sendEvents(third)
	r = call(nil, http.MethodPost, procs[2].url("/v1/webhook-endpoints/"+endpoint+"/rotate-secret"), orgToken(org), `{"grace_period_seconds":3600}`, nil)
	if r.status != http.StatusOK {
		t.Fatalf("rotate: %d %s", r.status, r.body)
	}
	newSecret := r.json()["secret"].(string)
	wg.Wait()
	sendEvents(2 * third)
	wg.Wait()
	awaitDeliveries(t, &mu, func() int { return len(deliveries) }, len(sent))

	mu.Lock()
	defer mu.Unlock()
	oldKey, newKey := secretKey(t, oldSecret), secretKey(t, newSecret)
	var bothSigned int
	for i, id := range sent {
		got := deliveries[id]
		if len(got) != 1 {
			t.Errorf("event %d (%s) delivered %d times", i, id, len(got))
			continue
		}
		h := got[0]
		if !signedWith(oldKey, h, bodies[id]) {
			t.Errorf("event %d: the old secret does not verify %q during its grace period", i, h.Get("webhook-signature"))
		}
		withNew := signedWith(newKey, h, bodies[id])
		switch {
		case i < third && withNew:
			t.Errorf("event %d, delivered before the rotation, carries the new secret's signature", i)
		case i >= 2*third && !withNew:
			t.Errorf("event %d, sent after the rotation: the new secret does not verify %q", i, h.Get("webhook-signature"))
		}
		if withNew {
			bothSigned++
		}
	}
	if len(deliveries) != len(sent) {
		t.Errorf("%d events delivered, %d sent", len(deliveries), len(sent))
	}
	db := c.pool(t)
	for _, col := range scanColumns(t, db) {
		for _, s := range []string{oldSecret, newSecret} {
			if n := count(t, db, col.query, col.arg(s)); n > 0 {
				t.Errorf("a webhook secret is stored in clear in %s", col.name)
			}
		}
	}
	t.Logf("rotation figures: %d events over 3 processes, each delivered once; %d signed with both secrets, all with the old one", len(sent), bothSigned)
}

// awaitDeliveries waits up to a minute until delivered (read under mu) reaches want, then two
// seconds more, in which a duplicate would arrive.
func awaitDeliveries(t *testing.T, mu *sync.Mutex, delivered func() int, want int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		n := delivered()
		mu.Unlock()
		if n >= want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d events delivered after 60 s", n, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
}
