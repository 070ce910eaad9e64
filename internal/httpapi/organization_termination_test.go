package httpapi_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/provider/coreapi/internal/apitest"
)

// TestOrganizationTerminationEndsItsSubscriptions: the operator terminating an organization
// (final but for archiving) ends its live subscriptions as their own terminate does, in the
// same change: the service terminated, the usage not yet billed and the unused fee settled
// on a last invoice, an audit record and a subscription.terminated event each. Nothing is
// billed afterwards. Before the fix the subscriptions lived on, active, and every period
// renewed with an invoice (and dunning) for an organization that no longer exists for the
// provider.
func TestOrganizationTerminationEndsItsSubscriptions(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	small := smallPlan(t, env)
	s := newRatedSubscription(t, env, "2025-03-01T00:00:00Z", productAddress, small)
	sel := decode[planSelection](t, subscriptionAction(env, s.token, s.id, "select-plan", `{"plan_id":"`+small+`"}`))
	payInvoice(t, env, s.token, sel.Invoice.ID, 11500) // 10000 + VAT 1500
	advance(t, env, apitest.OperatorToken, s.clock, "2025-03-11T00:00:00Z")

	patchStanding(t, env, s.org, `{"lifecycle_status":"terminated"}`)
	sub := getSubscription(t, env, apitest.OperatorToken, s.id)
	if sub.ServiceStatus != "terminated" || sub.CommercialStatus != "cancelled" || sub.TerminatedAt == nil ||
		!sub.TerminatedAt.Equal(clockAt(t, "2025-03-11T00:00:00Z")) || sub.RenewsAt != nil {
		t.Fatalf("subscription after its organization's termination: %+v", sub)
	}
	if n := auditCount(env, s.id, "subscription.terminated"); n != 1 {
		t.Errorf("%d subscription.terminated audit records, want 1", n)
	}
	if n := env.Count("SELECT count(*) FROM webhook_events WHERE organization_id = $1 AND type = 'subscription.terminated'", s.org); n != 1 {
		t.Errorf("%d subscription.terminated events, want 1", n)
	}
	// The last invoice is that of a termination on March 11 (Small's unused fee credited).
	invs := invoicesOf(t, env, s.id)
	if len(invs) != 2 || !invs[1].IssuedAt.Equal(clockAt(t, "2025-03-11T00:00:00Z")) {
		t.Fatalf("invoices after the termination: %+v", invs)
	}

	// Three renewals fall due, and nothing is billed; archiving changes nothing more.
	advance(t, env, apitest.OperatorToken, s.clock, "2025-06-02T00:00:00Z")
	patchStanding(t, env, s.org, `{"lifecycle_status":"archived"}`)
	advance(t, env, apitest.OperatorToken, s.clock, "2025-07-02T00:00:00Z")
	if invs := invoicesOf(t, env, s.id); len(invs) != 2 {
		t.Errorf("%d invoices after three more periods, want the 2 there were: %+v", len(invs), invs)
	}
	// The operator cannot leave the organization's product open behind its back either: no new
	// subscription (the entitlement rules refuse it).
	resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/subscriptions", Token: apitest.OperatorToken,
		Body: subscriptionBody(s.org, productAddress, small)})
	assertProblem(t, "new subscription of an archived organization", resp, http.StatusForbidden, "organization_archived")
}

// TestOrganizationTerminationRacesANewSubscription: a subscription created while its
// organization's termination is under way must not outlive it. The termination ends the live
// subscriptions it finds, so one inserted after that scan, by a request that read the
// organization still active, would renew and bill a terminated organization. The test holds
// the webhook endpoint that receives organization.updated, so the termination waits after its
// scan, its organization locked, and the subscription is requested then: it waits for the
// termination and is refused.
func TestOrganizationTerminationRacesANewSubscription(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org, token := newOrganization(t, env)
	endpoint := createEndpoint(t, env, token, endpointBody(org, "https://hooks.example.com/org", "organization.updated"))["id"]

	hold := holdLocks(t, env, "SELECT 1 FROM webhook_endpoints WHERE id = $1 FOR UPDATE", endpoint)
	var terminated, created *apitest.Response
	var wg sync.WaitGroup
	wg.Go(func() {
		terminated = patchOrganization(env, apitest.OperatorToken, org, `{"lifecycle_status":"terminated"}`)
	})
	hold.waitForWaiters(t, 1)
	creating := make(chan struct{})
	wg.Go(func() {
		defer close(creating)
		created = env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/subscriptions", Token: token,
			Body: subscriptionBody(org, productAddress, planAddressPreview)})
	})
	// The creation either completes now (the race lost) or waits for the termination.
	hold.waitUntil(t, creating, 2)
	hold.release(t)
	wg.Wait()
	mustStatus(t, terminated, http.StatusOK)
	assertProblem(t, "a subscription requested during its organization's termination", created, http.StatusForbidden, "organization_terminated")
	if n := env.Count("SELECT count(*) FROM subscriptions WHERE organization_id = $1 AND service_status <> 'terminated'", org); n != 0 {
		t.Errorf("%d live subscriptions of the terminated organization", n)
	}
}
