package httpapi_test

import (
	"net/http"
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
