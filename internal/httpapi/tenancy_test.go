package httpapi_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
	"github.com/provider/coreapi/internal/httpapi"
)

// tenancyClass is what the document promises an organization that sends an operation's valid
// request naming another organization's resources.
type tenancyClass int

const (
	// namesInPath: another organization's resource in the path is 404 not_found, answered
	// exactly as an id that names nothing.
	namesInPath tenancyClass = iota + 1
	// namesInQueryOrBody: another organization's id in the query or the body is 403 or 404.
	namesInQueryOrBody
	// operatorOnly: 403 forbidden to every organization, whatever it names.
	operatorOnly
	// ownOnly: the operation names no organization and serves the caller's own data, which
	// never includes another organization's.
	ownOnly
	// catalogue: the operation reads or takes nothing an organization owns (the catalogue,
	// the token exchange).
	catalogue
)

func (c tenancyClass) String() string {
	return [...]string{"unclassified", "names in path", "names in query or body", "operator only", "own only", "catalogue"}[c]
}

// tenancy classifies every operation of the document. An operation missing here fails
// TestEveryOperationRefusesAnotherOrganization: whoever documents one decides how it keeps
// organizations apart.
var tenancy = map[string]tenancyClass{
	"createOrganization":            operatorOnly,
	"getOrganization":               namesInPath,
	"updateOrganization":            namesInPath,
	"getOrganizationOnboarding":     namesInPath,
	"createVerifiedLoginOnboarding": operatorOnly,

	"createConnectedBusiness":           ownOnly,
	"listConnectedBusinesses":           ownOnly,
	"getConnectedBusiness":              namesInPath,
	"updateConnectedBusiness":           namesInPath,
	"createConnectedBusinessCredential": namesInPath,

	"createOAuthToken":       catalogue, // no principal: the client's own secret decides
	"listProducts":           catalogue,
	"getProduct":             catalogue,
	"listProductIncidents":   catalogue,
	"getProductIncident":     catalogue,
	"listPlans":              catalogue,
	"createProduct":          operatorOnly,
	"updateProduct":          operatorOnly,
	"openProductIncident":    operatorOnly,
	"resolveProductIncident": operatorOnly,
	"createPlan":             operatorOnly,
	"updatePlan":             operatorOnly,
	"createPlanPrice":        operatorOnly,
	"updatePlanPrice":        operatorOnly,

	"listSubscriptions":        namesInQueryOrBody,
	"createSubscription":       namesInQueryOrBody,
	"getSubscription":          namesInPath,
	"selectSubscriptionPlan":   namesInPath,
	"changeSubscriptionPlan":   namesInPath,
	"cancelSubscription":       namesInPath,
	"reactivateSubscription":   namesInPath,
	"suspendSubscription":      namesInPath,
	"resumeSubscription":       namesInPath,
	"terminateSubscription":    namesInPath,
	"getUpcomingInvoice":       namesInPath,
	"listUpcomingInvoiceLines": namesInPath,

	"listInvoices":                  namesInQueryOrBody,
	"getInvoice":                    namesInPath,
	"listInvoiceLines":              namesInPath,
	"listInvoiceTaxDocuments":       namesInPath,
	"retryInvoiceTaxDocuments":      namesInPath,
	"createInvoicePayment":          namesInPath,
	"voidInvoice":                   namesInPath,
	"markInvoiceUncollectible":      operatorOnly,
	"listPayments":                  namesInQueryOrBody,
	"getPayment":                    namesInPath,
	"getCreditBalance":              namesInQueryOrBody,
	"listCreditBalanceTransactions": namesInQueryOrBody,
	"createTestClock":               namesInQueryOrBody,
	"getTestClock":                  namesInPath,
	"advanceTestClock":              namesInPath,

	"listSupportCases":         namesInQueryOrBody,
	"createSupportCase":        namesInQueryOrBody,
	"getSupportCase":           namesInPath,
	"updateSupportCase":        operatorOnly,
	"closeSupportCase":         namesInPath,
	"listSupportCaseMessages":  namesInPath,
	"createSupportCaseMessage": namesInPath,

	"listSpendControls": namesInQueryOrBody,
	"putSpendControl":   namesInQueryOrBody,
	"getUsage":          namesInQueryOrBody,
	"createGrowthEvent": namesInQueryOrBody,
	"getGrowthSummary":  namesInQueryOrBody,
	"listRequestLogs":   namesInQueryOrBody,
	"getRequestLog":     namesInPath,
	"listAuditEvents":   namesInQueryOrBody,

	"createApiKey": namesInQueryOrBody,
	"listApiKeys":  namesInQueryOrBody,
	"getApiKey":    namesInPath,
	"revokeApiKey": namesInPath,
	"rotateApiKey": namesInPath,

	"createEgsUnit":                     namesInQueryOrBody,
	"listEgsUnits":                      namesInQueryOrBody,
	"getEgsUnit":                        namesInPath,
	"issueEgsUnitProductionCertificate": namesInPath,
	"revokeEgsUnit":                     namesInPath,
	"generateSimplifiedInvoice":         namesInQueryOrBody,
	"generateStandardInvoice":           namesInQueryOrBody,
	"validateTaxInvoice":                namesInQueryOrBody,
	"listTaxInvoices":                   namesInQueryOrBody,
	"getTaxInvoice":                     namesInPath,
	"getTaxInvoiceXml":                  namesInPath,
	"submitTaxInvoice":                  namesInPath,
	"getTaxInvoiceSubmission":           namesInPath,
	"resolveShortAddress":               ownOnly,

	"createWebhookEndpoint":       namesInQueryOrBody,
	"listWebhookEndpoints":        namesInQueryOrBody,
	"getWebhookEndpoint":          namesInPath,
	"updateWebhookEndpoint":       namesInPath,
	"deleteWebhookEndpoint":       namesInPath,
	"sendWebhookEndpointTest":     namesInPath,
	"rotateWebhookEndpointSecret": namesInPath,
	"listWebhookDeliveries":       namesInPath,
	"resendWebhookDelivery":       namesInPath,
	"recoverWebhookDeliveries":    namesInPath,
	"listEvents":                  namesInQueryOrBody,
	"streamEvents":                namesInQueryOrBody,
	"getEvent":                    namesInPath,
}

// saysOperatorOnly matches the sentence with which a description reserves its operation for
// the operator ("Operator only", "**Who may:** the operator only").
var saysOperatorOnly = regexp.MustCompile(`(?i)(^|[.*:]\s*)(the )?operator only`)

// TestEveryOperationRefusesAnotherOrganization walks every operation of openapi.yaml and sends
// its valid request, built as the spec-driven fuzzing builds it over the same fixtures (which
// belong to other organizations), with the credential of an organization that holds every
// scope but owns none of them: an API key of a standard organization, an API key of a platform
// organization that is not the fixtures' platform, and a credential of a connected business
// (a tenant, whose platform owns the connected-business fixtures). Per class:
//
//   - another organization's resource in the path: 404 not_found, with the same problem as a
//     random id (no existence leak);
//   - another organization's id in the query or the body: 403 or 404, and without the id
//     (where the document allows that) nothing of the other organization's comes back;
//   - operator-only operations (their descriptions say so): 403 forbidden, also for a random id;
//   - operations that name no organization: nothing of the fixtures' organizations comes back.
//
// No refused request changes a row of any table. A connected business's credential holds
// only its product's scope, so it is held to "refused, as for a random id" rather than to the
// exact status.
func TestEveryOperationRefusesAnotherOrganization(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	doc, err := httpapi.LoadDocument()
	if err != nil {
		t.Fatal(err)
	}
	var unclassified []string
	operations, perClass := 0, map[tenancyClass]int{}
	for _, path := range doc.Paths.InMatchingOrder() {
		for _, op := range doc.Paths.Value(path).Operations() {
			operations++
			class, ok := tenancy[op.OperationID]
			if !ok {
				unclassified = append(unclassified, op.OperationID)
				continue
			}
			perClass[class]++
			if says := saysOperatorOnly.MatchString(op.Description); says != (class == operatorOnly) {
				t.Errorf("%s is classified %q, but its description says operator only: %v", op.OperationID, class, says)
			}
		}
	}
	if len(unclassified) > 0 {
		slices.Sort(unclassified)
		t.Fatalf("operations without a tenancy class (add them to the tenancy map): %s", strings.Join(unclassified, ", "))
	}
	if len(tenancy) != operations {
		t.Errorf("the tenancy map has %d operations, the document %d: remove those it no longer has", len(tenancy), operations)
	}
	t.Logf("%d operations: %d name in the path, %d in the query or body, %d operator only, %d own only, %d catalogue", operations,
		perClass[namesInPath], perClass[namesInQueryOrBody], perClass[operatorOnly], perClass[ownOnly], perClass[catalogue])

	fx := seedFuzzFixtures(t, env)
	seedTenancyFixtures(t, env, fx)
	owned := ownedIDs(fx)
	stranger := createOrganization(t, env, minimalOrganization)["id"].(string)
	otherPlatform := createOrganization(t, env, orgBody(t, "organization_type", `"reseller"`))["id"].(string)
	// A tenant of the fixtures' platform: its platform's and its sibling's resources are not its own.
	sibling := call(t, env, http.MethodPost, "/v1/connected-businesses", "dev:org:"+fx.platform, businessBody("tenancy-sibling", nil), http.StatusCreated)
	tenant := call(t, env, http.MethodPost, "/v1/connected-businesses/"+sibling["id"].(string)+"/credentials", "dev:org:"+fx.platform,
		`{"product":"einvoice"}`, http.StatusCreated)["full_key"].(string)
	waitForJobs(t, env)

	type principal = struct {
		name, token, self string
		everyScope        bool
	}
	principals := []principal{
		{"Organization", allScopesKey(t, env, stranger, allScopes(doc)), stranger, true},
		{"OtherPlatform", allScopesKey(t, env, otherPlatform, allScopes(doc)), otherPlatform, true},
		{"PlatformTenant", tenant, fx.platform, false},
	}
	// walk probes, as p, every operation whose class is one of classes.
	walk := func(t *testing.T, p principal, classes ...tenancyClass) {
		stats := map[string]int{}
		for _, path := range doc.Paths.InMatchingOrder() {
			item := doc.Paths.Value(path)
			for _, method := range methodsOf(item) {
				op := item.GetOperation(method)
				if !slices.Contains(classes, tenancy[op.OperationID]) {
					continue
				}
				t.Run(op.OperationID, func(t *testing.T) {
					f := &opFuzzer{t: t, env: env, fx: fx, method: method, path: path, item: item, op: op, stats: stats, principal: p.token}
					(&tenancyProbe{opFuzzer: f, owned: owned, self: p.self, everyScope: p.everyScope}).run(tenancy[op.OperationID])
				})
			}
		}
	}
	// The refusals change nothing, so the principals send them side by side; the operations
	// that serve the caller's own data may write, so they come after, one principal at a time.
	t.Run("Refusals", func(t *testing.T) {
		for _, p := range principals {
			t.Run(p.name, func(t *testing.T) {
				t.Parallel()
				walk(t, p, namesInPath, namesInQueryOrBody, operatorOnly)
			})
		}
	})
	t.Run("OwnData", func(t *testing.T) {
		for _, p := range principals {
			t.Run(p.name, func(t *testing.T) { walk(t, p, ownOnly, catalogue) })
		}
	})
	t.Run("Platforms", func(t *testing.T) { platformTenancy(t, env, fx, otherPlatform) })
}

// seedTenancyFixtures adds what the fuzzing's fixtures leave for the path to name at random:
// a request log of fx.org, and a submitted tax document (a document never submitted has no
// submission to read, for its owner either).
func seedTenancyFixtures(t *testing.T, env *apitest.Env, fx *fuzzFixtures) {
	t.Helper()
	submit(t, env, "dev:org:"+fx.org, fx.invoice)
	waitForJobs(t, env)
	env.FlushRequestLogs()
	var log string
	if err := env.Pool.QueryRow(t.Context(), "SELECT id::text FROM request_logs WHERE organization_id = $1 LIMIT 1", fx.org).Scan(&log); err != nil {
		t.Fatalf("a request log of the fixtures' organization: %v", err)
	}
	fx.ids["request-logs"] = log
}

// ownedIDs are the ids of the fixtures that organizations own (the catalogue's are
// everyone's): a response to another organization must mention none of them.
func ownedIDs(fx *fuzzFixtures) map[string]bool {
	owned := map[string]bool{}
	for _, id := range []string{fx.org, fx.platform, fx.business, fx.subscription, fx.supportCase, fx.apiKey, fx.invoice, fx.standardInvoice, fx.egs.org} {
		owned[id] = true
	}
	for k, id := range fx.ids {
		if k != "products" && k != "plans" && k != "incident_id" {
			owned[id] = true
		}
	}
	for _, id := range fx.byOperation {
		owned[id] = true
	}
	return owned
}

// allScopesKey is a sandbox API key of org holding every scope of the document.
func allScopesKey(t *testing.T, env *apitest.Env, org string, scopes []string) string {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"organization_id": org, "name": "every scope", "environment": "sandbox", "scopes": scopes})
	return call(t, env, http.MethodPost, "/v1/api-keys", apitest.OperatorToken, string(b), http.StatusCreated)["full_key"].(string)
}

// tenancyProbe sends one operation's valid request as another organization.
type tenancyProbe struct {
	*opFuzzer
	owned      map[string]bool
	self       string // the caller's own organization
	everyScope bool   // the principal holds every scope (a tenant's credential holds its product's)
}

func (p *tenancyProbe) run(class tenancyClass) {
	t := p.t
	base := p.base()
	if q := p.orgQuery(); q != nil && !q.Required {
		base.query[q.Name] = p.orgID() // name the other organization even where the example does not
	}
	switch class {
	case ownOnly:
		p.nothingOwned("the caller's own", p.send("tenancy", base))
		waitForJobs(t, p.env)
		return
	case catalogue:
		if resp := p.send("tenancy", base); resp.Status >= 500 {
			t.Errorf("%d %s", resp.Status, resp.Body)
		}
		return
	}
	// Every request below is refused or reads: no row of any table changes.
	waitForJobs(t, p.env)
	before := p.rows()
	defer func() {
		waitForJobs(t, p.env)
		if after := p.rows(); !mapsEqual(before, after) {
			for name, digest := range after {
				if before[name] != digest {
					t.Errorf("table %s changed (by this refusal, or by one of another principal's walk beside it)", name)
				}
			}
		}
	}()
	switch class {
	case namesInPath, operatorOnly:
		status, code := http.StatusForbidden, "forbidden"
		if class == namesInPath {
			status, code = http.StatusNotFound, "not_found"
			for name, id := range base.path {
				if !p.owned[id] && p.isID(name) {
					t.Fatalf("{%s} = %s names no fixture: seed one (else the refusal proves nothing)", name, id)
				}
			}
		}
		resp := p.refused(base)
		if p.everyScope {
			assertProblem(t, class.String(), resp, status, code)
		}
		p.sameAsUnknown(base, resp)
	case namesInQueryOrBody:
		if !p.namesAnOrganization(base) {
			t.Fatalf("the valid request names no organization_id: %v %s", base.query, mustJSON(base.body))
		}
		if resp := p.refused(base); resp.Status != http.StatusForbidden && resp.Status != http.StatusNotFound {
			t.Errorf("another organization's id: %d, want 403 or 404: %s", resp.Status, resp.Body)
		}
		if q := p.orgQuery(); q != nil && !q.Required {
			own := clone(base)
			delete(own.query, q.Name)
			p.nothingOwned("without organization_id", p.send("tenancy", own))
		}
		p.foreignIDsOfItsOwn(base)
	default:
		t.Fatalf("%s has no tenancy class", p.op.OperationID)
	}
}

// foreignIDs name, for a query parameter or top-level body property, a resource of the
// fixtures' organizations of the kind it names.
var foreignIDs = map[string]func(*fuzzFixtures) string{
	"subscription_id": func(fx *fuzzFixtures) string { return fx.subscription },
	"invoice_id":      func(fx *fuzzFixtures) string { return fx.ids["invoices"] },
	"api_key_id":      func(fx *fuzzFixtures) string { return fx.apiKey },
	"resource_id":     func(fx *fuzzFixtures) string { return fx.apiKey },
}

// foreignIDsOfItsOwn sends the request with the caller's own organization_id and another
// organization's ids elsewhere (a filter, a body's reference): a read finds nothing of theirs,
// a change is refused, and either is answered as for ids that name nothing.
func (p *tenancyProbe) foreignIDsOfItsOwn(base request) {
	foreign, unknown := clone(base), clone(base)
	var ids []string
	nameForeign := func(set func(id string), setUnknown func(id string), id string) {
		set(id)
		random := uuid.NewString()
		setUnknown(random)
		ids = append(ids, id, random)
	}
	if _, ok := foreign.query["organization_id"]; ok {
		foreign.query["organization_id"], unknown.query["organization_id"] = p.self, p.self
	}
	fb, _ := foreign.body.(map[string]any)
	ub, _ := unknown.body.(map[string]any)
	if fb != nil && fb["organization_id"] != nil {
		fb["organization_id"], ub["organization_id"] = p.self, p.self
	}
	for _, ref := range p.params() {
		if f, ok := foreignIDs[ref.Value.Name]; ok && ref.Value.In == "query" {
			nameForeign(func(id string) { foreign.query[ref.Value.Name] = id }, func(id string) { unknown.query[ref.Value.Name] = id }, f(p.fx))
		}
	}
	for field, f := range foreignIDs {
		if fb == nil {
			break
		}
		if _, ok := p.bodySchema().Properties[field]; ok {
			nameForeign(func(id string) { fb[field] = id }, func(id string) { ub[field] = id }, f(p.fx))
		}
	}
	if ref, ok := fb["billing_reference"].(map[string]any); ok {
		nameForeign(func(id string) { ref["invoice_id"] = id }, func(id string) { ub["billing_reference"].(map[string]any)["invoice_id"] = id }, p.fx.standardInvoice)
	}
	if len(ids) == 0 {
		return // the operation names nothing else
	}
	got, want := p.send("tenancy", foreign), p.send("tenancy", unknown)
	p.nothingOwned("its own organization, another's ids", got)
	if got.Status < 300 && p.method != http.MethodGet {
		p.t.Errorf("its own organization with another's ids: %d %.600s", got.Status, got.Body)
	}
	if got.Status >= 400 || want.Status >= 400 {
		if g, w := problemShape(got, ids...), problemShape(want, ids...); got.Status != want.Status || g != w {
			p.t.Errorf("another organization's ids are told apart from unknown ones:\n got %d %s\nwant %d %s", got.Status, g, want.Status, w)
		}
	}
}

// orgQuery is the operation's organization_id query parameter, if it has one.
func (p *tenancyProbe) orgQuery() *openapi3.Parameter {
	for _, ref := range p.params() {
		if ref.Value.In == "query" && ref.Value.Name == "organization_id" {
			return ref.Value
		}
	}
	return nil
}

func (p *tenancyProbe) isID(param string) bool {
	for _, ref := range p.params() {
		if ref.Value.Name == param && ref.Value.In == "path" {
			return ref.Value.Schema.Value.Format == "uuid"
		}
	}
	return false
}

func (p *tenancyProbe) namesAnOrganization(r request) bool {
	if r.query["organization_id"] != "" {
		return true
	}
	m, ok := r.body.(map[string]any)
	return ok && m["organization_id"] != nil
}

// refused sends r, which must be refused: never 2xx, never 5xx.
func (p *tenancyProbe) refused(r request) *apitest.Response {
	p.t.Helper()
	resp := p.send("tenancy", r)
	if resp.Status < 400 || resp.Status >= 500 {
		p.t.Errorf("not refused: %d %s\nbody: %s", resp.Status, resp.Body, mustJSON(r.body))
	}
	return resp
}

// rows tells whether a row of any watched table was written: its count and the newest
// transaction that wrote one of its rows (an insert, an update or a delete moves one of them;
// rolled back work moves neither). Credentials, whose last use every authenticated request
// records, are compared by content without it.
func (p *tenancyProbe) rows() map[string]string {
	out := p.perTable("count(*) || ' ' || coalesce(max(r.xmin::text::bigint), 0)")
	var keys string
	if err := p.env.Pool.QueryRow(p.t.Context(), `SELECT count(*) || ' ' || md5(coalesce(string_agg((to_jsonb(r) - 'last_used_at')::text, ','
		ORDER BY r.id), '')) FROM api_keys r`).Scan(&keys); err != nil {
		p.t.Fatal(err)
	}
	out["api_keys"] = keys
	return out
}

// sameAsUnknown: the refusal of another organization's resource is the refusal of ids that
// name nothing, apart from the request id and the ids a detail quotes.
func (p *tenancyProbe) sameAsUnknown(base request, got *apitest.Response) {
	p.t.Helper()
	unknown := clone(base)
	var ids []string
	for name, id := range base.path {
		if p.isID(name) {
			unknown.path[name] = uuid.NewString()
			ids = append(ids, id, unknown.path[name])
		}
	}
	if len(ids) == 0 {
		return
	}
	want := p.refused(unknown)
	if g, w := problemShape(got, ids...), problemShape(want, ids...); g != w {
		p.t.Errorf("another organization's resource is told apart from an unknown one:\n got %s\nwant %s", g, w)
	}
}

// nothingOwned: an answer to another organization is a refusal or mentions none of the
// fixtures' owned ids.
func (p *tenancyProbe) nothingOwned(what string, resp *apitest.Response) {
	p.t.Helper()
	if resp.Status >= 500 {
		p.t.Errorf("%s: %d %s", what, resp.Status, resp.Body)
	}
	if resp.Status >= 300 {
		return
	}
	for id := range p.owned {
		if strings.Contains(string(resp.Body), id) {
			p.t.Errorf("%s: %d mentions %s, another organization's: %.600s", what, resp.Status, id, resp.Body)
		}
	}
}

// platformTenancy: a platform organization acts on its own connected businesses' documents, a
// different platform does not, and a tenant reads neither its platform's documents nor a
// sibling's.
func platformTenancy(t *testing.T, env *apitest.Env, fx *fuzzFixtures, otherPlatform string) {
	platform := "dev:org:" + fx.platform
	p := &platformFixture{env: env, orgID: fx.platform, token: platform}
	_, key1 := einvoiceCredential(t, p, "tenancy-b1")
	_, key2 := einvoiceCredential(t, p, "tenancy-b2")
	business := generateInvoice(t, env, key1, invoiceBody(t, fx.platform, nil)).Invoice.ID
	own := generateInvoice(t, env, platform, invoiceBody(t, fx.platform, nil)).Invoice.ID
	waitForJobs(t, env)
	get := func(token, path string) *apitest.Response {
		return env.Do(apitest.Request{Method: http.MethodGet, Path: path, Token: token})
	}
	for _, path := range []string{"/v1/taxauth/invoices/" + business, "/v1/taxauth/invoices/" + business + "/xml", "/v1/connected-businesses/" + fx.business} {
		if r := get(platform, path); r.Status != http.StatusOK {
			t.Errorf("the platform reads its tenant's %s: %d %s", path, r.Status, r.Body)
		}
	}
	if r := get(key1, "/v1/taxauth/invoices/"+business); r.Status != http.StatusOK {
		t.Errorf("the tenant reads its own document: %d %s", r.Status, r.Body)
	}
	other := "dev:org:" + otherPlatform
	for name, c := range map[string]struct{ token, id string }{
		"OtherPlatformReadsTenant": {other, business},
		"TenantReadsPlatform":      {key1, own},
		"TenantReadsSibling":       {key2, business},
	} {
		for _, suffix := range []string{"", "/xml"} {
			path := "/v1/taxauth/invoices/" + c.id + suffix
			resp := get(c.token, path)
			assertProblem(t, name+" "+path, resp, http.StatusNotFound, "not_found")
			random := uuid.NewString()
			unknown := get(c.token, "/v1/taxauth/invoices/"+random+suffix)
			if g, w := problemShape(resp, c.id), problemShape(unknown, random); g != w {
				t.Errorf("%s %s: told apart from an unknown id:\n got %s\nwant %s", name, path, g, w)
			}
		}
	}
	// The other platform's archive holds none of the platform's documents, and naming the
	// platform is refused.
	list := get(other, "/v1/taxauth/invoices?organization_id="+otherPlatform)
	if list.Status != http.StatusOK || strings.Contains(string(list.Body), business) || strings.Contains(string(list.Body), own) {
		t.Errorf("the other platform's archive: %d %.600s", list.Status, list.Body)
	}
	if r := get(other, "/v1/taxauth/invoices?organization_id="+fx.platform); r.Status != http.StatusForbidden && r.Status != http.StatusNotFound {
		t.Errorf("the other platform names the platform: %d %s", r.Status, r.Body)
	}
}
