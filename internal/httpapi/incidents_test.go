package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
)

// incident is the document's ProductIncident.
type incident struct {
	ID         string     `json:"id"`
	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
	ProductID  string     `json:"product_id"`
	Summary    string     `json:"summary"`
	Status     string     `json:"status"`
	OpenedAt   time.Time  `json:"opened_at"`
	ResolvedAt *time.Time `json:"resolved_at"`
}

func incidentsPath(product string) string { return "/v1/products/" + product + "/incidents" }

func openIncidentAs(env *apitest.Env, token, product, summary string) *apitest.Response {
	return env.Do(apitest.Request{Method: http.MethodPost, Path: incidentsPath(product), Token: token, Body: fmt.Sprintf(`{"summary":%q}`, summary)})
}

func resolveIncidentAs(env *apitest.Env, token, product, id string) *apitest.Response {
	return env.Do(apitest.Request{Method: http.MethodPost, Path: incidentsPath(product) + "/" + id + "/resolve", Token: token})
}

// openIncident declares an incident on product as the operator.
func openIncident(t testing.TB, env *apitest.Env, product, summary string) incident {
	t.Helper()
	return incidentIn(t, "open incident", openIncidentAs(env, apitest.OperatorToken, product, summary), http.StatusCreated)
}

// resolveIncident resolves an incident as the operator.
func resolveIncident(t testing.TB, env *apitest.Env, product, id string) incident {
	t.Helper()
	return incidentIn(t, "resolve incident", resolveIncidentAs(env, apitest.OperatorToken, product, id), http.StatusOK)
}

// incidentIn is the incident of resp, which must have status want.
func incidentIn(t testing.TB, what string, resp *apitest.Response, want int) incident {
	t.Helper()
	if resp.Status != want {
		t.Fatalf("%s: status %d: %s", what, resp.Status, resp.Body)
	}
	return decode[incident](t, resp)
}

// runningSubscription creates an organization subscribed to product on plan and waits until
// its service runs; it returns the organization's token and the subscription.
func runningSubscription(t testing.TB, env *apitest.Env, product, plan string) (string, subscription) {
	t.Helper()
	org, token := newOrganization(t, env)
	sub := createSubscription(t, env, token, org, product, plan)
	return token, waitForService(t, env, token, sub.ID, "active")
}

func getSubscription(t testing.TB, env *apitest.Env, token, id string) subscription {
	t.Helper()
	resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/subscriptions/" + id, Token: token})
	if resp.Status != http.StatusOK {
		t.Fatalf("get subscription: status %d: %s", resp.Status, resp.Body)
	}
	return decode[subscription](t, resp)
}

// eventCount is the number of webhook events of type about subscription id.
func eventCount(env *apitest.Env, typ, id string) int {
	return env.Count("SELECT count(*) FROM webhook_events WHERE type = $1 AND data->>'id' = $2", typ, id)
}

// Reachers (TestEveryDocumentedStateIsReachable). An incident changes every subscription of
// its product, so each reacher runs on a server and database of its own rather than on the
// shared one, where it would degrade the subscriptions other reachers are driving.

var _ = reachable("SubscriptionServiceStatus", "degraded", func(t *testing.T, _ *apitest.Env) map[string]any {
	env := apitest.New(t)
	token, sub := runningSubscription(t, env, productEinvoice, planEinvoiceSandbox)
	openIncident(t, env, productEinvoice, "Invoice generation is slow.")
	return env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/subscriptions/" + sub.ID, Token: token}).JSON(t)
})

var _ = reachable("ProductIncidentStatus", "open", func(t *testing.T, _ *apitest.Env) map[string]any {
	env := apitest.New(t)
	return openIncidentAs(env, apitest.OperatorToken, productAddress, "Lookups time out.").JSON(t)
})

var _ = reachable("ProductIncidentStatus", "resolved", func(t *testing.T, _ *apitest.Env) map[string]any {
	env := apitest.New(t)
	inc := openIncident(t, env, productAddress, "Lookups time out.")
	return resolveIncidentAs(env, apitest.OperatorToken, productAddress, inc.ID).JSON(t)
})

// TestIncidents_OperatorOnly: an organization may read incidents but neither declare nor
// resolve one; its refusals change nothing.
func TestIncidents_OperatorOnly(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	token, sub := runningSubscription(t, env, productEinvoice, planEinvoiceSandbox)
	// The organization's own key, with the scopes of every incident operation.
	resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Token: apitest.OperatorToken,
		Body: fmt.Sprintf(`{"organization_id":%q,"name":"incidents","environment":"sandbox","scopes":["products:read","subscriptions:write"]}`, sub.OrganizationID)})
	if resp.Status != http.StatusCreated {
		t.Fatalf("create key: %d %s", resp.Status, resp.Body)
	}
	key := resp.JSON(t)["full_key"].(string)

	for name, tok := range map[string]string{"DevelopmentToken": token, "APIKey": key} {
		assertProblem(t, name+"/Open", openIncidentAs(env, tok, productEinvoice, "Not ours to declare."), http.StatusForbidden, "forbidden")
	}
	if n := env.Count("SELECT count(*) FROM product_incidents"); n != 0 {
		t.Fatalf("a refused declaration stored %d incidents", n)
	}
	if got := getSubscription(t, env, token, sub.ID); got.ServiceStatus != "active" {
		t.Errorf("a refused declaration left the service %s", got.ServiceStatus)
	}

	inc := openIncident(t, env, productEinvoice, "Invoice generation is slow.")
	for name, tok := range map[string]string{"DevelopmentToken": token, "APIKey": key} {
		assertProblem(t, name+"/Resolve", resolveIncidentAs(env, tok, productEinvoice, inc.ID), http.StatusForbidden, "forbidden")
	}
	if n := env.Count("SELECT count(*) FROM product_incidents WHERE status = 'open'"); n != 1 {
		t.Errorf("a refused resolution changed the incident (%d open)", n)
	}
	if got := getSubscription(t, env, token, sub.ID); got.ServiceStatus != "degraded" {
		t.Errorf("a refused resolution left the service %s, want degraded", got.ServiceStatus)
	}
	if n := env.Count("SELECT count(*) FROM audit_events WHERE action IN ('product_incident.resolved', 'subscription.restored')"); n != 0 {
		t.Errorf("refusals wrote %d audit events", n)
	}

	// Reading is open to the organization, like the catalogue: a status page.
	resp = env.Do(apitest.Request{Method: http.MethodGet, Path: incidentsPath(productEinvoice) + "/" + inc.ID, Token: key})
	if resp.Status != http.StatusOK || decode[incident](t, resp).Summary != inc.Summary {
		t.Errorf("an organization reading an incident: %d %s", resp.Status, resp.Body)
	}
	resp = env.Do(apitest.Request{Method: http.MethodGet, Path: incidentsPath(productEinvoice) + "?status=open", Token: key})
	if page := decode[struct{ Items []incident }](t, resp); resp.Status != http.StatusOK || len(page.Items) != 1 || page.Items[0].ID != inc.ID {
		t.Errorf("an organization listing open incidents: %d %s", resp.Status, resp.Body)
	}
}

// TestIncidents_DegradeAndRestore: an incident degrades exactly the running services of its
// product, of every organization, with their audit and webhook events; a second incident
// keeps them degraded until both are resolved.
func TestIncidents_DegradeAndRestore(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	tokA, a := runningSubscription(t, env, productEinvoice, planEinvoiceSandbox)
	tokB, b := runningSubscription(t, env, productEinvoice, planEinvoiceSandbox)
	tokOther, other := runningSubscription(t, env, productAddress, planAddressPreview) // another product
	tokSusp, susp := runningSubscription(t, env, productEinvoice, planEinvoiceSandbox)
	if resp := subscriptionAction(env, tokSusp, susp.ID, "suspend", ""); resp.Status != http.StatusOK {
		t.Fatalf("suspend: %d %s", resp.Status, resp.Body)
	}
	tokTerm, term := runningSubscription(t, env, productEinvoice, planEinvoiceSandbox)
	if resp := subscriptionAction(env, tokTerm, term.ID, "terminate", ""); resp.Status != http.StatusOK {
		t.Fatalf("terminate: %d %s", resp.Status, resp.Body)
	}
	// Cancelled, its service still running to the end of the period: degraded like any.
	tokCanc, canc := runningSubscription(t, env, productEinvoice, planEinvoiceSandbox)
	if resp := subscriptionAction(env, tokCanc, canc.ID, "cancel", ""); resp.Status != http.StatusOK {
		t.Fatalf("cancel: %d %s", resp.Status, resp.Body)
	}
	subs := []struct {
		name, token string
		sub         subscription
		during      string // service status while an incident is open
		after       string // once every incident is resolved
	}{
		{"A", tokA, a, "degraded", "active"},
		{"B", tokB, b, "degraded", "active"},
		{"OtherProduct", tokOther, other, "active", "active"},
		{"Suspended", tokSusp, susp, "suspended", "suspended"},
		{"Terminated", tokTerm, term, "terminated", "terminated"},
		{"Cancelled", tokCanc, canc, "degraded", "active"},
	}
	check := func(stage string, during bool, degradedEvents, restoredEvents int) {
		t.Helper()
		for _, s := range subs {
			want := s.after
			if during {
				want = s.during
			}
			got := getSubscription(t, env, s.token, s.sub.ID)
			if got.ServiceStatus != want {
				t.Errorf("%s: %s is %s, want %s", stage, s.name, got.ServiceStatus, want)
			}
			moves := s.during == "degraded"
			if n := eventCount(env, "subscription.degraded", s.sub.ID); n != degradedEvents && moves || n != 0 && !moves {
				t.Errorf("%s: %s has %d subscription.degraded events", stage, s.name, n)
			}
			if n := eventCount(env, "subscription.restored", s.sub.ID); n != restoredEvents && moves || n != 0 && !moves {
				t.Errorf("%s: %s has %d subscription.restored events", stage, s.name, n)
			}
		}
	}

	first := openIncident(t, env, productEinvoice, "Invoice generation is slow.")
	if first.Status != "open" || first.ResolvedAt != nil || first.ProductID != productEinvoice || first.Summary != "Invoice generation is slow." ||
		!first.OpenedAt.Equal(first.CreatedAt) || time.Since(first.OpenedAt) > time.Minute {
		t.Errorf("declared incident %+v", first)
	}
	check("FirstOpen", true, 1, 0)
	// Each change is audited in its organization's trail, with the incident as the reason.
	var before, after, reason string
	if err := env.Pool.QueryRow(context.Background(), `SELECT before->>'service_status', after->'resource'->>'service_status', after->>'reason'
		FROM audit_events WHERE action = 'subscription.degraded' AND resource_id = $1 AND organization_id = $2`, a.ID, a.OrganizationID).Scan(&before, &after, &reason); err != nil {
		t.Fatal(err)
	}
	if before != "active" || after != "degraded" || !strings.Contains(reason, first.ID) || !strings.Contains(reason, first.Summary) {
		t.Errorf("audit of the degradation: %s -> %s, reason %q", before, after, reason)
	}
	// The event's data is the subscription as the API shows it.
	var data string
	if err := env.Pool.QueryRow(context.Background(), `SELECT data->>'service_status' FROM webhook_events WHERE type = 'subscription.degraded' AND organization_id = $1`,
		b.OrganizationID).Scan(&data); err != nil || data != "degraded" {
		t.Errorf("subscription.degraded data service_status %q (%v)", data, err)
	}

	second := openIncident(t, env, productEinvoice, "Archive reads fail.")
	check("SecondOpen", true, 1, 0)
	resolved := resolveIncident(t, env, productEinvoice, first.ID)
	if resolved.Status != "resolved" || resolved.ResolvedAt == nil || !resolved.UpdatedAt.Equal(*resolved.ResolvedAt) || resolved.ID != first.ID {
		t.Errorf("resolved incident %+v", resolved)
	}
	check("FirstResolved", true, 1, 0) // the second keeps them degraded

	// Resolving it again is refused and changes nothing.
	assertProblem(t, "ResolveTwice", resolveIncidentAs(env, apitest.OperatorToken, productEinvoice, first.ID), http.StatusConflict, "invalid_state_transition")
	if n := env.Count("SELECT count(*) FROM product_incidents WHERE id = $1 AND resolved_at = $2", first.ID, *resolved.ResolvedAt); n != 1 {
		t.Error("resolving twice changed the incident")
	}
	if n := env.Count("SELECT count(*) FROM audit_events WHERE action = 'product_incident.resolved' AND resource_id = $1", first.ID); n != 1 {
		t.Errorf("%d product_incident.resolved audit events, want 1", n)
	}

	resolveIncident(t, env, productEinvoice, second.ID)
	check("BothResolved", false, 1, 1)

	resp := env.Do(apitest.Request{Method: http.MethodGet, Path: incidentsPath(productEinvoice), Token: tokA})
	page := decode[struct{ Items []incident }](t, resp)
	if len(page.Items) != 2 || page.Items[0].ID != first.ID || page.Items[1].ID != second.ID || page.Items[1].Status != "resolved" {
		t.Errorf("incidents of the product: %s", resp.Body)
	}
}

// TestIncidents_ServiceStartsWhereTheIncidentsSayAtThatMoment: a service that starts while an
// incident is open (resume, the end of provisioning) starts degraded; once the last incident
// is resolved, it starts active. A suspended service is not restored by a resolution.
func TestIncidents_ServiceStartsWhereTheIncidentsSayAtThatMoment(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)

	t.Run("SuspendedWhileDegraded", func(t *testing.T) {
		token, sub := runningSubscription(t, env, productEinvoice, planEinvoiceSandbox)
		inc := openIncident(t, env, productEinvoice, "Invoice generation is slow.")
		for _, step := range []struct{ action, want string }{{"suspend", "suspended"}, {"resume", "degraded"}, {"suspend", "suspended"}} {
			resp := subscriptionAction(env, token, sub.ID, step.action, "")
			if got := decode[subscription](t, resp); resp.Status != http.StatusOK || got.ServiceStatus != step.want {
				t.Fatalf("%s during the incident: %d %s, want %s", step.action, resp.Status, resp.Body, step.want)
			}
		}
		resolveIncident(t, env, productEinvoice, inc.ID)
		if got := getSubscription(t, env, token, sub.ID); got.ServiceStatus != "suspended" {
			t.Errorf("the resolution moved a suspended service to %s", got.ServiceStatus)
		}
		resp := subscriptionAction(env, token, sub.ID, "resume", "")
		if got := decode[subscription](t, resp); got.ServiceStatus != "active" {
			t.Errorf("resumed after the incident: %s", got.ServiceStatus)
		}
		if n := eventCount(env, "subscription.restored", sub.ID); n != 0 {
			t.Errorf("%d subscription.restored events for a service that was suspended", n)
		}
	})

	t.Run("ProvisionedDuringAnIncident", func(t *testing.T) {
		env := apitest.New(t) // its workers stop: the subscription stays provisioning until a sibling's run
		env.StopWorkers()
		org, token := newOrganization(t, env)
		sub := createSubscription(t, env, token, org, productAddress, planAddressPreview)
		inc := openIncident(t, env, productAddress, "Lookups time out.")
		if got := getSubscription(t, env, token, sub.ID); got.ServiceStatus != "provisioning" {
			t.Fatalf("the incident moved a provisioning service to %s", got.ServiceStatus)
		}
		env.Sibling() // its workers provision the subscription
		waitForService(t, env, token, sub.ID, "degraded")
		var data string
		if err := env.Pool.QueryRow(context.Background(), `SELECT data->>'service_status' FROM webhook_events WHERE type = 'subscription.activated' AND data->>'id' = $1`,
			sub.ID).Scan(&data); err != nil || data != "degraded" {
			t.Errorf("subscription.activated data service_status %q (%v), want degraded", data, err)
		}
		resolveIncident(t, env, productAddress, inc.ID)
		if got := getSubscription(t, env, token, sub.ID); got.ServiceStatus != "active" {
			t.Errorf("after the resolution: %s", got.ServiceStatus)
		}
	})
}

// TestSubscriptionResume_BeforeProvisioning is issue 23's departure: a subscription suspended
// while still provisioning does not become active on resume without being provisioned. Its
// provisioning job, run while it is suspended, leaves it suspended; resume returns it to
// provisioning and a new job provisions it.
func TestSubscriptionResume_BeforeProvisioning(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	env.StopWorkers() // the provisioning job waits until a sibling's workers run
	org, token := newOrganization(t, env)
	sub := createSubscription(t, env, token, org, productEinvoice, planEinvoiceSandbox)
	if resp := subscriptionAction(env, token, sub.ID, "suspend", ""); resp.Status != http.StatusOK {
		t.Fatalf("suspend: %d %s", resp.Status, resp.Body)
	}

	env.Sibling()
	jobsDone := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(eventually); env.Count(`SELECT count(*) FROM river_job WHERE kind = 'provision_subscription'
			AND args->>'subscription_id' = $1 AND state = 'completed'`, sub.ID) < n; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("fewer than %d provisioning jobs completed after %s", n, eventually)
			}
		}
	}
	jobsDone(1)
	if got := getSubscription(t, env, token, sub.ID); got.ServiceStatus != "suspended" {
		t.Fatalf("the provisioning job moved a suspended subscription to %s", got.ServiceStatus)
	}
	if n := auditCount(env, sub.ID, "subscription.provisioned"); n != 0 {
		t.Fatalf("%d subscription.provisioned audit events while suspended", n)
	}

	resp := subscriptionAction(env, token, sub.ID, "resume", `{"reason":"Paperwork done"}`)
	got := decode[subscription](t, resp)
	if resp.Status != http.StatusOK || got.ServiceStatus != "provisioning" || got.SuspendedAt != nil {
		t.Fatalf("resume before provisioning: %d %s, want provisioning", resp.Status, resp.Body)
	}
	waitForService(t, env, token, sub.ID, "active")
	jobsDone(2)
	if n := auditCount(env, sub.ID, "subscription.provisioned"); n != 1 {
		t.Errorf("%d subscription.provisioned audit events, want 1", n)
	}
	if n := eventCount(env, "subscription.activated", sub.ID); n != 1 {
		t.Errorf("%d subscription.activated events, want 1", n)
	}

	// Once provisioned, a suspension resumes straight to active.
	subscriptionAction(env, token, sub.ID, "suspend", "")
	if got := decode[subscription](t, subscriptionAction(env, token, sub.ID, "resume", "")); got.ServiceStatus != "active" {
		t.Errorf("resume of a provisioned subscription: %s", got.ServiceStatus)
	}
	if n := env.Count("SELECT count(*) FROM river_job WHERE kind = 'provision_subscription' AND args->>'subscription_id' = $1", sub.ID); n != 2 {
		t.Errorf("%d provisioning jobs, want 2: a provisioned subscription is not provisioned again", n)
	}
}

// TestIncidents_Requests: unknown ids, bounds, pagination, idempotent replays.
func TestIncidents_Requests(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	op := apitest.OperatorToken
	const unknown = "0193a000-0000-7000-8000-0000000000ff"

	t.Run("UnknownIds", func(t *testing.T) {
		t.Parallel()
		assertProblem(t, "OpenUnknownProduct", openIncidentAs(env, op, unknown, "x"), http.StatusNotFound, "not_found")
		inc := openIncident(t, env, productPlatform, "Console is down.")
		assertProblem(t, "ResolveUnknown", resolveIncidentAs(env, op, productPlatform, unknown), http.StatusNotFound, "not_found")
		assertProblem(t, "ResolveOfAnotherProduct", resolveIncidentAs(env, op, productEinvoice, inc.ID), http.StatusNotFound, "not_found")
		for _, path := range []string{incidentsPath(productEinvoice) + "/" + inc.ID, incidentsPath(unknown), incidentsPath(unknown) + "/" + inc.ID} {
			assertProblem(t, "Get "+path, env.Do(apitest.Request{Method: http.MethodGet, Path: path, Token: op}), http.StatusNotFound, "not_found")
		}
		if n := env.Count("SELECT count(*) FROM product_incidents WHERE status = 'open' AND id = $1", inc.ID); n != 1 {
			t.Error("a refused resolution changed the incident")
		}
	})

	t.Run("Bounds", func(t *testing.T) {
		t.Parallel()
		for name, body := range map[string]string{
			"Empty":       `{"summary":""}`,
			"TooLong":     fmt.Sprintf(`{"summary":%q}`, strings.Repeat("x", 501)),
			"Missing":     `{}`,
			"UnknownProp": `{"summary":"x","severity":"high"}`,
		} {
			resp := env.Do(apitest.Request{Method: http.MethodPost, Path: incidentsPath(productEinvoice), Token: op, Body: body})
			assertProblem(t, name, resp, http.StatusBadRequest, "validation_failed")
		}
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: incidentsPath(productEinvoice), Token: op, Body: `{"summary":" \t\n"}`})
		if assertProblem(t, "Blank", resp, http.StatusUnprocessableEntity, "unprocessable"); !hasFieldError(resp, "/summary") {
			t.Errorf("a blank summary's refusal does not name the field: %s", resp.Body)
		}
		if n := env.Count("SELECT count(*) FROM product_incidents WHERE product_id = $1", productEinvoice); n != 0 {
			t.Errorf("refused declarations stored %d incidents", n)
		}
		longest := strings.Repeat("é", 500) // characters, not bytes
		if inc := openIncident(t, env, productEinvoice, longest); inc.Summary != longest {
			t.Error("the longest summary was not kept")
		}
	})

	t.Run("Pages", func(t *testing.T) {
		t.Parallel()
		var ids []string
		for i := range 3 {
			ids = append(ids, openIncident(t, env, productAddress, fmt.Sprintf("Incident %d", i)).ID)
		}
		resolveIncident(t, env, productAddress, ids[1])
		var got []string
		cursor := ""
		for range 4 {
			resp := env.Do(apitest.Request{Method: http.MethodGet, Path: incidentsPath(productAddress) + "?limit=1" + cursor, Token: op})
			page := decode[struct {
				Items      []incident
				NextCursor *string `json:"next_cursor"`
			}](t, resp)
			for _, i := range page.Items {
				got = append(got, i.ID)
			}
			if page.NextCursor == nil {
				break
			}
			cursor = "&cursor=" + *page.NextCursor
		}
		if fmt.Sprint(got) != fmt.Sprint(ids) {
			t.Errorf("paged %v, want %v", got, ids)
		}
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: incidentsPath(productAddress) + "?status=resolved", Token: op})
		if page := decode[struct{ Items []incident }](t, resp); len(page.Items) != 1 || page.Items[0].ID != ids[1] {
			t.Errorf("resolved incidents: %s", resp.Body)
		}
		assertProblem(t, "BadCursor", env.Do(apitest.Request{Method: http.MethodGet, Path: incidentsPath(productAddress) + "?cursor=nonsense", Token: op}),
			http.StatusBadRequest, "validation_failed")
	})

	t.Run("IdempotentReplays", func(t *testing.T) {
		t.Parallel()
		env := apitest.New(t) // its own einvoice product state
		token, sub := runningSubscription(t, env, productEinvoice, planEinvoiceSandbox)
		post := func(path, body, key string) *apitest.Response {
			return env.Do(apitest.Request{Method: http.MethodPost, Path: path, Token: op, Body: body, Header: http.Header{"Idempotency-Key": {key}}})
		}
		first := post(incidentsPath(productEinvoice), `{"summary":"Slow."}`, "open-1")
		replay := post(incidentsPath(productEinvoice), `{"summary":"Slow."}`, "open-1")
		if first.Status != http.StatusCreated || replay.Status != http.StatusCreated || string(first.Body) != string(replay.Body) ||
			replay.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replayed declaration: %d %s / %d %s", first.Status, first.Body, replay.Status, replay.Body)
		}
		if n := env.Count("SELECT count(*) FROM product_incidents"); n != 1 {
			t.Errorf("%d incidents after a replay, want 1", n)
		}
		if n := eventCount(env, "subscription.degraded", sub.ID); n != 1 {
			t.Errorf("%d subscription.degraded events after a replay, want 1", n)
		}
		assertProblem(t, "KeyReused", post(incidentsPath(productEinvoice), `{"summary":"Other."}`, "open-1"), http.StatusUnprocessableEntity, "idempotency_key_reused")

		path := incidentsPath(productEinvoice) + "/" + decode[incident](t, first).ID + "/resolve"
		resolved := post(path, "", "resolve-1")
		again := post(path, "", "resolve-1")
		if resolved.Status != http.StatusOK || again.Status != http.StatusOK || string(resolved.Body) != string(again.Body) ||
			again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replayed resolution: %d %s / %d %s", resolved.Status, resolved.Body, again.Status, again.Body)
		}
		if n := eventCount(env, "subscription.restored", sub.ID); n != 1 {
			t.Errorf("%d subscription.restored events after a replay, want 1", n)
		}
		if got := getSubscription(t, env, token, sub.ID); got.ServiceStatus != "active" {
			t.Errorf("after the resolution: %s", got.ServiceStatus)
		}
	})
}

// TestIncidents_Concurrency races incident changes against each other and against lifecycle
// actions: whatever the interleaving, every service ends where the open incidents and its own
// history put it, with one event per change.
func TestIncidents_Concurrency(t *testing.T) {
	t.Parallel()
	// all runs fns at once and waits for them.
	all := func(fns ...func()) {
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, fn := range fns {
			wg.Go(func() { <-start; fn() })
		}
		close(start)
		wg.Wait()
	}
	running := func(t *testing.T, env *apitest.Env, n int) (tokens []string, subs []subscription) {
		for range n {
			token, sub := runningSubscription(t, env, productEinvoice, planEinvoiceSandbox)
			tokens, subs = append(tokens, token), append(subs, sub)
		}
		return tokens, subs
	}
	expect := func(t *testing.T, env *apitest.Env, tokens []string, subs []subscription, want string) {
		t.Helper()
		for i, sub := range subs {
			if got := getSubscription(t, env, tokens[i], sub.ID); got.ServiceStatus != want {
				t.Errorf("subscription %d is %s, want %s", i, got.ServiceStatus, want)
			}
		}
	}

	t.Run("TwoOperatorsResolveTheLastTwoIncidents", func(t *testing.T) {
		t.Parallel()
		env := apitest.New(t)
		tokens, subs := running(t, env, 3)
		const rounds = 5
		for round := range rounds {
			x := openIncident(t, env, productEinvoice, "X")
			y := openIncident(t, env, productEinvoice, "Y")
			var sx, sy int
			all(func() { sx = resolveIncidentAs(env, apitest.OperatorToken, productEinvoice, x.ID).Status },
				func() { sy = resolveIncidentAs(env, apitest.OperatorToken, productEinvoice, y.ID).Status })
			if sx != http.StatusOK || sy != http.StatusOK {
				t.Fatalf("round %d: resolutions answered %d and %d", round, sx, sy)
			}
			expect(t, env, tokens, subs, "active")
		}
		for i, sub := range subs {
			if n := eventCount(env, "subscription.restored", sub.ID); n != rounds {
				t.Errorf("subscription %d: %d subscription.restored events, want %d", i, n, rounds)
			}
		}
	})

	t.Run("TwoOperatorsResolveOneIncident", func(t *testing.T) {
		t.Parallel()
		env := apitest.New(t)
		tokens, subs := running(t, env, 2)
		inc := openIncident(t, env, productEinvoice, "X")
		statuses := make([]int, 4)
		var fns []func()
		for i := range statuses {
			fns = append(fns, func() { statuses[i] = resolveIncidentAs(env, apitest.OperatorToken, productEinvoice, inc.ID).Status })
		}
		all(fns...)
		ok := 0
		for _, s := range statuses {
			switch s {
			case http.StatusOK:
				ok++
			case http.StatusConflict:
			default:
				t.Errorf("status %d, want 200 or 409", s)
			}
		}
		if ok != 1 {
			t.Errorf("%d resolutions succeeded, want 1: %v", ok, statuses)
		}
		expect(t, env, tokens, subs, "active")
		for i, sub := range subs {
			if n := eventCount(env, "subscription.restored", sub.ID); n != 1 {
				t.Errorf("subscription %d: %d subscription.restored events, want 1", i, n)
			}
		}
	})

	t.Run("ResumesRaceADeclaration", func(t *testing.T) {
		t.Parallel()
		env := apitest.New(t)
		tokens, subs := running(t, env, 6)
		for round := range 3 {
			for i, sub := range subs {
				if resp := subscriptionAction(env, tokens[i], sub.ID, "suspend", ""); resp.Status != http.StatusOK {
					t.Fatalf("suspend: %d %s", resp.Status, resp.Body)
				}
			}
			var fns []func()
			for i, sub := range subs {
				fns = append(fns, func() { subscriptionAction(env, tokens[i], sub.ID, "resume", "") })
			}
			var declared *apitest.Response
			fns = append(fns, func() {
				declared = openIncidentAs(env, apitest.OperatorToken, productEinvoice, fmt.Sprintf("Round %d", round))
			})
			all(fns...)
			// Resumed before the declaration: degraded by it; after: resumed degraded.
			expect(t, env, tokens, subs, "degraded")
			resolveIncident(t, env, productEinvoice, decode[incident](t, declared).ID)
			expect(t, env, tokens, subs, "active")
		}
	})

	t.Run("SuspensionsRaceADeclarationAndAResolution", func(t *testing.T) {
		t.Parallel()
		env := apitest.New(t)
		tokens, subs := running(t, env, 6)
		// act runs action on every subscription at once, with also (an incident change) among them.
		act := func(action string, also func() *apitest.Response) *apitest.Response {
			var fns []func()
			for i, sub := range subs {
				fns = append(fns, func() { subscriptionAction(env, tokens[i], sub.ID, action, "") })
			}
			var resp *apitest.Response
			all(append(fns, func() { resp = also() })...)
			return resp
		}
		none := func() *apitest.Response { return nil }
		declared := act("suspend", func() *apitest.Response { return openIncidentAs(env, apitest.OperatorToken, productEinvoice, "X") })
		inc := decode[incident](t, declared)
		expect(t, env, tokens, subs, "suspended") // suspended before or after being degraded
		act("resume", none)
		expect(t, env, tokens, subs, "degraded")
		if resp := act("suspend", func() *apitest.Response {
			return resolveIncidentAs(env, apitest.OperatorToken, productEinvoice, inc.ID)
		}); resp.Status != http.StatusOK {
			t.Fatalf("resolve: %d %s", resp.Status, resp.Body)
		}
		expect(t, env, tokens, subs, "suspended")
		act("resume", none)
		expect(t, env, tokens, subs, "active")
	})
}

// TestIncidents_OfAnInternalProduct: an internal_only product's incidents are as invisible to
// other organizations as the product itself (404, like an unknown product), and visible to
// internal organizations.
func TestIncidents_OfAnInternalProduct(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	product, _ := offeredPlan(t, env, "internal_only")
	opened := openIncident(t, env, product, "Internal product slow.")
	internal := createOrganization(t, env, orgBody(t, "organization_type", `"internal"`))["id"].(string)
	_, standardToken := newOrganization(t, env)
	for _, path := range []string{incidentsPath(product), incidentsPath(product) + "/" + opened.ID} {
		if r := env.Do(apitest.Request{Method: http.MethodGet, Path: path, Token: apitest.OrgToken(uuid.MustParse(internal))}); r.Status != http.StatusOK {
			t.Errorf("internal organization, GET %s: %d %s", path, r.Status, r.Body)
		}
		assertProblem(t, "standard organization, GET "+path, env.Do(apitest.Request{Method: http.MethodGet, Path: path, Token: standardToken}), http.StatusNotFound, "not_found")
	}
}
