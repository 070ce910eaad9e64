package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/provider/coreapi/internal/apitest"
)

// lifecycle is docs/design.md, "Subscriptions" for the HTTP tests: from which states each action is allowed,
// the audit event it writes and the body it is sent with.
var lifecycle = []struct {
	action, audit, body string
	commercial          []string // nil: any
	service             []string // nil: any but terminated
}{
	{"select-plan", "subscription.plan_selected", `{"plan_id":"` + planEinvoiceGrowthMonthly + `"}`, []string{"active", "past_due"}, nil},
	{"change-plan", "subscription.plan_changed", `{"plan_id":"` + planEinvoiceGrowthMonthly + `"}`, []string{"active", "past_due"}, nil},
	{"cancel", "subscription.cancelled", "", []string{"active", "past_due", "paused"}, nil},
	{"reactivate", "subscription.reactivated", "", []string{"cancelled"}, nil},
	{"suspend", "subscription.suspended", `{"reason":"Fraud review"}`, nil, []string{"provisioning", "active", "degraded"}},
	{"resume", "subscription.resumed", `{"reason":"Review cleared"}`, nil, []string{"suspended"}},
	{"terminate", "subscription.terminated", `{"reason":"Contract ended"}`, nil, nil},
}

func TestSubscriptionTransitions(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	for _, rule := range lifecycle {
		for _, commercial := range []string{"active", "past_due", "cancelled", "paused"} {
			for _, service := range []string{"provisioning", "active", "degraded", "suspended", "terminated"} {
				if service == "terminated" && commercial != "cancelled" {
					continue // a state the table forbids
				}
				allowed := service != "terminated" &&
					(rule.commercial == nil || slices.Contains(rule.commercial, commercial)) &&
					(rule.service == nil || slices.Contains(rule.service, service))
				name := fmt.Sprintf("%s/From_%s_%s", rule.action, commercial, service)
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					org, token := newOrganization(t, env)
					sub := createSubscription(t, env, token, org, productEinvoice, planEinvoiceSandbox)
					setState(t, env, sub.ID, commercial, service)
					resp := subscriptionAction(env, token, sub.ID, rule.action, rule.body)
					if !allowed {
						assertProblem(t, name, resp, http.StatusConflict, "invalid_state_transition")
						detail := resp.JSON(t)["detail"].(string)
						if !strings.Contains(detail, rule.action) || !(strings.Contains(detail, "status is "+commercial) || strings.Contains(detail, "status is "+service)) {
							t.Errorf("detail does not name the action and the current state: %s", detail)
						}
						if n := env.Count("SELECT count(*) FROM subscriptions WHERE id = $1 AND commercial_status = $2 AND service_status = $3", sub.ID, commercial, service); n != 1 {
							t.Error("a refused action changed the subscription")
						}
						if n := auditCount(env, sub.ID, rule.audit); n != 0 {
							t.Errorf("a refused action wrote %d audit events", n)
						}
						return
					}
					if resp.Status != http.StatusOK {
						t.Fatalf("status %d: %s", resp.Status, resp.Body)
					}
					var got subscription
					if rule.action == "select-plan" {
						sel := decode[planSelection](t, resp)
						got = sel.Subscription
						if sel.Invoice == nil || sel.Activation != "awaiting_payment" {
							t.Errorf("select-plan of a paid plan: invoice %v activation %s", sel.Invoice, sel.Activation)
						}
					} else {
						got = decode[subscription](t, resp)
					}
					checkTransitionEffect(t, rule.action, commercial, service, got)
					if n := auditCount(env, sub.ID, rule.audit); n != 1 {
						t.Errorf("%d %s audit events, want 1", n, rule.audit)
					}
					if strings.Contains(rule.body, "reason") {
						var reason string
						if err := env.Pool.QueryRow(context.Background(), "SELECT after->>'reason' FROM audit_events WHERE resource_id = $1 AND action = $2",
							sub.ID, rule.audit).Scan(&reason); err != nil || !strings.Contains(rule.body, reason) || reason == "" {
							t.Errorf("audit reason %q (%v), want the one of %s", reason, err, rule.body)
						}
					}
				})
			}
		}
	}
}

func checkTransitionEffect(t *testing.T, action, commercial, service string, got subscription) {
	t.Helper()
	wantCommercial, wantService, wantPlan := commercial, service, planEinvoiceSandbox
	switch action {
	case "select-plan", "change-plan":
		wantPlan = planEinvoiceGrowthMonthly
		if got.RenewsAt == nil {
			t.Error("renews_at is null after a plan selection")
		}
	case "cancel":
		wantCommercial = "cancelled"
		if got.RenewsAt != nil {
			t.Errorf("cancelled but renews_at %v", got.RenewsAt)
		}
	case "reactivate":
		wantCommercial = "active"
		if got.RenewsAt == nil || !got.RenewsAt.After(time.Now()) {
			t.Errorf("reactivated but renews_at %v", got.RenewsAt)
		}
	case "suspend":
		wantService = "suspended"
		if got.SuspendedAt == nil || time.Since(*got.SuspendedAt) > time.Minute || !got.UpdatedAt.Equal(*got.SuspendedAt) {
			t.Errorf("suspended_at %v (updated_at %v), want now, when the change took effect", got.SuspendedAt, got.UpdatedAt)
		}
	case "resume":
		wantService = "active"
		if got.SuspendedAt != nil {
			t.Errorf("resumed but suspended_at %v", got.SuspendedAt)
		}
	case "terminate":
		wantCommercial, wantService = "cancelled", "terminated"
		if got.TerminatedAt == nil || time.Since(*got.TerminatedAt) > time.Minute || !got.UpdatedAt.Equal(*got.TerminatedAt) ||
			got.RenewsAt != nil || got.SuspendedAt != nil {
			t.Errorf("terminated: terminated_at %v renews_at %v suspended_at %v", got.TerminatedAt, got.RenewsAt, got.SuspendedAt)
		}
	}
	if got.CommercialStatus != wantCommercial || got.ServiceStatus != wantService || got.PlanID != wantPlan {
		t.Errorf("after %s: %s/%s on %s, want %s/%s on %s", action, got.CommercialStatus, got.ServiceStatus, got.PlanID,
			wantCommercial, wantService, wantPlan)
	}
}

func TestSubscriptionReasonBody(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org, token := newOrganization(t, env)
	sub := createSubscription(t, env, token, org, productEinvoice, planEinvoiceSandbox)
	waitForService(t, env, token, sub.ID, "active")

	for name, body := range map[string]string{
		"EmptyReason":     `{"reason":""}`,
		"ReasonNotString": `{"reason":42}`,
		"UnknownProperty": `{"reason":"x","note":"y"}`,
	} {
		resp := subscriptionAction(env, token, sub.ID, "suspend", body)
		assertProblem(t, name, resp, http.StatusBadRequest, "validation_failed")
	}
	for _, step := range []struct{ action, body string }{
		{"suspend", ""},   // no body
		{"resume", "{}"},  // empty object
		{"suspend", `{}`}, // again
		{"terminate", ""},
	} {
		if resp := subscriptionAction(env, token, sub.ID, step.action, step.body); resp.Status != http.StatusOK {
			t.Fatalf("%s with body %q: %d %s", step.action, step.body, resp.Status, resp.Body)
		}
	}
	var withReason int
	if err := env.Pool.QueryRow(context.Background(), "SELECT count(*) FROM audit_events WHERE resource_id = $1 AND after ? 'reason'", sub.ID).Scan(&withReason); err != nil || withReason != 0 {
		t.Errorf("%d audit events carry a reason none was given for (%v)", withReason, err)
	}
	resp := subscriptionAction(env, token, sub.ID, "cancel", `{"reason":"x"}`)
	assertProblem(t, "cancel takes no body", resp, http.StatusBadRequest, "validation_failed")
}

// auditedState is the part of a subscription the audit trail's before and after record.
type auditedState struct {
	CommercialStatus string     `json:"commercial_status"`
	ServiceStatus    string     `json:"service_status"`
	PlanID           string     `json:"plan_id"`
	SuspendedAt      *time.Time `json:"suspended_at"`
	TerminatedAt     *time.Time `json:"terminated_at"`
}

// auditTrail returns the lifecycle events of a subscription in commit order, with the state
// before and after each.
func auditTrail(t testing.TB, env *apitest.Env, id string) (actions []string, before, after []auditedState) {
	t.Helper()
	rows, err := env.Pool.Query(context.Background(), `SELECT action, before, coalesce(after->'resource', after)
		FROM audit_events WHERE resource_id = $1 AND before IS NOT NULL ORDER BY id`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var action string
		var b, a []byte
		if err := rows.Scan(&action, &b, &a); err != nil {
			t.Fatal(err)
		}
		var bs, as auditedState
		if err := json.Unmarshal(b, &bs); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(a, &as); err != nil {
			t.Fatal(err)
		}
		actions, before, after = append(actions, action), append(before, bs), append(after, as)
	}
	return actions, before, after
}

func TestSubscriptionConcurrentActions(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)

	run := func(t *testing.T, token, id string, actions []string) map[string]int {
		t.Helper()
		statuses := make([]int, len(actions))
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, action := range actions {
			wg.Go(func() {
				<-start
				statuses[i] = subscriptionAction(env, token, id, action, "").Status
			})
		}
		close(start)
		wg.Wait()
		ok := map[string]int{}
		for i, s := range statuses {
			switch s {
			case http.StatusOK:
				ok[actions[i]]++
			case http.StatusConflict:
			default:
				t.Errorf("%s: status %d, want 200 or 409", actions[i], s)
			}
		}
		return ok
	}
	// checkTrail checks the audit trail is a chain: every event starts from the state the
	// previous one left, and the last one left the state the table holds.
	checkTrail := func(t *testing.T, token, id string, succeeded int) subscription {
		t.Helper()
		actions, before, after := auditTrail(t, env, id)
		// The trail holds the requests' events and the provisioning worker's.
		requested := slices.DeleteFunc(slices.Clone(actions), func(a string) bool { return a == "subscription.provisioned" })
		if len(requested) != succeeded {
			t.Errorf("%d audited lifecycle events for %d successful actions: %v", len(requested), succeeded, actions)
		}
		for i := 1; i < len(actions); i++ {
			if before[i].CommercialStatus != after[i-1].CommercialStatus || before[i].ServiceStatus != after[i-1].ServiceStatus {
				t.Errorf("event %d (%s) starts from %+v, but event %d (%s) left %+v", i, actions[i], before[i], i-1, actions[i-1], after[i-1])
			}
		}
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/subscriptions/" + id, Token: token})
		final := decode[subscription](t, resp)
		if n := len(after); n > 0 && (after[n-1].CommercialStatus != final.CommercialStatus || after[n-1].ServiceStatus != final.ServiceStatus) {
			t.Errorf("final state %s/%s, but the last audit event left %+v", final.CommercialStatus, final.ServiceStatus, after[n-1])
		}
		return final
	}

	t.Run("SuspendResumeTerminate", func(t *testing.T) {
		t.Parallel()
		org, token := newOrganization(t, env)
		sub := createSubscription(t, env, token, org, productEinvoice, planEinvoiceSandbox)
		waitForService(t, env, token, sub.ID, "active")
		var actions []string
		for i := range 20 {
			actions = append(actions, []string{"suspend", "resume", "suspend", "terminate", "resume"}[i%5])
		}
		ok := run(t, token, sub.ID, actions)
		if ok["terminate"] != 1 {
			t.Errorf("%d terminations succeeded, want exactly 1", ok["terminate"])
		}
		final := checkTrail(t, token, sub.ID, ok["suspend"]+ok["resume"]+ok["terminate"])
		if final.ServiceStatus != "terminated" || final.CommercialStatus != "cancelled" || final.TerminatedAt == nil || final.SuspendedAt != nil {
			t.Errorf("final state %+v, want terminated", final)
		}
		if ok["suspend"] < ok["resume"] || ok["suspend"] > ok["resume"]+1 {
			t.Errorf("%d suspends and %d resumes succeeded: they must alternate", ok["suspend"], ok["resume"])
		}
	})

	t.Run("SuspendTerminateRace", func(t *testing.T) {
		t.Parallel()
		org, token := newOrganization(t, env)
		sub := createSubscription(t, env, token, org, productEinvoice, planEinvoiceSandbox)
		var actions []string
		for i := range 20 {
			actions = append(actions, []string{"suspend", "terminate"}[i%2])
		}
		ok := run(t, token, sub.ID, actions)
		if ok["terminate"] != 1 || ok["suspend"] > 1 {
			t.Errorf("successes %v, want one terminate and at most one suspend", ok)
		}
		checkTrail(t, token, sub.ID, ok["suspend"]+ok["terminate"])
	})

	t.Run("CancelReactivate", func(t *testing.T) {
		t.Parallel()
		org, token := newOrganization(t, env)
		sub := createSubscription(t, env, token, org, productEinvoice, planEinvoiceSandbox)
		setState(t, env, sub.ID, "active", "active")
		var actions []string
		for i := range 20 {
			actions = append(actions, []string{"cancel", "reactivate"}[i%2])
		}
		ok := run(t, token, sub.ID, actions)
		if ok["cancel"] < ok["reactivate"] || ok["cancel"] > ok["reactivate"]+1 || ok["cancel"] == 0 {
			t.Errorf("successes %v: cancel and reactivate must alternate, starting with cancel", ok)
		}
		final := checkTrail(t, token, sub.ID, ok["cancel"]+ok["reactivate"])
		if (final.CommercialStatus == "cancelled") != (final.RenewsAt == nil) {
			t.Errorf("final %s with renews_at %v", final.CommercialStatus, final.RenewsAt)
		}
	})
}

// subscriptionKey creates an API key of org with the subscription scopes and returns it: the
// tenant acting with its own key.
func subscriptionKey(t testing.TB, env *apitest.Env, org string) string {
	t.Helper()
	resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: apitest.OperatorToken,
		Body: fmt.Sprintf(`{"organization_id":%q,"name":"lifecycle","environment":"sandbox","scopes":["subscriptions:read","subscriptions:write"]}`, org)})
	if resp.Status != http.StatusCreated {
		t.Fatalf("create key: %d %s", resp.Status, resp.Body)
	}
	return resp.JSON(t)["full_key"].(string)
}

// TestSubscriptionLifecycle_WhoMayDoWhat is the rule each lifecycle operation's description
// states (issue 21, item 6): the organization and the operator may both take every action,
// except that an organization may not undo the operator's suspension (resume, or terminate
// and subscribe afresh) or the operator's cancellation (reactivate): 403 forbidden, nothing
// changed. Each restriction is tried from both sides.
func TestSubscriptionLifecycle_WhoMayDoWhat(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ok := func(t *testing.T, resp *apitest.Response, what string) {
		t.Helper()
		if resp.Status != http.StatusOK {
			t.Fatalf("%s: status %d: %s", what, resp.Status, resp.Body)
		}
		if strings.Contains(string(resp.Body), "_by") {
			t.Errorf("%s: the subscription shows who acted: %s", what, resp.Body)
		}
	}
	column := func(t *testing.T, id, name string) *string {
		t.Helper()
		var v *string
		if err := env.Pool.QueryRow(context.Background(), "SELECT "+name+" FROM subscriptions WHERE id = $1", id).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	refused := func(t *testing.T, key, id, action, audit, commercial, service string) {
		t.Helper()
		events := env.Count("SELECT count(*) FROM audit_events WHERE resource_id = $1", id)
		resp := subscriptionAction(env, key, id, action, "")
		assertProblem(t, "organization "+action, resp, http.StatusForbidden, "forbidden")
		if detail, _ := resp.JSON(t)["detail"].(string); !strings.Contains(detail, "by the operator") {
			t.Errorf("detail does not say the operator holds it: %q", detail)
		}
		if n := env.Count("SELECT count(*) FROM subscriptions WHERE id = $1 AND commercial_status = $2 AND service_status = $3", id, commercial, service); n != 1 {
			t.Errorf("a refused %s changed the subscription", action)
		}
		if n := env.Count("SELECT count(*) FROM audit_events WHERE resource_id = $1", id); n != events || auditCount(env, id, audit) != 0 {
			t.Errorf("a refused %s wrote audit events", action)
		}
	}

	t.Run("OperatorSuspension", func(t *testing.T) {
		t.Parallel()
		org, _ := newOrganization(t, env)
		key := subscriptionKey(t, env, org)
		sub := createSubscription(t, env, key, org, productEinvoice, planEinvoiceSandbox)
		waitForService(t, env, key, sub.ID, "active")
		ok(t, subscriptionAction(env, apitest.OperatorToken, sub.ID, "suspend", `{"reason":"Fraud review"}`), "operator suspend")

		if by := column(t, sub.ID, "suspended_by"); by == nil || *by != "operator" {
			t.Errorf("suspended_by %v, want operator", by)
		}
		var actor, by, reason string
		if err := env.Pool.QueryRow(context.Background(), `SELECT actor_type, after->'resource'->>'suspended_by', after->>'reason'
			FROM audit_events WHERE resource_id = $1 AND action = 'subscription.suspended'`, sub.ID).Scan(&actor, &by, &reason); err != nil {
			t.Fatal(err)
		}
		if actor != "operator" || by != "operator" || reason != "Fraud review" {
			t.Errorf("audit event: actor %q suspended_by %q reason %q", actor, by, reason)
		}
		if n := env.Count("SELECT count(*) FROM webhook_events WHERE organization_id = $1 AND (data ? 'suspended_by' OR data ? 'cancelled_by')", org); n != 0 {
			t.Errorf("%d webhook events show who acted; the subscription object has no such field", n)
		}

		refused(t, key, sub.ID, "resume", "subscription.resumed", "active", "suspended")
		refused(t, key, sub.ID, "terminate", "subscription.terminated", "active", "suspended")
		assertProblem(t, "organization suspends again", subscriptionAction(env, key, sub.ID, "suspend", ""), http.StatusConflict, "invalid_state_transition")
		// What does not undo the suspension stays open to the organization.
		ok(t, subscriptionAction(env, key, sub.ID, "change-plan", `{"plan_id":"`+planEinvoiceGrowthMonthly+`"}`), "organization change-plan")

		ok(t, subscriptionAction(env, apitest.OperatorToken, sub.ID, "resume", `{"reason":"Review cleared"}`), "operator resume")
		if by := column(t, sub.ID, "suspended_by"); by != nil {
			t.Errorf("resumed, but suspended_by %q", *by)
		}
		// The organization's own suspension is its own to lift again.
		ok(t, subscriptionAction(env, key, sub.ID, "suspend", ""), "organization suspend")
		ok(t, subscriptionAction(env, key, sub.ID, "resume", ""), "organization resume")
	})

	t.Run("OperatorTerminatesItsSuspension", func(t *testing.T) {
		t.Parallel()
		org, _ := newOrganization(t, env)
		key := subscriptionKey(t, env, org)
		sub := createSubscription(t, env, key, org, productEinvoice, planEinvoiceSandbox)
		ok(t, subscriptionAction(env, apitest.OperatorToken, sub.ID, "suspend", ""), "operator suspend")
		ok(t, subscriptionAction(env, apitest.OperatorToken, sub.ID, "terminate", ""), "operator terminate")
		if by := column(t, sub.ID, "cancelled_by"); by == nil || *by != "operator" {
			t.Errorf("terminated by the operator, but cancelled_by %v", by)
		}
	})

	t.Run("OrganizationSuspension", func(t *testing.T) {
		t.Parallel()
		org, _ := newOrganization(t, env)
		key := subscriptionKey(t, env, org)
		sub := createSubscription(t, env, key, org, productEinvoice, planEinvoiceSandbox)
		ok(t, subscriptionAction(env, key, sub.ID, "suspend", `{"reason":"Migration"}`), "organization suspend")
		if by := column(t, sub.ID, "suspended_by"); by == nil || *by != "organization" {
			t.Errorf("suspended_by %v, want organization", by)
		}
		// The operator may lift the organization's suspension, and the organization may
		// terminate its own.
		ok(t, subscriptionAction(env, apitest.OperatorToken, sub.ID, "resume", ""), "operator resume")
		ok(t, subscriptionAction(env, key, sub.ID, "suspend", ""), "organization suspend")
		ok(t, subscriptionAction(env, key, sub.ID, "terminate", ""), "organization terminate")
	})

	t.Run("OperatorCancellation", func(t *testing.T) {
		t.Parallel()
		org, _ := newOrganization(t, env)
		key := subscriptionKey(t, env, org)
		sub := createSubscription(t, env, key, org, productEinvoice, planEinvoiceSandbox)
		waitForService(t, env, key, sub.ID, "active")
		ok(t, subscriptionAction(env, apitest.OperatorToken, sub.ID, "cancel", ""), "operator cancel")
		if by := column(t, sub.ID, "cancelled_by"); by == nil || *by != "operator" {
			t.Errorf("cancelled_by %v, want operator", by)
		}
		refused(t, key, sub.ID, "reactivate", "subscription.reactivated", "cancelled", "active")
		ok(t, subscriptionAction(env, apitest.OperatorToken, sub.ID, "reactivate", ""), "operator reactivate")
		if by := column(t, sub.ID, "cancelled_by"); by != nil {
			t.Errorf("reactivated, but cancelled_by %q", *by)
		}
		ok(t, subscriptionAction(env, key, sub.ID, "cancel", ""), "organization cancel")
		ok(t, subscriptionAction(env, key, sub.ID, "reactivate", ""), "organization reactivate")
	})

	// Every action is open to both sides where nothing of the other's is undone.
	for name, token := range map[string]func(org string) string{
		"Organization": func(org string) string { return subscriptionKey(t, env, org) },
		"Operator":     func(string) string { return apitest.OperatorToken },
	} {
		t.Run("EveryActionAs"+name, func(t *testing.T) {
			t.Parallel()
			org, _ := newOrganization(t, env)
			tok := token(org)
			resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/subscriptions", Token: tok,
				Body: subscriptionBody(org, productEinvoice, planEinvoiceSandbox)})
			if resp.Status != http.StatusCreated {
				t.Fatalf("create: %d %s", resp.Status, resp.Body)
			}
			sub := decode[subscription](t, resp)
			for _, step := range []struct{ action, body string }{
				{"select-plan", `{"plan_id":"` + planEinvoiceGrowthMonthly + `"}`},
				{"change-plan", `{"plan_id":"` + planEinvoiceSandbox + `"}`},
				{"cancel", ""},
				{"reactivate", ""},
				{"suspend", ""},
				{"resume", ""},
				{"terminate", ""},
			} {
				ok(t, subscriptionAction(env, tok, sub.ID, step.action, step.body), step.action)
			}
		})
	}
}
