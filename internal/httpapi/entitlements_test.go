package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
	"github.com/provider/coreapi/internal/httpapi"
)

// productionReadyOrganization is an organization the entitlement rules let use production:
// active and verified (core.Entitle).
const productionReadyOrganization = `{"legal_name_ar":"شركة المثال","legal_name_en":"Example Co","display_name":"Example",` +
	`"organization_type":"reseller","country":"SA","lifecycle_status":"active","verification_status":"verified"}`

// organizationIn creates, as the operator, a platform organization with the given statuses
// (the fields of createOrganization) and returns its id.
func organizationIn(t testing.TB, env *apitest.Env, statuses map[string]string) string {
	t.Helper()
	body := map[string]any{"legal_name_ar": "شركة المثال", "legal_name_en": "Example Co", "display_name": "Example",
		"organization_type": "reseller", "country": "SA"}
	for k, v := range statuses {
		body[k] = v
	}
	b, _ := json.Marshal(body)
	return createOrganization(t, env, string(b))["id"].(string)
}

// entitlementFixture is one organization in some state, with what the product operations of
// the matrix need.
type entitlementFixture struct {
	env           *apitest.Env
	org, token    string
	productionKey string // "" when the state lets no production key be created
	sandboxKey    string // a key to rotate, "" when none could be created
	business      string // a connected business of the organization
}

// writes counts what a refused operation must not have written: tax invoices, usage counted
// for spend controls, keys and subscriptions of the organization.
func (f *entitlementFixture) writes() map[string]int {
	out := map[string]int{}
	for _, table := range []string{"tax_invoices", "usage_events", "usage_counters", "api_keys", "subscriptions"} {
		out[table] = f.env.Count("SELECT count(*) FROM "+table+" WHERE organization_id = $1", f.org)
	}
	out["operations counted"] = f.env.Count("SELECT coalesce(sum(operations), 0)::int FROM usage_counters WHERE organization_id = $1", f.org)
	return out
}

func (f *entitlementFixture) post(token, path, body string) *apitest.Response {
	return f.env.Do(apitest.Request{Method: http.MethodPost, Path: path, Token: token, Body: body})
}

func (f *entitlementFixture) createKey(environment string) *apitest.Response {
	return f.post(apitest.OperatorToken, "/v1/api-keys", fmt.Sprintf(
		`{"organization_id":%q,"name":"matrix","environment":%q,"scopes":["invoice:generate","address:read"]}`, f.org, environment))
}

// entitlementOperations are the operations of the matrix, each as a request of f.
var entitlementOperations = []struct {
	name string
	do   func(t *testing.T, f *entitlementFixture) *apitest.Response // nil response: not applicable
}{
	{"GenerateInvoice", func(t *testing.T, f *entitlementFixture) *apitest.Response {
		return f.post(f.token, invoicePath, invoiceBody(t, f.org, nil))
	}},
	{"GenerateInvoiceProduction", func(t *testing.T, f *entitlementFixture) *apitest.Response {
		if f.productionKey == "" {
			return nil
		}
		return f.post(f.productionKey, invoicePath, invoiceBody(t, f.org, nil))
	}},
	{"GenerateStandardInvoice", func(t *testing.T, f *entitlementFixture) *apitest.Response {
		return f.post(f.token, standardInvoicePath, standardBody(t, f.org, "standard_tax_invoice", nil))
	}},
	{"ResolveAddress", func(_ *testing.T, f *entitlementFixture) *apitest.Response {
		return f.post(f.token, resolvePath, `{"short_address":"RRMA1234","language":"en"}`)
	}},
	{"CreateSandboxKey", func(_ *testing.T, f *entitlementFixture) *apitest.Response { return f.createKey("sandbox") }},
	{"CreateProductionKey", func(_ *testing.T, f *entitlementFixture) *apitest.Response { return f.createKey("production") }},
	{"RotateKey", func(_ *testing.T, f *entitlementFixture) *apitest.Response {
		if f.sandboxKey == "" {
			return nil
		}
		return f.post(f.token, "/v1/api-keys/"+f.sandboxKey+"/rotate", `{}`)
	}},
	{"CreateBusinessCredential", func(_ *testing.T, f *entitlementFixture) *apitest.Response {
		return f.post(f.token, "/v1/connected-businesses/"+f.business+"/credentials", `{"product":"address"}`)
	}},
	{"CreateSubscription", func(_ *testing.T, f *entitlementFixture) *apitest.Response {
		return f.post(f.token, "/v1/subscriptions", subscriptionBody(f.org, productAddress, planAddressPreview))
	}},
	// Reading its own data and support stay open in every state.
	{"ReadOrganization", func(_ *testing.T, f *entitlementFixture) *apitest.Response {
		return f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/organizations/" + f.org, Token: f.token})
	}},
	{"OpenSupportCase", func(_ *testing.T, f *entitlementFixture) *apitest.Response {
		return f.post(f.token, "/v1/support-cases", fmt.Sprintf(`{"organization_id":%q,"subject":"Invoices fail",`+
			`"description":"Every invoice fails with BR-KSA-40.","severity":"high","category":"technical"}`, f.org))
	}},
}

// notApplicable marks an operation a state leaves no way to try (a production key's traffic
// where no production key can be created): its refusal is that of the key's creation.
const notApplicable = "-"

// refusing returns refused with operation refused with code too.
func refusing(refused map[string]string, operation, code string) map[string]string {
	out := map[string]string{operation: code}
	for k, v := range refused {
		out[k] = v
	}
	return out
}

// allowed is the expected answer of each operation when the state allows it.
var allowed = map[string]int{
	"GenerateInvoice": http.StatusCreated, "GenerateInvoiceProduction": http.StatusCreated, "ResolveAddress": http.StatusOK,
	"GenerateStandardInvoice": http.StatusCreated,
	"CreateSandboxKey":        http.StatusCreated, "CreateProductionKey": http.StatusCreated, "RotateKey": http.StatusCreated,
	"CreateBusinessCredential": http.StatusCreated, "CreateSubscription": http.StatusCreated,
	"ReadOrganization": http.StatusOK, "OpenSupportCase": http.StatusCreated,
}

// TestEntitlementMatrix runs every product operation in every state that governs it and
// checks the documented answer: the operation's success, or its refusal's status and code
// with nothing written and nothing counted against spend controls. States are reached through
// the API: organizations created with their statuses by the operator, subscriptions moved by
// their lifecycle actions.
func TestEntitlementMatrix(t *testing.T) {
	t.Parallel()
	production := func(c *httpapi.Config) { c.ProductionTrafficEnabled = true }
	env := apitest.New(t, production)
	// A server of its own whose workers are stopped holds a subscription in provisioning.
	held := apitest.New(t, production)
	held.StopWorkers()

	active := map[string]string{"lifecycle_status": "active", "verification_status": "verified"}
	with := func(change map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range active {
			out[k] = v
		}
		for k, v := range change {
			out[k] = v
		}
		return out
	}
	everything := func(code string) map[string]string {
		return map[string]string{"GenerateInvoice": code, "GenerateInvoiceProduction": code, "GenerateStandardInvoice": code, "ResolveAddress": code,
			"CreateSandboxKey": code, "CreateProductionKey": code, "RotateKey": code, "CreateBusinessCredential": code,
			"CreateSubscription": code}
	}
	noProductionKey := map[string]string{"GenerateInvoiceProduction": notApplicable}
	states := []struct {
		name     string
		statuses map[string]string
		// subscription drives the organization's einvoice subscription: "" none, else the
		// service status to reach through the API.
		subscription string
		refused      map[string]string // operation -> 403 code; others succeed
	}{
		{"Active", active, "active", nil},
		{"Pending", map[string]string{}, "", refusing(noProductionKey, "CreateProductionKey", "organization_not_active")},
		{"Unverified", with(map[string]string{"verification_status": "unverified"}), "active",
			refusing(noProductionKey, "CreateProductionKey", "organization_not_verified")},
		{"PendingReview", with(map[string]string{"verification_status": "pending_review"}), "",
			refusing(noProductionKey, "CreateProductionKey", "organization_not_verified")},
		{"Rejected", with(map[string]string{"verification_status": "rejected"}), "",
			refusing(noProductionKey, "CreateProductionKey", "organization_not_verified")},
		{"RiskWatch", with(map[string]string{"risk_status": "watch"}), "active", nil},
		{"RiskRestricted", with(map[string]string{"risk_status": "restricted"}), "active",
			map[string]string{"GenerateInvoiceProduction": "organization_risk_restricted"}},
		{"Suspended", with(map[string]string{"lifecycle_status": "suspended"}), "", everything("organization_suspended")},
		{"Terminated", with(map[string]string{"lifecycle_status": "terminated"}), "", everything("organization_terminated")},
		{"Archived", with(map[string]string{"lifecycle_status": "archived"}), "", everything("organization_archived")},
		{"RiskSuspended", with(map[string]string{"risk_status": "suspended_risk"}), "", everything("organization_risk_suspended")},
		{"NoSubscription", active, "", map[string]string{"GenerateInvoiceProduction": "subscription_required"}},
		{"SubscriptionProvisioning", active, "provisioning",
			map[string]string{"GenerateInvoice": "subscription_inactive", "GenerateInvoiceProduction": "subscription_inactive",
				"GenerateStandardInvoice": "subscription_inactive"}},
		{"SubscriptionSuspended", active, "suspended",
			map[string]string{"GenerateInvoice": "subscription_inactive", "GenerateInvoiceProduction": "subscription_inactive",
				"GenerateStandardInvoice": "subscription_inactive"}},
		{"SubscriptionTerminated", active, "terminated",
			map[string]string{"GenerateInvoice": "subscription_inactive", "GenerateInvoiceProduction": "subscription_inactive",
				"GenerateStandardInvoice": "subscription_inactive"}},
		{"SubscriptionResumed", active, "resumed", nil},
	}
	for _, st := range states {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			f := newEntitlementFixture(t, env, held, st.statuses, st.subscription)
			for _, op := range entitlementOperations {
				code, refused := st.refused[op.name]
				before := f.writes()
				resp := op.do(t, f)
				switch {
				case resp == nil && !refused:
					t.Errorf("%s: not applicable, but the state should allow it", op.name)
				case resp == nil:
				case code == notApplicable:
					t.Errorf("%s: applicable (status %d), but the state lets no production key exist", op.name, resp.Status)
				case !refused && resp.Status != allowed[op.name]:
					t.Errorf("%s: status %d, want %d: %s", op.name, resp.Status, allowed[op.name], resp.Body)
				case refused:
					assertProblem(t, op.name, resp, http.StatusForbidden, code)
					if after := f.writes(); fmt.Sprint(after) != fmt.Sprint(before) {
						t.Errorf("%s: a refusal wrote: %v, before %v", op.name, after, before)
					}
				}
			}
		})
	}
}

// newEntitlementFixture creates an organization with statuses and drives its einvoice
// subscription to service (see TestEntitlementMatrix), all through the API. held is a server
// whose workers are stopped, where a subscription stays provisioning.
func newEntitlementFixture(t *testing.T, env, held *apitest.Env, statuses map[string]string, service string) *entitlementFixture {
	t.Helper()
	if service == "provisioning" {
		env = held
	}
	f := &entitlementFixture{env: env}
	f.org = organizationIn(t, env, statuses)
	f.token = apitest.OrgToken(uuid.MustParse(f.org))
	switch service {
	case "":
	case "provisioning":
		createSubscription(t, env, f.token, f.org, productEinvoice, planEinvoiceSandbox)
	default:
		sub := createSubscription(t, env, f.token, f.org, productEinvoice, planEinvoiceSandbox)
		waitForService(t, env, f.token, sub.ID, "active")
		actions := map[string][]string{"suspended": {"suspend"}, "terminated": {"terminate"}, "resumed": {"suspend", "resume"}}
		for _, action := range actions[service] {
			if r := subscriptionAction(env, f.token, sub.ID, action, `{}`); r.Status != http.StatusOK {
				t.Fatalf("%s: %d %s", action, r.Status, r.Body)
			}
		}
	}
	if r := f.createKey("production"); r.Status == http.StatusCreated {
		f.productionKey = r.JSON(t)["full_key"].(string)
	}
	if r := f.createKey("sandbox"); r.Status == http.StatusCreated {
		f.sandboxKey = r.JSON(t)["id"].(string)
	}
	r := f.post(f.token, "/v1/connected-businesses", businessBody("matrix", nil))
	if r.Status != http.StatusCreated {
		t.Fatalf("create connected business: %d %s", r.Status, r.Body)
	}
	f.business = r.JSON(t)["id"].(string)
	return f
}

// waitForStatus polls until request answers want: a change made in another process is
// obeyed within a second (docs/design.md, "Entitlements"); the deadline is generous, the
// test asserts the outcome, not the speed.
func waitForStatus(t *testing.T, name string, want int, request func() *apitest.Response) {
	t.Helper()
	deadline := time.Now().Add(eventually)
	for {
		resp := request()
		if resp.Status == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: status %d after %s, want %d: %s", name, resp.Status, eventually, want, resp.Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestEntitlementChangesAreObeyed: the decision is cached as credentials are, and a change
// is obeyed by the very next request of the process that made it and, by notification,
// within a second by every other process, each caching with a TTL far longer than the test.
// Here the process's own notification may arrive before its next request;
// postgres.TestEntitlementCacheForgetsThisProcessesChanges shows the local forgetting alone.
func TestEntitlementChangesAreObeyed(t *testing.T) {
	t.Parallel()
	cache := apitest.WithCredentialCache(time.Hour)
	env := apitest.New(t, cache)
	sibling := env.Sibling(cache)
	org := organizationIn(t, env, map[string]string{"lifecycle_status": "active", "verification_status": "verified"})
	token := apitest.OrgToken(uuid.MustParse(org))
	sub := createSubscription(t, env, token, org, productEinvoice, planEinvoiceSandbox)
	waitForService(t, env, token, sub.ID, "active")
	generate := func(on *apitest.Env) func() *apitest.Response {
		return func() *apitest.Response {
			return on.Do(apitest.Request{Method: http.MethodPost, Path: invoicePath, Token: token, Body: invoiceBody(t, org, nil)})
		}
	}
	// Both processes decide, and cache, that the product is open.
	for _, on := range []*apitest.Env{env, sibling} {
		if r := generate(on)(); r.Status != http.StatusCreated {
			t.Fatalf("generate: %d %s", r.Status, r.Body)
		}
	}

	if r := subscriptionAction(env, apitest.OperatorToken, sub.ID, "suspend", `{}`); r.Status != http.StatusOK {
		t.Fatalf("suspend: %d %s", r.Status, r.Body)
	}
	assertProblem(t, "same process, very next request", generate(env)(), http.StatusForbidden, "subscription_inactive")
	waitForStatus(t, "sibling after the suspension", http.StatusForbidden, generate(sibling))

	if r := subscriptionAction(sibling, apitest.OperatorToken, sub.ID, "resume", `{}`); r.Status != http.StatusOK {
		t.Fatalf("resume: %d %s", r.Status, r.Body)
	}
	if r := generate(sibling)(); r.Status != http.StatusCreated {
		t.Errorf("resumed, same process, very next request: %d %s", r.Status, r.Body)
	}
	waitForStatus(t, "first process after the resumption", http.StatusCreated, generate(env))

	// The operator's PATCH of an organization status is obeyed by this process's very next
	// request and, through the notification, by every other within the lease.
	patchStanding(t, env, org, `{"risk_status":"suspended_risk"}`)
	assertProblem(t, "same process, very next request after the risk suspension", generate(env)(), http.StatusForbidden, "organization_risk_suspended")
	waitForStatus(t, "sibling after the risk suspension", http.StatusForbidden, generate(sibling))
	assertProblem(t, "sibling after the risk suspension", generate(sibling)(), http.StatusForbidden, "organization_risk_suspended")
	patchStanding(t, sibling, org, `{"risk_status":"normal"}`)
	if r := generate(sibling)(); r.Status != http.StatusCreated {
		t.Errorf("risk lifted, same process, very next request: %d %s", r.Status, r.Body)
	}
	waitForStatus(t, "first process after the risk is lifted", http.StatusCreated, generate(env))
}

// patchStanding has the operator change an organization's statuses.
func patchStanding(t *testing.T, env *apitest.Env, org, body string) {
	t.Helper()
	if r := patchOrganization(env, apitest.OperatorToken, org, body); r.Status != http.StatusOK {
		t.Fatalf("PATCH organization %s: %d %s", body, r.Status, r.Body)
	}
}

// TestEntitlementWithdrawsAProductionKey: a production key created while the organization
// was verified stops working for production traffic once the operator restricts the
// organization's risk status, while its sandbox stays open.
func TestEntitlementWithdrawsAProductionKey(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, apitest.WithCredentialCache(time.Hour), func(c *httpapi.Config) { c.ProductionTrafficEnabled = true })
	f := newEntitlementFixture(t, env, env, map[string]string{"lifecycle_status": "active", "verification_status": "verified"}, "active")
	generate := func(token string) *apitest.Response {
		return f.post(token, invoicePath, invoiceBody(t, f.org, nil))
	}
	if r := generate(f.productionKey); r.Status != http.StatusCreated {
		t.Fatalf("production: %d %s", r.Status, r.Body)
	}
	patchStanding(t, env, f.org, `{"risk_status":"restricted"}`)
	assertProblem(t, "production key, very next request", generate(f.productionKey), http.StatusForbidden, "organization_risk_restricted")
	if r := generate(f.token); r.Status != http.StatusCreated {
		t.Errorf("sandbox: %d %s", r.Status, r.Body)
	}
}

// TestEntitlementRefusesRotation: rotating a key makes a new credential, refused as creating
// one is. The operator suspends the organization after its key exists.
func TestEntitlementRefusesRotation(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newEntitlementFixture(t, env, env, map[string]string{"lifecycle_status": "active"}, "")
	patchStanding(t, env, f.org, `{"lifecycle_status":"suspended"}`)
	before := f.writes()
	assertProblem(t, "rotate", f.post(f.token, "/v1/api-keys/"+f.sandboxKey+"/rotate", `{}`), http.StatusForbidden, "organization_suspended")
	if after := f.writes(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("a refused rotation wrote: %v, before %v", after, before)
	}
	if r := f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/api-keys/" + f.sandboxKey, Token: f.token}); r.Status != http.StatusOK ||
		r.JSON(t)["status"] != "active" {
		t.Errorf("the key after a refused rotation: %d %s", r.Status, r.Body)
	}
}
