package httpapi_test

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
	"github.com/provider/coreapi/internal/httpapi"
	"github.com/provider/coreapi/internal/jobs"
)

// TestSpecDrivenFuzzing walks every operation of openapi.yaml and derives its requests from
// the document alone, so a new operation is covered the day it is documented:
//
//   - valid requests (the documented example, only the required fields, every field, each
//     value of each enum), with the ids of real resources seeded per operation family: never
//     400, never 5xx;
//   - invalid requests, one broken constraint at a time (unknown property, a value outside
//     an enum, each bound off by one, a wrong type, a missing required field, a bad format,
//     in the body and in every parameter): always 400, and no row of any table changes;
//   - hostile text in every free-text string of the body and the query (SQL and header
//     injection, markup, templates, control and right-to-left characters): stored and
//     echoed verbatim or refused, never a 5xx; a NUL character anywhere: 400, nothing stored;
//     escaped halves of surrogate pairs in every free-text string and free-form object: never a 5xx;
//   - huge numbers in every number, deep nesting in every object, a body over 1 MiB (413),
//     and every method the path does not declare (405 with Allow).
//
// Every response is validated against the document by apitest.
func TestSpecDrivenFuzzing(t *testing.T) {
	t.Parallel()
	doc, err := httpapi.LoadDocument()
	if err != nil {
		t.Fatal(err)
	}
	paths := doc.Paths.InMatchingOrder()
	for shard := range fuzzShards {
		t.Run(fmt.Sprintf("shard %d of %d", shard+1, fuzzShards), func(t *testing.T) {
			t.Parallel()
			var mine []string
			for i, path := range paths {
				if i%fuzzShards == shard {
					mine = append(mine, path)
				}
			}
			fuzzPaths(t, doc, mine)
		})
	}
}

// fuzzShards is how many servers, each over its own database and fixtures, share the document's
// paths: the shards run in parallel, so the longest test of the package is a third as long,
// and "no row of any table changes" still holds within each database.
const fuzzShards = 3

// fuzzPaths fuzzes every operation of paths, and the methods they lack, on a server of its own.
func fuzzPaths(t *testing.T, doc *openapi3.T, paths []string) {
	env := apitest.New(t)
	fx := seedFuzzFixtures(t, env)
	stats := map[string]int{}
	for _, path := range paths {
		item := doc.Paths.Value(path)
		methods := methodsOf(item)
		for _, method := range methods {
			op := item.GetOperation(method)
			t.Run(op.OperationID, func(t *testing.T) {
				f := &opFuzzer{t: t, env: env, fx: fx, method: method, path: path, item: item, op: op, stats: stats}
				f.run()
			})
		}
		t.Run("methods "+path, func(t *testing.T) { unknownMethods(t, env, fx, path, methods, stats) })
	}
	// Every authenticated request was logged: hostile paths (a NUL, an invalid byte) must not
	// fail the batch of logs they are written with.
	env.FlushRequestLogs()
	if logged, want := env.Count("SELECT count(*) FROM request_logs"), stats["authenticated"]; logged < want {
		t.Errorf("%d request logs for %d authenticated requests: batches were lost", logged, want)
	}
	delete(stats, "authenticated")
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range stats {
			if !yield(k) {
				return
			}
		}
	})
	var parts []string
	total := 0
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, stats[k]))
		total += stats[k]
	}
	t.Logf("spec fuzzing figures: %d requests: %s", total, strings.Join(parts, ", "))
}

// methodsOf lists the methods of a path's operations, in order.
func methodsOf(item *openapi3.PathItem) []string {
	return slices.Sorted(func(yield func(string) bool) {
		for m := range item.Operations() {
			if !yield(m) {
				return
			}
		}
	})
}

// fuzzFixtures are real resources the valid requests name.
type fuzzFixtures struct {
	org, platform, business, subscription, supportCase, apiKey, invoice string
	price                                                               string            // a price of the draft plan ids["plans"]
	standardInvoice                                                     string            // the original a note's billing_reference.invoice_id names
	ids                                                                 map[string]string // first path segment (or parameter name) -> id
	// byOperation gives operations their own resource where another operation's valid
	// requests would leave the shared one in a state that refuses theirs (a case that
	// closeSupportCase or a PATCH to closed has closed takes no messages).
	byOperation map[string]string // operationId -> id
	egs         egsFuzzFixtures   // the EGS unit family's organization and CSR
}

const (
	fuzzProduct = "0193a000-0000-7000-8000-000000000001" // the seeded e-invoice product
	fuzzPlan    = "0193a000-0000-7000-8000-000000000103" // one of its sandbox plans
)

func seedFuzzFixtures(t *testing.T, env *apitest.Env) *fuzzFixtures {
	t.Helper()
	fx := &fuzzFixtures{}
	fx.org = createOrganization(t, env, minimalOrganization)["id"].(string)
	fx.platform = createOrganization(t, env, orgBody(t, "organization_type", `"reseller"`))["id"].(string)
	post := func(path, token, body string) string {
		t.Helper()
		r := env.Do(apitest.Request{Method: http.MethodPost, Path: path, Token: token, Body: body})
		if r.Status != http.StatusCreated {
			t.Fatalf("seed %s: %d %s", path, r.Status, r.Body)
		}
		return r.JSON(t)["id"].(string)
	}
	supportCase := func() string {
		return post("/v1/support-cases", apitest.OperatorToken,
			`{"organization_id":"`+fx.org+`","subject":"Fuzz","description":"Seeded by the fuzzing test.","severity":"low","category":"technical"}`)
	}
	fx.business = post("/v1/connected-businesses", "dev:org:"+fx.platform, businessBody("fuzz-1", nil))
	fx.subscription = post("/v1/subscriptions", apitest.OperatorToken,
		`{"organization_id":"`+fx.org+`","product_id":"`+fuzzProduct+`","plan_id":"`+fuzzPlan+`","requested_configuration":{"branches":1}}`)
	fx.supportCase = supportCase()
	fx.apiKey = post("/v1/api-keys", apitest.OperatorToken,
		`{"organization_id":"`+fx.org+`","name":"fuzz","environment":"sandbox","scopes":["organizations:read"]}`)
	waitForJobs(t, env) // the product's operations wait for the subscription's provisioning
	r := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/taxauth/invoices/generate/simplified", Token: apitest.OrgToken(uuid.MustParse(fx.org)),
		Body: invoiceBody(t, fx.org, nil)})
	if r.Status != http.StatusCreated {
		t.Fatalf("seed invoice: %d %s", r.Status, r.Body)
	}
	fx.invoice = r.JSON(t)["invoice"].(map[string]any)["id"].(string)
	// generateStandardInvoice's example is a credit note of a standard invoice.
	r = env.Do(apitest.Request{Method: http.MethodPost, Path: standardInvoicePath, Token: apitest.OrgToken(uuid.MustParse(fx.org)),
		Body: standardBody(t, fx.org, "standard_tax_invoice", nil)})
	if r.Status != http.StatusCreated {
		t.Fatalf("seed standard invoice: %d %s", r.Status, r.Body)
	}
	fx.standardInvoice = r.JSON(t)["invoice"].(map[string]any)["id"].(string)
	// The organization operations get an organization of their own: updateOrganization's
	// valid requests walk its statuses (to archived), which must not change what the other
	// families' requests for fx.org may do.
	administered := createOrganization(t, env, minimalOrganization)["id"].(string)
	fx.ids = map[string]string{
		"organizations": administered, "connected-businesses": fx.business, "subscriptions": fx.subscription,
		"support-cases": fx.supportCase, "api-keys": fx.apiKey, "taxauth": fx.invoice, "products": fuzzProduct,
	}
	messages := supportCase()
	// The onboarding read needs an organization onboarded through a verified login.
	onboarded := onboard(env, apitest.OperatorToken, verifiedLogin("fuzz-onboarded", nil))
	if onboarded.Status != http.StatusCreated {
		t.Fatalf("seed onboarding: %d %s", onboarded.Status, onboarded.Body)
	}
	fx.byOperation = map[string]string{
		"updateSupportCase": supportCase(), "createSupportCaseMessage": messages, "listSupportCaseMessages": messages,
		"getOrganizationOnboarding": onboarded.JSON(t)["organization"].(map[string]any)["id"].(string),
	}
	seedInvoiceFixtures(t, env, fx)
	seedEGSFixtures(t, env, fx)
	seedWebhookFixtures(t, env, fx, post)
	seedCatalogueFixtures(t, env, fx)
	seedWebhookFuzzFixtures(t, env, fx)
	// The test clock operations advance a clock of an organization of their own (the clock's
	// example time is before the examples of advanceTestClock); createTestClock's valid
	// requests put fx.org on one.
	fx.ids["test-clocks"] = post("/v1/test-clocks", apitest.OperatorToken,
		`{"organization_id":"`+createOrganization(t, env, minimalOrganization)["id"].(string)+`","frozen_time":"2025-03-01T09:30:00Z"}`)
	// The incident operations work on the catalogue fixture's product, which no subscription
	// uses: an open incident there degrades nothing the other families' requests rely on.
	fx.ids["incident_id"] = post("/v1/products/"+fx.ids["products"]+"/incidents", apitest.OperatorToken, `{"summary":"Seeded by the fuzzing test."}`)
	waitForJobs(t, env)
	return fx
}

// seedInvoiceFixtures gives the billing family an invoice to read and list, a payment (a
// declined one, so the invoice stays payable), and each operation that moves an invoice an
// invoice of its own: a paid invoice takes no further payment and cannot be voided. Each
// invoice is the first of a selection on its own organization's subscription, because
// selecting a plan again voids the open invoice of the selection before.
func seedInvoiceFixtures(t *testing.T, env *apitest.Env, fx *fuzzFixtures) {
	t.Helper()
	invoice := func() string {
		org := createOrganization(t, env, minimalOrganization)["id"].(string)
		sub := call(t, env, http.MethodPost, "/v1/subscriptions", apitest.OperatorToken, subscriptionBody(org, productEinvoice, planEinvoiceSandbox), http.StatusCreated)
		sel := call(t, env, http.MethodPost, "/v1/subscriptions/"+sub["id"].(string)+"/select-plan", apitest.OperatorToken,
			fmt.Sprintf(`{"plan_id":%q}`, planEinvoiceGrowthMonthly), http.StatusOK)
		return sel["invoice"].(map[string]any)["id"].(string)
	}
	fx.ids["invoices"] = invoice()
	fx.ids["payments"] = call(t, env, http.MethodPost, "/v1/invoices/"+fx.ids["invoices"]+"/payments", apitest.OperatorToken,
		`{"amount":91885,"payment_method":"pm_sandbox_declined"}`, http.StatusCreated)["id"].(string)
	for _, op := range []string{"createInvoicePayment", "voidInvoice", "markInvoiceUncollectible"} {
		fx.byOperation[op] = invoice()
	}
	// The retry's valid requests need a failed tax document (the job refuses the bad VAT
	// number by the time waitForJobs returns); the first one retries it, the rest are 409.
	_, _, failed := billedOrganization(t, env, buyerWithBadVAT)
	fx.byOperation["retryInvoiceTaxDocuments"] = failed["id"].(string)
}

// waitForJobs waits until background work started by earlier requests is done, so a row
// count taken afterwards moves only with the request under test.
func waitForJobs(t testing.TB, env *apitest.Env) {
	t.Helper()
	deadline := time.Now().Add(eventually)
	for env.Count(`SELECT count(*) FROM river_job WHERE kind IN ('provision_subscription', 'deliver_webhook', 'issue_tax_documents')
		AND state IN ('available', 'running') AND scheduled_at <= now()`) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("provisioning or webhook jobs still pending after %s", eventually)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// opFuzzer fuzzes one operation.
type opFuzzer struct {
	t            *testing.T
	env          *apitest.Env
	fx           *fuzzFixtures
	method, path string
	item         *openapi3.PathItem
	op           *openapi3.Operation
	stats        map[string]int
	tables       []string
	// principal, when set, sends the requests instead of the family's own principal (token):
	// the tenancy test sends the same valid requests as another organization.
	principal string
}

// token is the principal of the operation's valid requests: the operator, but a platform
// organization for the connected-business family, which only such organizations use.
func (f *opFuzzer) token() string {
	if f.principal != "" {
		return f.principal
	}
	if strings.HasPrefix(f.path, "/v1/connected-businesses") {
		return "dev:org:" + f.fx.platform
	}
	if strings.HasPrefix(f.path, egsUnitsPath) { // tenant only
		return "dev:org:" + f.fx.egs.org
	}
	return apitest.OperatorToken
}

func (f *opFuzzer) orgID() string {
	if strings.HasPrefix(f.path, "/v1/connected-businesses") {
		return f.fx.platform
	}
	if strings.HasPrefix(f.path, egsUnitsPath) {
		return f.fx.egs.org
	}
	return f.fx.org
}

// request is one generated request: parameters by name and a JSON body (nil: none).
type request struct {
	path, query, header map[string]string
	body                any
	rawBody             string // sent instead of body when set
	contentType         string // of rawBody; application/json when empty
}

func (f *opFuzzer) params() openapi3.Parameters {
	return append(append(openapi3.Parameters{}, f.item.Parameters...), f.op.Parameters...)
}

func (f *opFuzzer) bodySchema() *openapi3.Schema {
	if f.op.RequestBody == nil {
		return nil
	}
	mt := f.op.RequestBody.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil {
		return nil
	}
	return mt.Schema.Value
}

// base is the valid request every variant starts from: parameters from the fixtures and
// examples, the body from the document's example with real ids (or generated).
func (f *opFuzzer) base() request {
	req := request{path: map[string]string{}, query: map[string]string{}, header: map[string]string{}}
	for _, ref := range f.params() {
		p := ref.Value
		switch p.In {
		case "path":
			req.path[p.Name] = f.pathValue(p)
		case "query":
			if p.Required || p.Example != nil || (p.Schema != nil && p.Schema.Value.Example != nil) {
				req.query[p.Name] = f.paramValue(p)
			}
		}
	}
	if s := f.bodySchema(); s != nil {
		var body any
		mt := f.op.RequestBody.Value.Content.Get("application/json")
		if ex := mt.Example; ex != nil {
			b, _ := json.Marshal(ex)
			_ = json.Unmarshal(b, &body)
		} else {
			body = f.generate(s, "", true)
		}
		req.body = f.withFixtures(body, s)
	}
	return req
}

func (f *opFuzzer) pathValue(p *openapi3.Parameter) string {
	s := p.Schema.Value
	if len(s.Enum) > 0 {
		return fmt.Sprint(s.Enum[0])
	}
	if id, ok := f.fx.byOperation[f.op.OperationID]; ok && s.Format == "uuid" {
		return id
	}
	if p.Name == "price_id" {
		return f.fx.price
	}
	if s.Format == "uuid" {
		if id, ok := f.fx.ids[p.Name]; ok { // a parameter named for its resource, as incident_id
			return id
		}
		seg := strings.Split(strings.TrimPrefix(f.path, "/v1/"), "/")[0]
		if id, ok := f.fx.ids[seg]; ok {
			return id
		}
		return uuid.NewString()
	}
	return f.paramValue(p)
}

func (f *opFuzzer) paramValue(p *openapi3.Parameter) string {
	s := p.Schema.Value
	if p.Name == "organization_id" {
		return f.orgID()
	}
	if p.Name == "product_id" && s.Format == "uuid" {
		return fuzzProduct
	}
	if p.Example != nil {
		return fmt.Sprint(p.Example)
	}
	v := f.generate(s, p.Name, true)
	if str, ok := v.(string); ok {
		return str
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// withFixtures replaces ids in a body by the fixtures' (walking the schema).
func (f *opFuzzer) withFixtures(v any, s *openapi3.Schema) any {
	s = resolve(s)
	m, ok := v.(map[string]any)
	if !ok || s == nil {
		return v
	}
	for name, prop := range s.Properties {
		cur, present := m[name]
		if !present || cur == nil {
			continue
		}
		ps := resolve(prop.Value)
		switch {
		case name == "organization_id":
			m[name] = f.orgID()
		case name == "product_id" && ps.Format == "uuid":
			m[name] = fuzzProduct
		case name == "plan_id" && ps.Format == "uuid":
			m[name] = fuzzPlan
		case name == "invoice_id" && ps.Format == "uuid":
			m[name] = f.fx.standardInvoice
		case name == "csr" || name == "private_key":
			m[name] = f.fx.egs.registration[name]
		case ps.Type.Is("object"):
			m[name] = f.withFixtures(cur, ps)
		}
	}
	return m
}

// resolve reads through a lone allOf, the document's way of giving a $ref a default.
func resolve(s *openapi3.Schema) *openapi3.Schema {
	if s != nil && len(s.AllOf) == 1 && s.Type == nil {
		return s.AllOf[0].Value
	}
	return s
}

// generate builds a valid value of s: its example, default or first enum value, else the
// smallest value its bounds allow. Objects get their required properties, or all of them.
func (f *opFuzzer) generate(s *openapi3.Schema, name string, requiredOnly bool) any {
	s = resolve(s)
	if len(s.AnyOf) > 0 {
		return f.generate(s.AnyOf[0].Value, name, requiredOnly)
	}
	if len(s.OneOf) > 0 {
		return f.generate(s.OneOf[0].Value, name, requiredOnly)
	}
	if sample, ok := semanticFields[name]; ok && s.Type.Is("string") {
		return sample
	}
	switch name {
	case "organization_id":
		return f.orgID()
	case "product_id":
		if s.Format == "uuid" {
			return fuzzProduct
		}
	case "plan_id":
		return fuzzPlan
	}
	if s.Example != nil {
		return s.Example
	}
	if s.Default != nil {
		return s.Default
	}
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	switch {
	case s.Type.Is("object"):
		m := map[string]any{}
		for pname, p := range s.Properties {
			if requiredOnly && !slices.Contains(s.Required, pname) {
				continue
			}
			m[pname] = f.generate(p.Value, pname, requiredOnly)
		}
		return m
	case s.Type.Is("array"):
		n := max(int(s.MinItems), 1)
		if requiredOnly {
			n = int(s.MinItems)
		}
		out := make([]any, n)
		for i := range out {
			out[i] = f.generate(s.Items.Value, name, requiredOnly)
		}
		return out
	case s.Type.Is("integer"), s.Type.Is("number"):
		v := 1.0
		if s.Min != nil {
			v = *s.Min
			if s.ExclusiveMin.Bool != nil && *s.ExclusiveMin.Bool {
				v++
			}
		}
		return v
	case s.Type.Is("boolean"):
		return true
	}
	switch s.Format {
	case "uuid":
		return uuid.NewString()
	case "date-time":
		return "2099-01-01T00:00:00Z" // in the future, where an expiry must be
	case "date":
		return "2026-01-01"
	case "email":
		return "fuzz@example.com"
	case "uri":
		return "https://hooks.example.com/events"
	}
	n := max(int(s.MinLength), 4)
	if s.MaxLength != nil && int(*s.MaxLength) < n {
		n = int(*s.MaxLength)
	}
	if s.Pattern != "" {
		// The first sample the schema itself accepts.
		for _, c := range patternSamples {
			if s.VisitJSON(c) == nil {
				return c
			}
		}
	}
	return strings.Repeat("a", n)
}

// semanticFields are free-text fields of the contract that the server checks further (an
// address, an origin, a policy name): a sample the server accepts. Hostile text there is a
// 400 naming the field. Listed in docs/reliability.md as gaps of the contract.
var semanticFields = map[string]string{
	"allowed_ips":       "203.0.113.0/24",
	"allowed_origins":   "https://app.example.com",
	"rate_limit_policy": "standard",
}

// patternSamples are tried, in order, for a string with a pattern and no example.
var patternSamples = []string{"SA", "sa", "en", "SAR", "RRRD2929", "310123456700003", "1010123456", "12214", "2929",
	"A", "a", "1", "a1", "A1", "aaaa", "abcd1234", "ABCD1234", "0193a000-0000-7000-8000-000000000001"}

// send sends req and counts it under kind.
func (f *opFuzzer) send(kind string, req request) *apitest.Response {
	f.t.Helper()
	f.stats[kind]++
	if f.op.Security == nil || len(*f.op.Security) > 0 {
		f.stats["authenticated"]++ // the document's default security, or the operation's own
	}
	path := f.path
	for k, v := range req.path {
		path = strings.ReplaceAll(path, "{"+k+"}", url.PathEscape(v))
	}
	if len(req.query) > 0 {
		q := url.Values{}
		for k, v := range req.query {
			q.Set(k, v)
		}
		path += "?" + q.Encode()
	}
	r := apitest.Request{Method: f.method, Path: path, Token: f.token(), Header: http.Header{}}
	for k, v := range req.header {
		r.Header.Set(k, v)
	}
	switch {
	case req.rawBody != "":
		r.Body = req.rawBody
		r.ContentType = req.contentType
	case req.body != nil:
		b, err := json.Marshal(req.body)
		if err != nil {
			f.t.Fatal(err)
		}
		r.Body = string(b)
	}
	return f.env.Do(r)
}

// valid sends a valid variant: anything but 400 and 5xx (501 while not implemented).
func (f *opFuzzer) valid(what string, req request) *apitest.Response {
	f.t.Helper()
	resp := f.send("valid", req)
	notImplemented := resp.Status == http.StatusNotImplemented
	if resp.Status == http.StatusBadRequest || (resp.Status >= 500 && !notImplemented) {
		f.t.Errorf("valid request (%s): %d %s\nbody: %s", what, resp.Status, resp.Body, mustJSON(req.body))
	}
	waitForJobs(f.t, f.env)
	return resp
}

// invalid sends a variant with one broken constraint: 400, and no table changes.
func (f *opFuzzer) invalid(what string, req request) {
	f.t.Helper()
	before := f.counts()
	resp := f.send("invalid", req)
	if resp.Status != http.StatusBadRequest {
		f.t.Errorf("invalid request (%s): %d, want 400: %s\nbody: %s", what, resp.Status, resp.Body, mustJSON(req.body))
	}
	if after := f.counts(); !mapsEqual(before, after) {
		f.t.Errorf("invalid request (%s) changed rows: before %v, after %v", what, before, after)
	}
}

// counts is the row count of every watched table (see perTable).
func (f *opFuzzer) counts() map[string]int {
	out := map[string]int{}
	for name, n := range f.perTable("count(*)") {
		out[name], _ = strconv.Atoi(n)
	}
	return out
}

// perTable evaluates the aggregate expr over the rows (named r) of every table but request_logs
// and request_log_bodies (written for every request, on purpose), goose's
// version table and River's own bookkeeping; of river_job it takes only the jobs a request
// causes, not the periodic ones (jobs.PeriodicKinds) River queues by itself.
func (f *opFuzzer) perTable(expr string) map[string]string {
	if f.tables == nil {
		// A partition's rows are its parent's: the parent alone is read.
		rows, err := f.env.Pool.Query(f.t.Context(), `SELECT relname FROM pg_class
			WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'p') AND NOT relispartition
			AND relname <> 'goose_db_version' AND relname !~ '^request_log(s|_bodies)($|_)'
			AND (relname NOT LIKE 'river\_%' OR relname = 'river_job') ORDER BY 1`)
		if err != nil {
			f.t.Fatal(err)
		}
		for rows.Next() {
			var name string
			_ = rows.Scan(&name)
			f.tables = append(f.tables, name)
		}
		rows.Close()
	}
	parts := make([]string, len(f.tables))
	for i, name := range f.tables {
		parts[i] = fmt.Sprintf("SELECT %s, (%s)::text FROM %q r", quoteLiteral(name), expr, name)
		if name == "river_job" { // the periodic jobs come whatever the requests do
			parts[i] += " WHERE kind <> ALL(" + quoteLiteral("{"+strings.Join(jobs.PeriodicKinds(), ",")+"}") + "::text[])"
		}
	}
	rows, err := f.env.Pool.Query(f.t.Context(), strings.Join(parts, " UNION ALL "))
	if err != nil {
		f.t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, v string
		_ = rows.Scan(&name, &v)
		out[name] = v
	}
	return out
}

func (f *opFuzzer) run() {
	base := f.base()
	f.valid("documented example with real ids", base)

	schema := f.bodySchema()
	if schema != nil {
		minimal := clone(base)
		minimal.body = f.withFixtures(f.generate(schema, "", true), schema)
		f.valid("required fields only", minimal)
		full := clone(base)
		full.body = f.withFixtures(f.generate(schema, "", false), schema)
		f.valid("every field", full)
		for _, l := range leaves(base.body, schema, nil) {
			for _, e := range l.schema.Enum {
				if e == nil || fmt.Sprint(e) == fmt.Sprint(l.value) {
					continue
				}
				v := clone(base)
				v.body = setAt(v.body, l.pointer, e)
				f.valid(fmt.Sprintf("%s = %v", ptr(l.pointer), e), v)
			}
		}
	}

	f.invalidParameters(base)
	if schema != nil {
		f.invalidBody(base, schema)
		f.hostileBody(base, schema)
		f.oversizedBody(base)
	}
	f.hostileQuery(base)
	f.xmlBodies(base)
}

// xmlBodies sends an operation that also takes application/xml its example document (valid:
// never 400 nor 5xx) and hostile ones: not well-formed, a DTD with entities to expand or to
// fetch, a NUL, bytes that are not UTF-8, deep nesting (400, nothing changes), and a
// document over 1 MiB (413).
func (f *opFuzzer) xmlBodies(base request) {
	if f.op.RequestBody == nil || f.op.RequestBody.Value.Content.Get("application/xml") == nil {
		return
	}
	withXML := func(doc string) request {
		r := clone(base)
		r.rawBody, r.contentType = doc, "application/xml"
		return r
	}
	example := fmt.Sprint(f.op.RequestBody.Value.Content.Get("application/xml").Example)
	f.valid("the XML example", withXML(example))
	for what, doc := range map[string]string{
		"not well-formed":      "<Invoice><a></Invoice>",
		"billion laughs":       `<!DOCTYPE l [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]><Invoice>&b;</Invoice>`,
		"external entity":      `<!DOCTYPE l [<!ENTITY x SYSTEM "file:///etc/passwd">]><Invoice>&x;</Invoice>`,
		"external DTD":         `<!DOCTYPE Invoice SYSTEM "http://127.0.0.1:9/x.dtd"><Invoice/>`,
		"a NUL":                "<Invoice>\x00</Invoice>",
		"invalid UTF-8":        "<Invoice>\xff\xfe</Invoice>",
		"deep nesting":         strings.Repeat("<a>", 5000) + strings.Repeat("</a>", 5000),
		"two root elements":    "<Invoice/><Invoice/>",
		"JSON sent as XML":     mustJSON(base.body),
		"an undefined entity":  "<Invoice>&nope;</Invoice>",
		"processing only":      `<?xml version="1.0"?>`,
		"a comment only":       "<!-- nothing -->",
		"unterminated CDATA":   "<Invoice><![CDATA[x</Invoice>",
		"attribute without =":  "<Invoice a></Invoice>",
		"mismatched namespace": "<x:Invoice></y:Invoice>",
	} {
		f.invalid("XML body: "+what, withXML(doc))
	}
	before := f.counts()
	assertProblem(f.t, "XML body over 1 MiB", f.send("oversized", withXML("<Invoice>"+strings.Repeat("a", 1<<20)+"</Invoice>")),
		http.StatusRequestEntityTooLarge, "payload_too_large")
	if !mapsEqual(before, f.counts()) {
		f.t.Error("an XML body over 1 MiB changed rows")
	}
}

// invalidParameters breaks each parameter's schema once per constraint.
func (f *opFuzzer) invalidParameters(base request) {
	for _, ref := range f.params() {
		p := ref.Value
		if p.In == "header" {
			continue // Idempotency-Key: any 1..255 characters; the length is tried below
		}
		set := func(v string) request {
			r := clone(base)
			if p.In == "path" {
				r.path[p.Name] = v
			} else {
				r.query[p.Name] = v
			}
			return r
		}
		for _, bad := range badScalars(p.Schema.Value) {
			f.invalid(fmt.Sprintf("%s parameter %s: %s", p.In, p.Name, bad.what), set(bad.text))
		}
		if p.In == "query" && p.Required {
			r := clone(base)
			delete(r.query, p.Name)
			f.invalid("required query parameter "+p.Name+" missing", r)
		}
	}
	if f.method == http.MethodPost {
		r := clone(base)
		r.header["Idempotency-Key"] = strings.Repeat("k", 256)
		f.invalid("Idempotency-Key of 256 characters", r)
	}
}

// invalidBody breaks the body one constraint at a time.
func (f *opFuzzer) invalidBody(base request, schema *openapi3.Schema) {
	for _, l := range leaves(base.body, schema, nil) {
		s := l.schema
		at := ptr(l.pointer)
		set := func(v any) request { r := clone(base); r.body = setAt(r.body, l.pointer, v); return r }
		if l.required {
			r := clone(base)
			r.body = deleteAt(r.body, l.pointer)
			f.invalid("missing required "+at, r)
		}
		if len(s.AnyOf) > 0 || len(s.OneOf) > 0 {
			continue
		}
		for _, bad := range badValues(s) {
			f.invalid(at+": "+bad.what, set(bad.value))
		}
		if s.Type.Is("object") && s.AdditionalProperties.Has != nil && !*s.AdditionalProperties.Has && l.value != nil {
			r := clone(base)
			r.body = setAt(r.body, append(slices.Clone(l.pointer), "zz_unknown_property"), 1)
			f.invalid("unknown property in "+at, r)
		}
	}
	if s := resolve(schema); s.AdditionalProperties.Has != nil && !*s.AdditionalProperties.Has {
		r := clone(base)
		r.body = setAt(r.body, []string{"zz_unknown_property"}, "x")
		f.invalid("unknown property at the root", r)
	}
	for _, raw := range []string{`{`, `{"a":1}}`, `[` + strings.Repeat("[", 20000) + strings.Repeat("]", 20001), `"\ud800"x`, "{\"a\":\"\xff\"}"} {
		r := clone(base)
		r.rawBody = raw
		f.invalid(fmt.Sprintf("malformed body %.20q", raw), r)
	}
}

// hostileText is stored and echoed verbatim or refused, never interpreted.
var hostileText = []string{
	`x'); DROP TABLE organizations; --`,
	`' OR '1'='1`,
	"a\r\nSet-Cookie: injected=1",
	`<script>alert(1)</script>`,
	`{{7*7}} ${jndi:ldap://x/a} %s%n`,
	"\u202eevil\u200b\ufeff \t",
	`\u0000 \\ " /`,
	"😀 العربية",
}

// hostileBody puts hostile text in every free-text string, deep nesting in every object
// and huge numbers in every number.
func (f *opFuzzer) hostileBody(base request, schema *openapi3.Schema) {
	for _, l := range leaves(base.body, schema, nil) {
		s := l.schema
		at := ptr(l.pointer)
		set := func(v any) request { r := clone(base); r.body = setAt(r.body, l.pointer, v); return r }
		switch {
		case s.Type.Is("string") && len(s.Enum) == 0 && s.Format == "" && s.Pattern == "":
			if _, checked := semanticFields[fieldName(l.pointer)]; checked {
				f.invalid("hostile text in "+at+", which the server checks", set(hostileText[0]))
				continue
			}
			for _, h := range hostileText {
				if s.MaxLength != nil && uint64(len([]rune(h))) > *s.MaxLength || uint64(len([]rune(h))) < s.MinLength {
					continue
				}
				resp := f.valid("hostile "+at, set(h))
				f.stats["hostile"]++
				if resp.Status == http.StatusCreated || (resp.Status == http.StatusOK && f.method != http.MethodPost) {
					echoedVerbatim(f.t, resp, l.pointer, h)
				}
			}
			f.invalid("NUL in "+at, set("a\x00b"))
			f.noServerError(at, set(json.RawMessage(loneSurrogates)))
		case s.Type.Is("integer"), s.Type.Is("number"):
			for _, raw := range []string{"1e400", "123456789012345678901234567890", "-1e400"} {
				r := clone(base)
				r.body = setAt(r.body, l.pointer, json.RawMessage(raw))
				resp := f.send("hostile", r)
				if resp.Status >= 500 || (s.Type.Is("integer") && resp.Status != http.StatusBadRequest) {
					f.t.Errorf("%s = %s: %d %s", at, raw, resp.Status, resp.Body)
				}
			}
		case s.Type.Is("object") && len(s.Properties) == 0:
			deep := json.RawMessage(strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000))
			r := clone(base)
			r.body = setAt(r.body, l.pointer, deep)
			if resp := f.send("hostile", r); resp.Status >= 500 {
				f.t.Errorf("%s nested 5000 deep: %d %s", at, resp.Status, resp.Body)
			}
			f.noServerError(at, set(json.RawMessage(`{"k\udc00":`+loneSurrogates+`}`)))
		}
	}
	// A NUL in a property name.
	r := clone(base)
	r.body = setAt(r.body, []string{"a\x00b"}, "x")
	f.invalid("NUL in a property name", r)
}

// loneSurrogates is a JSON string holding escaped halves of UTF-16 surrogate pairs, which
// encode no character: Go reads each as U+FFFD, while PostgreSQL's jsonb refuses the escape,
// so a value passed through to storage as the client wrote it fails there.
const loneSurrogates = `"a\ud800b\udfff"`

// noServerError sends r, hostile at at, and fails on any 5xx: such input is read or refused.
func (f *opFuzzer) noServerError(at string, r request) {
	f.t.Helper()
	if resp := f.send("hostile", r); resp.Status >= 500 && resp.Status != http.StatusNotImplemented {
		f.t.Errorf("lone surrogates in %s: %d %s", at, resp.Status, resp.Body)
	}
}

// hostileQuery puts hostile text in every free-text query parameter.
func (f *opFuzzer) hostileQuery(base request) {
	for _, ref := range f.params() {
		p := ref.Value
		s := p.Schema.Value
		if p.In != "query" || !s.Type.Is("string") || len(s.Enum) > 0 || s.Format != "" || s.Pattern != "" {
			continue
		}
		for _, h := range append(slices.Clone(hostileText), "a\x00b", "\xff\xfe") {
			r := clone(base)
			r.query[p.Name] = h
			resp := f.send("hostile", r)
			if resp.Status >= 500 && resp.Status != http.StatusNotImplemented {
				f.t.Errorf("query %s = %q: %d %s", p.Name, h, resp.Status, resp.Body)
			}
			//lint:ignore SA1011 the bytes are the point: a NUL and an invalid UTF-8 byte
			if strings.ContainsAny(h, "\x00\xff") && resp.Status != http.StatusBadRequest {
				f.t.Errorf("query %s = %q: %d, want 400", p.Name, h, resp.Status)
			}
		}
	}
	// A NUL or an invalid byte in a path parameter.
	for name := range base.path {
		for _, h := range []string{"a\x00b", "\xff"} {
			r := clone(base)
			r.path[name] = h
			f.invalid(fmt.Sprintf("path %s = %q", name, h), r)
		}
	}
}

// oversizedBody sends a body over 1 MiB: 413.
func (f *opFuzzer) oversizedBody(base request) {
	r := clone(base)
	r.rawBody = `{"x":"` + strings.Repeat("a", 1<<20) + `"}`
	before := f.counts()
	resp := f.send("oversized", r)
	assertProblem(f.t, "body over 1 MiB", resp, http.StatusRequestEntityTooLarge, "payload_too_large")
	if !mapsEqual(before, f.counts()) {
		f.t.Error("a body over 1 MiB changed rows")
	}
}

// unknownMethods: every method a path does not declare is 405 naming the ones it does.
func unknownMethods(t *testing.T, env *apitest.Env, fx *fuzzFixtures, path string, declared []string, stats map[string]int) {
	p := path
	for _, seg := range strings.Split(path, "/") {
		if strings.HasPrefix(seg, "{") {
			p = strings.Replace(p, seg, uuid.NewString(), 1)
		}
	}
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions, "PROPFIND", "BREW"} {
		if slices.Contains(declared, m) {
			continue
		}
		stats["method"]++
		resp := env.Do(apitest.Request{Method: m, Path: p, Token: apitest.OperatorToken})
		assertProblem(t, m+" "+path, resp, http.StatusMethodNotAllowed, "method_not_allowed")
		if got := resp.Header.Get("Allow"); got != strings.Join(declared, ", ") {
			t.Errorf("%s %s: Allow = %q, want %q", m, path, got, strings.Join(declared, ", "))
		}
	}
}

// leaf is one value of a body with its schema.
type leaf struct {
	pointer  []string
	schema   *openapi3.Schema
	value    any
	required bool
}

// leaves lists every property of v (recursively, arrays through their first item) with its
// schema, whether present in v or not.
func leaves(v any, s *openapi3.Schema, at []string) []leaf {
	s = resolve(s)
	m, ok := v.(map[string]any)
	if !ok || s == nil {
		return nil
	}
	var out []leaf
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		ps := resolve(s.Properties[name].Value)
		p := append(slices.Clone(at), name)
		val, present := m[name]
		if !present {
			continue
		}
		out = append(out, leaf{pointer: p, schema: ps, value: val, required: slices.Contains(s.Required, name)})
		switch {
		case ps.Type.Is("object"):
			out = append(out, leaves(val, ps, p)...)
		case ps.Type.Is("array") && ps.Items != nil:
			if items, ok := val.([]any); ok && len(items) > 0 {
				out = append(out, leaves(items[0], ps.Items.Value, append(slices.Clone(p), "0"))...)
			}
		}
	}
	return out
}

type badValue struct {
	what  string
	value any
}

// badValues are values of the wrong type, outside the enum, past a bound or of a bad format.
func badValues(s *openapi3.Schema) []badValue {
	var out []badValue
	switch {
	case s.Type.Is("string"):
		out = append(out, badValue{"a number for a string", 12345})
	case s.Type.Is("integer"):
		out = append(out, badValue{"a string for an integer", "1"}, badValue{"a fraction for an integer", 1.5})
	case s.Type.Is("number"):
		out = append(out, badValue{"a string for a number", "1"})
	case s.Type.Is("boolean"):
		out = append(out, badValue{"a string for a boolean", "true"})
	case s.Type.Is("object"):
		out = append(out, badValue{"an array for an object", []any{}})
	case s.Type.Is("array"):
		out = append(out, badValue{"an object for an array", map[string]any{}})
	}
	if !s.Nullable && s.Type != nil {
		out = append(out, badValue{"null for a non-nullable value", nil})
	}
	for _, b := range badScalars(s) {
		var v any = b.text
		if b.number != nil {
			v = *b.number
		}
		out = append(out, badValue{b.what, v})
	}
	if s.Type.Is("array") {
		if s.MinItems > 0 {
			out = append(out, badValue{fmt.Sprintf("%d items, minItems %d", s.MinItems-1, s.MinItems), make([]any, s.MinItems-1)})
		}
		if s.MaxItems != nil && s.Items != nil {
			items := make([]any, *s.MaxItems+1)
			for i := range items {
				items[i] = fmt.Sprintf("item-%d", i)
			}
			out = append(out, badValue{fmt.Sprintf("%d items, maxItems %d", len(items), *s.MaxItems), items})
		}
	}
	return out
}

type badScalar struct {
	what   string
	text   string
	number *float64
}

// badScalars are values a scalar schema refuses, as text (parameters) or numbers.
func badScalars(s *openapi3.Schema) []badScalar {
	var out []badScalar
	num := func(what string, v float64) {
		text := strconv.FormatFloat(v, 'f', -1, 64)
		out = append(out, badScalar{what: what, text: text, number: &v})
	}
	if len(s.Enum) > 0 {
		out = append(out, badScalar{what: "outside the enum", text: "zz-not-in-the-enum"})
	}
	switch s.Format {
	case "uuid":
		out = append(out, badScalar{what: "not a uuid", text: "not-a-uuid"})
	case "date-time":
		out = append(out, badScalar{what: "not a date-time", text: "2026-13-01T25:00:00Z"})
	case "date":
		out = append(out, badScalar{what: "not a date", text: "2026-02-30"})
	case "email":
		out = append(out, badScalar{what: "not an e-mail", text: "not an e-mail"})
	case "uri":
		out = append(out, badScalar{what: "not an absolute URI", text: "/relative/path"})
	}
	if s.Type.Is("string") {
		if s.MinLength > 0 {
			out = append(out, badScalar{what: fmt.Sprintf("%d characters, minLength %d", s.MinLength-1, s.MinLength), text: strings.Repeat("a", int(s.MinLength)-1)})
		}
		if s.MaxLength != nil {
			out = append(out, badScalar{what: fmt.Sprintf("%d characters, maxLength %d", *s.MaxLength+1, *s.MaxLength), text: strings.Repeat("a", int(*s.MaxLength)+1)})
		}
		if s.Pattern != "" {
			out = append(out, badScalar{what: "not matching " + s.Pattern, text: "\u2603 not the pattern"})
		}
	}
	if s.Type.Is("integer") || s.Type.Is("number") {
		if s.Min != nil {
			v := *s.Min - 1
			if s.ExclusiveMin.Bool != nil && *s.ExclusiveMin.Bool {
				v = *s.Min
			}
			if s.Type.Is("number") && (s.ExclusiveMin.Bool == nil || !*s.ExclusiveMin.Bool) {
				v = math.Nextafter(*s.Min, math.Inf(-1))
			}
			num(fmt.Sprintf("below the minimum %v", *s.Min), v)
		}
		if s.Max != nil {
			v := *s.Max + 1
			if s.ExclusiveMax.Bool != nil && *s.ExclusiveMax.Bool {
				v = *s.Max
			}
			if s.Type.Is("number") && (s.ExclusiveMax.Bool == nil || !*s.ExclusiveMax.Bool) {
				v = math.Nextafter(*s.Max, math.Inf(1))
			}
			num(fmt.Sprintf("above the maximum %v", *s.Max), v)
		}
		if s.Type.Is("integer") {
			out = append(out, badScalar{what: "not an integer", text: "1.5"})
		}
	}
	return out
}

// echoedVerbatim checks that a stored hostile string comes back unchanged wherever the
// response carries the same field.
func echoedVerbatim(t *testing.T, resp *apitest.Response, pointer []string, want string) {
	t.Helper()
	var body any
	if json.Unmarshal(resp.Body, &body) != nil {
		return
	}
	got, ok := lookup(body, pointer)
	if !ok {
		return // the response does not echo this field
	}
	if s, isString := got.(string); isString && s != want {
		t.Errorf("%s stored as %q, sent %q", ptr(pointer), s, want)
	}
}

func lookup(v any, pointer []string) (any, bool) {
	for _, p := range pointer {
		switch c := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = c[p]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i >= len(c) {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}

func setAt(root any, pointer []string, v any) any {
	if len(pointer) == 0 {
		return v
	}
	switch c := root.(type) {
	case map[string]any:
		c[pointer[0]] = setAt(c[pointer[0]], pointer[1:], v)
		return c
	case []any:
		i, _ := strconv.Atoi(pointer[0])
		if i < len(c) {
			c[i] = setAt(c[i], pointer[1:], v)
		}
		return c
	case nil:
		return map[string]any{pointer[0]: setAt(nil, pointer[1:], v)}
	}
	return root
}

func deleteAt(root any, pointer []string) any {
	if len(pointer) == 1 {
		if m, ok := root.(map[string]any); ok {
			delete(m, pointer[0])
		}
		return root
	}
	switch c := root.(type) {
	case map[string]any:
		c[pointer[0]] = deleteAt(c[pointer[0]], pointer[1:])
	case []any:
		i, _ := strconv.Atoi(pointer[0])
		if i < len(c) {
			c[i] = deleteAt(c[i], pointer[1:])
		}
	}
	return root
}

// clone deep-copies a request.
func clone(r request) request {
	out := request{path: maps(r.path), query: maps(r.query), header: maps(r.header), rawBody: r.rawBody}
	if r.body != nil {
		b, _ := json.Marshal(r.body)
		_ = json.Unmarshal(b, &out.body)
	}
	return out
}

func maps(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func mapsEqual[V comparable](a, b map[string]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// fieldName is the property a pointer ends at, skipping array indices.
func fieldName(p []string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if _, err := strconv.Atoi(p[i]); err != nil {
			return p[i]
		}
	}
	return ""
}

func ptr(p []string) string { return "/" + strings.Join(p, "/") }

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
