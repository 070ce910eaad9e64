package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
)

// catalogueDo sends a request as token and fails the test unless it answers want.
func catalogueDo(t testing.TB, env *apitest.Env, token, method, path, body string, want int) map[string]any {
	t.Helper()
	resp := env.Do(apitest.Request{Method: method, Path: path, Token: token, Body: body})
	if resp.Status != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, path, resp.Status, want, resp.Body)
	}
	if len(resp.Body) == 0 {
		return nil
	}
	return resp.JSON(t)
}

// productBody is a createProduct body with a unique code, metering "units".
func productBody(availability string) string {
	return fmt.Sprintf(`{"code":"p-%s","name_ar":"منتج","name_en":"Product","description":"A product of a test.",
		"category":"api_access","service_classification":"developer_platform","regulatory_classification":"ordinary_software",
		"availability":%q,"provisioning_workflow":"automatic","termination_policy":"end_of_period",
		"metering_metrics":["units"],"billing_model":"subscription"}`, uuid.NewString()[:8], availability)
}

func newProduct(t testing.TB, env *apitest.Env, availability string) map[string]any {
	t.Helper()
	return catalogueDo(t, env, apitest.OperatorToken, http.MethodPost, "/v1/products", productBody(availability), http.StatusCreated)
}

// planBody is a createPlan body for a free monthly plan of product, whole enough to offer.
func planBody(product string) string {
	return fmt.Sprintf(`{"product_id":%q,"code":"plan-%s","name":"Free","billing_period":"monthly","currency":"SAR",
		"recurring_fee":0,"included_usage":[{"metric":"units","quantity":100}],"prices":[{"component_type":"recurring_fee","amount":0}]}`,
		product, uuid.NewString()[:8])
}

func newDraftPlan(t testing.TB, env *apitest.Env, product string) map[string]any {
	t.Helper()
	return catalogueDo(t, env, apitest.OperatorToken, http.MethodPost, "/v1/plans", planBody(product), http.StatusCreated)
}

// movePlan moves a plan to status as the operator.
func movePlan(t testing.TB, env *apitest.Env, plan, status string) map[string]any {
	t.Helper()
	return catalogueDo(t, env, apitest.OperatorToken, http.MethodPatch, "/v1/plans/"+plan, fmt.Sprintf(`{"status":%q}`, status), http.StatusOK)
}

// offeredPlan is a product of that availability with an active plan.
func offeredPlan(t testing.TB, env *apitest.Env, availability string) (product, plan string) {
	t.Helper()
	product = newProduct(t, env, availability)["id"].(string)
	plan = newDraftPlan(t, env, product)["id"].(string)
	movePlan(t, env, plan, "active")
	return product, plan
}

func priceOf(t testing.TB, plan map[string]any, i int) map[string]any {
	t.Helper()
	prices, _ := plan["prices"].([]any)
	if len(prices) <= i {
		t.Fatalf("plan has %d prices: %v", len(prices), plan)
	}
	return prices[i].(map[string]any)
}

// The state reachers of the catalogue families, through the operator's API only.
var (
	_ = reachable("ProductAvailability", "ga", func(t *testing.T, env *apitest.Env) map[string]any { return newProduct(t, env, "ga") })
	_ = reachable("ProductAvailability", "beta", func(t *testing.T, env *apitest.Env) map[string]any { return newProduct(t, env, "beta") })
	_ = reachable("ProductAvailability", "internal_only", func(t *testing.T, env *apitest.Env) map[string]any {
		return newProduct(t, env, "internal_only")
	})
	_ = reachable("ProductAvailability", "deprecated", func(t *testing.T, env *apitest.Env) map[string]any {
		id := newProduct(t, env, "ga")["id"].(string)
		return catalogueDo(t, env, apitest.OperatorToken, http.MethodPatch, "/v1/products/"+id, `{"availability":"deprecated"}`, http.StatusOK)
	})
	_ = reachable("PlanStatus", "draft", func(t *testing.T, env *apitest.Env) map[string]any {
		return newDraftPlan(t, env, newProduct(t, env, "ga")["id"].(string))
	})
	_ = reachable("PlanStatus", "active", func(t *testing.T, env *apitest.Env) map[string]any {
		plan := newDraftPlan(t, env, newProduct(t, env, "ga")["id"].(string))
		return movePlan(t, env, plan["id"].(string), "active")
	})
	_ = reachable("PlanStatus", "deprecated", func(t *testing.T, env *apitest.Env) map[string]any {
		_, plan := offeredPlan(t, env, "ga")
		return movePlan(t, env, plan, "deprecated")
	})
	_ = reachable("PlanStatus", "retired", func(t *testing.T, env *apitest.Env) map[string]any {
		_, plan := offeredPlan(t, env, "ga")
		movePlan(t, env, plan, "deprecated")
		return movePlan(t, env, plan, "retired")
	})
	_ = reachable("PriceStatus", "active", func(t *testing.T, env *apitest.Env) map[string]any {
		return priceOf(t, newDraftPlan(t, env, newProduct(t, env, "ga")["id"].(string)), 0)
	})
	_ = reachable("PriceStatus", "inactive", func(t *testing.T, env *apitest.Env) map[string]any {
		plan := newDraftPlan(t, env, newProduct(t, env, "ga")["id"].(string))
		path := fmt.Sprintf("/v1/plans/%s/prices/%s", plan["id"], priceOf(t, plan, 0)["id"])
		return catalogueDo(t, env, apitest.OperatorToken, http.MethodPatch, path, `{"status":"inactive"}`, http.StatusOK)
	})
)

// seedCatalogueFixtures gives the fuzzing a product of its own (its availability and names
// are fuzzed, leaving the seeded ones alone) and a draft plan whose setup fee has no price:
// no fuzzed request can offer it, so every draft-only edit stays possible throughout.
func seedCatalogueFixtures(t *testing.T, env *apitest.Env, fx *fuzzFixtures) {
	t.Helper()
	product := newProduct(t, env, "ga")["id"].(string)
	plan := catalogueDo(t, env, apitest.OperatorToken, http.MethodPost, "/v1/plans", fmt.Sprintf(`{"product_id":%q,"code":"fuzz-draft",
		"name":"Fuzz draft","billing_period":"monthly","currency":"SAR","setup_fee":100,"prices":[{"component_type":"per_unit","metric":"units","unit_amount":5}]}`,
		product), http.StatusCreated)
	fx.ids["products"], fx.ids["plans"], fx.price = product, plan["id"].(string), priceOf(t, plan, 0)["id"].(string)
}

// catalogueRows counts the catalogue, its version and the audit records, which a refused
// request must leave as they are.
func catalogueRows(env *apitest.Env) string {
	return fmt.Sprintf("products %d, plans %d, prices %d, active prices %d, version %d, audit %d",
		env.Count("SELECT count(*) FROM products"), env.Count("SELECT count(*) FROM plans"), env.Count("SELECT count(*) FROM prices"),
		env.Count("SELECT count(*) FROM prices WHERE status = 'active'"), env.Count("SELECT version::int FROM catalogue_version"),
		env.Count("SELECT count(*) FROM audit_events"))
}

// refused sends a request that must be refused with status and code and change nothing.
func refused(t testing.TB, env *apitest.Env, token, method, path, body string, status int, code string) *apitest.Response {
	t.Helper()
	before := catalogueRows(env)
	resp := env.Do(apitest.Request{Method: method, Path: path, Token: token, Body: body})
	assertProblem(t, method+" "+path, resp, status, code)
	if after := catalogueRows(env); after != before {
		t.Errorf("%s %s was refused but changed the catalogue: %s, then %s", method, path, before, after)
	}
	return resp
}

func TestCatalogueAdministration_OperatorOnly(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	product, plan := offeredPlan(t, env, "ga")
	draft := newDraftPlan(t, env, product)
	price := priceOf(t, draft, 0)["id"].(string)
	internal := createOrganization(t, env, orgBody(t, "organization_type", `"internal"`))["id"].(string)
	standard, _ := newOrganization(t, env)
	// A tenant holding every scope, internal or not, changes nothing of the catalogue.
	for _, org := range []string{standard, internal} {
		token := apitest.OrgToken(uuid.MustParse(org))
		for _, r := range []struct{ method, path, body string }{
			{http.MethodPost, "/v1/products", productBody("ga")},
			{http.MethodPatch, "/v1/products/" + product, `{"availability":"internal_only"}`},
			{http.MethodPost, "/v1/plans", planBody(product)},
			{http.MethodPatch, "/v1/plans/" + plan, `{"status":"deprecated"}`},
			{http.MethodPatch, "/v1/plans/" + draft["id"].(string), `{"name":"Mine now"}`},
			{http.MethodPost, "/v1/plans/" + draft["id"].(string) + "/prices", `{"component_type":"setup_fee","amount":1}`},
			{http.MethodPatch, "/v1/plans/" + draft["id"].(string) + "/prices/" + price, `{"status":"inactive"}`},
		} {
			refused(t, env, token, r.method, r.path, r.body, http.StatusForbidden, "forbidden")
		}
	}
	// Unknown ids, as the operator.
	refused(t, env, apitest.OperatorToken, http.MethodPatch, "/v1/products/"+uuid.NewString(), `{"name_en":"x"}`, http.StatusNotFound, "not_found")
	refused(t, env, apitest.OperatorToken, http.MethodPatch, "/v1/plans/"+uuid.NewString(), `{"status":"active"}`, http.StatusNotFound, "not_found")
	refused(t, env, apitest.OperatorToken, http.MethodPost, "/v1/plans/"+uuid.NewString()+"/prices", `{"component_type":"setup_fee","amount":1}`, http.StatusNotFound, "not_found")
	// A price of another plan is not this plan's.
	refused(t, env, apitest.OperatorToken, http.MethodPatch, "/v1/plans/"+plan+"/prices/"+price, `{"status":"inactive"}`, http.StatusNotFound, "not_found")
	refused(t, env, apitest.OperatorToken, http.MethodPost, "/v1/plans", fmt.Sprintf(`{"product_id":%q,"code":"x","name":"x","billing_period":"monthly","currency":"SAR","prices":[{"component_type":"setup_fee","amount":1}]}`, uuid.NewString()),
		http.StatusUnprocessableEntity, "unprocessable")
}

func TestCatalogueAdministration_ProductsAndIdempotency(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	body := productBody("beta")
	first := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/products", Token: apitest.OperatorToken, Body: body,
		Header: http.Header{"Idempotency-Key": {"create-product-1"}}})
	if first.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", first.Status, first.Body)
	}
	replay := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/products", Token: apitest.OperatorToken, Body: body,
		Header: http.Header{"Idempotency-Key": {"create-product-1"}}})
	if replay.Status != http.StatusCreated || string(replay.Body) != string(first.Body) || replay.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: %d %q %s", replay.Status, replay.Header.Get("Idempotent-Replayed"), replay.Body)
	}
	p := first.JSON(t)
	id, code := p["id"].(string), p["code"].(string)
	if n := env.Count("SELECT count(*) FROM products WHERE code = $1", code); n != 1 {
		t.Errorf("%d products %s after a replay, want 1", n, code)
	}
	if p["availability"] != "beta" || fmt.Sprint(p["required_documents"]) != "[]" || fmt.Sprint(p["metering_metrics"]) != "[units]" {
		t.Errorf("created product %v", p)
	}
	// The same code again, without the key: a conflict.
	refused(t, env, apitest.OperatorToken, http.MethodPost, "/v1/products", body, http.StatusConflict, "conflict")

	// A patch changes what it names; one that changes nothing records nothing.
	audits := env.Count("SELECT count(*) FROM audit_events WHERE action = 'product.updated' AND resource_id = $1", id)
	same := catalogueDo(t, env, apitest.OperatorToken, http.MethodPatch, "/v1/products/"+id, `{"availability":"beta"}`, http.StatusOK)
	if same["updated_at"] != p["updated_at"] || env.Count("SELECT count(*) FROM audit_events WHERE action = 'product.updated' AND resource_id = $1", id) != audits {
		t.Errorf("a patch changing nothing moved updated_at or was audited: %v", same)
	}
	changed := catalogueDo(t, env, apitest.OperatorToken, http.MethodPatch, "/v1/products/"+id, `{"name_en":"Renamed","availability":"ga"}`, http.StatusOK)
	if changed["name_en"] != "Renamed" || changed["availability"] != "ga" || changed["name_ar"] != p["name_ar"] || changed["updated_at"] == p["updated_at"] {
		t.Errorf("patched product %v", changed)
	}
	if n := env.Count("SELECT count(*) FROM audit_events WHERE action IN ('product.created', 'product.updated') AND resource_id = $1 AND organization_id = '00000000-0000-0000-0000-000000000000'", id); n != 2 {
		t.Errorf("%d audit events of the product, want created and updated", n)
	}
	var trail struct{ Items []map[string]any }
	getJSON(t, env, apitest.OperatorToken, "/v1/audit-events?resource_type=product&resource_id="+id, &trail)
	if len(trail.Items) != 2 || trail.Items[0]["action"] != "product.updated" {
		t.Errorf("the operator's audit trail of the product: %v", trail.Items)
	}
	got := catalogueDo(t, env, apitest.OperatorToken, http.MethodGet, "/v1/products/"+id, "", http.StatusOK)
	if got["name_en"] != "Renamed" || len(got["plans"].([]any)) != 0 {
		t.Errorf("read back %v", got)
	}
}

func TestCatalogueAdministration_PlanLifecycle(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	product := newProduct(t, env, "ga")["id"].(string)
	org, token := newOrganization(t, env)

	// Created as a draft, with its prices, in the plan's currency; replayed by its key.
	body := planBody(product)
	create := func() *apitest.Response {
		return env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/plans", Token: apitest.OperatorToken, Body: body,
			Header: http.Header{"Idempotency-Key": {"plan-1"}}})
	}
	first, replay := create(), create()
	if first.Status != http.StatusCreated || replay.Header.Get("Idempotent-Replayed") != "true" || string(replay.Body) != string(first.Body) {
		t.Fatalf("create and replay: %d %s / %d %s", first.Status, first.Body, replay.Status, replay.Body)
	}
	plan := first.JSON(t)
	id := plan["id"].(string)
	if plan["status"] != "draft" || priceOf(t, plan, 0)["status"] != "active" || priceOf(t, plan, 0)["currency"] != "SAR" {
		t.Errorf("created plan %v", plan)
	}
	if n := env.Count("SELECT count(*) FROM plans WHERE product_id = $1", product); n != 1 {
		t.Errorf("%d plans after a replay, want 1", n)
	}

	// A draft is the operator's only: organizations neither see nor take it.
	var list struct{ Items []map[string]any }
	getJSON(t, env, token, "/v1/plans?product_id="+product, &list)
	if len(list.Items) != 0 {
		t.Errorf("an organization sees the draft: %v", list.Items)
	}
	if plans := catalogueDo(t, env, token, http.MethodGet, "/v1/products/"+product, "", http.StatusOK)["plans"].([]any); len(plans) != 0 {
		t.Errorf("an organization sees the draft in the product: %v", plans)
	}
	getJSON(t, env, apitest.OperatorToken, "/v1/plans?product_id="+product, &list)
	if len(list.Items) != 1 {
		t.Errorf("the operator sees %d plans, want the draft", len(list.Items))
	}
	resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/subscriptions", Token: token, Body: subscriptionBody(org, product, id)})
	assertProblem(t, "subscribe to a draft", resp, http.StatusUnprocessableEntity, "unprocessable")

	// While draft: terms and prices change; a price is added, another deactivated.
	edited := catalogueDo(t, env, apitest.OperatorToken, http.MethodPatch, "/v1/plans/"+id,
		`{"name":"Team","recurring_fee":1500,"setup_fee":500,"trial_policy":{"trial_days":14,"requires_payment_method":false}}`, http.StatusOK)
	if edited["name"] != "Team" || edited["recurring_fee"] != 1500.0 || edited["status"] != "draft" {
		t.Errorf("edited draft %v", edited)
	}
	setup := catalogueDo(t, env, apitest.OperatorToken, http.MethodPost, "/v1/plans/"+id+"/prices", `{"component_type":"setup_fee","amount":500}`, http.StatusCreated)
	recurring := priceOf(t, plan, 0)["id"].(string)
	// Activation checks the plan as a whole: the recurring fee (1500) is not its price's (0).
	resp = refused(t, env, apitest.OperatorToken, http.MethodPatch, "/v1/plans/"+id, `{"status":"active"}`, http.StatusUnprocessableEntity, "unprocessable")
	if !strings.Contains(string(resp.Body), "fee_differs_from_price") {
		t.Errorf("activation refusal does not name the fee: %s", resp.Body)
	}
	pricePath := "/v1/plans/" + id + "/prices/" + recurring
	if p := catalogueDo(t, env, apitest.OperatorToken, http.MethodPatch, pricePath, `{"amount":1500}`, http.StatusOK); p["amount"] != 1500.0 {
		t.Errorf("edited price %v", p)
	}
	extra := catalogueDo(t, env, apitest.OperatorToken, http.MethodPost, "/v1/plans/"+id+"/prices", `{"component_type":"discount","amount":-100}`, http.StatusCreated)
	if p := catalogueDo(t, env, apitest.OperatorToken, http.MethodPatch, "/v1/plans/"+id+"/prices/"+extra["id"].(string), `{"status":"inactive"}`, http.StatusOK); p["status"] != "inactive" {
		t.Errorf("deactivated price %v", p)
	}
	// Offered: now a terms edit, a new price or a price edit is 409 and changes nothing.
	active := movePlan(t, env, id, "active")
	if active["status"] != "active" || len(active["prices"].([]any)) != 3 {
		t.Errorf("activated plan %v", active)
	}
	refused(t, env, apitest.OperatorToken, http.MethodPatch, "/v1/plans/"+id, `{"name":"Changed"}`, http.StatusConflict, "invalid_state_transition")
	refused(t, env, apitest.OperatorToken, http.MethodPatch, "/v1/plans/"+id, `{"name":"Changed","status":"deprecated"}`, http.StatusConflict, "invalid_state_transition")
	refused(t, env, apitest.OperatorToken, http.MethodPost, "/v1/plans/"+id+"/prices", `{"component_type":"credit","amount":-1}`, http.StatusConflict, "invalid_state_transition")
	refused(t, env, apitest.OperatorToken, http.MethodPatch, "/v1/plans/"+id+"/prices/"+setup["id"].(string), `{"status":"inactive"}`, http.StatusConflict, "invalid_state_transition")
	// Status moves one step forward at a time.
	for _, to := range []string{"draft", "retired"} {
		refused(t, env, apitest.OperatorToken, http.MethodPatch, "/v1/plans/"+id, fmt.Sprintf(`{"status":%q}`, to), http.StatusConflict, "invalid_state_transition")
	}
	if same := movePlan(t, env, id, "active"); same["updated_at"] != active["updated_at"] {
		t.Errorf("moving to the current status changed updated_at: %v", same)
	}
	movePlan(t, env, id, "deprecated")
	for _, to := range []string{"draft", "active"} {
		refused(t, env, apitest.OperatorToken, http.MethodPatch, "/v1/plans/"+id, fmt.Sprintf(`{"status":%q}`, to), http.StatusConflict, "invalid_state_transition")
	}
	// Retired: every price inactive; final.
	retired := movePlan(t, env, id, "retired")
	for i := range retired["prices"].([]any) {
		if p := priceOf(t, retired, i); p["status"] != "inactive" {
			t.Errorf("price %v of a retired plan", p)
		}
	}
	if n := env.Count("SELECT count(*) FROM prices WHERE plan_id = $1 AND status = 'active'", id); n != 0 {
		t.Errorf("%d active prices of a retired plan", n)
	}
	for _, to := range []string{"draft", "active", "deprecated"} {
		refused(t, env, apitest.OperatorToken, http.MethodPatch, "/v1/plans/"+id, fmt.Sprintf(`{"status":%q}`, to), http.StatusConflict, "invalid_state_transition")
	}
	// Audited, provider-wide.
	var actions []string
	rows, err := env.Pool.Query(t.Context(), "SELECT action FROM audit_events WHERE organization_id = '00000000-0000-0000-0000-000000000000' AND resource_id = ANY($1) ORDER BY id",
		[]string{id, recurring, setup["id"].(string), extra["id"].(string)})
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var a string
		_ = rows.Scan(&a)
		actions = append(actions, a)
	}
	rows.Close()
	want := []string{"plan.created", "plan.updated", "price.created", "price.updated", "price.created", "price.updated", "plan.updated", "plan.updated", "plan.updated"}
	if !slices.Equal(actions, want) {
		t.Errorf("audit actions %v, want %v", actions, want)
	}
}

func TestCatalogueAdministration_PriceComponentsAreChecked(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	product := newProduct(t, env, "ga")["id"].(string)
	draft := newDraftPlan(t, env, product)["id"].(string)
	for _, tc := range []struct{ price, pointer, code string }{
		{`{"component_type":"recurring_fee"}`, "/amount", "required"},
		{`{"component_type":"recurring_fee","amount":-1}`, "/amount", "out_of_range"},
		{`{"component_type":"setup_fee","amount":1,"metric":"units"}`, "/metric", "not_allowed"},
		{`{"component_type":"discount","amount":100}`, "/amount", "out_of_range"},
		{`{"component_type":"per_unit","metric":"units"}`, "/unit_amount", "required"},
		{`{"component_type":"per_unit","metric":"calls","unit_amount":1}`, "/metric", "unknown_metric"},
		{`{"component_type":"package_pricing","metric":"units","package_size":10}`, "/package_amount", "required"},
		{`{"component_type":"graduated_usage","metric":"units"}`, "/tiers", "required"},
		{`{"component_type":"volume_usage","metric":"units","tiers":[{"upper_bound":10,"unit_amount":1,"flat_amount":null}]}`, "/tiers/0/upper_bound", "last_tier_bounded"},
		{`{"component_type":"tiered_usage","metric":"units","tiers":[{"upper_bound":null,"unit_amount":1,"flat_amount":null},{"upper_bound":null,"unit_amount":1,"flat_amount":null}]}`, "/tiers/0/upper_bound", "open_tier_not_last"},
		{`{"component_type":"tiered_usage","metric":"units","tiers":[{"upper_bound":10,"unit_amount":1,"flat_amount":null},{"upper_bound":10,"unit_amount":1,"flat_amount":null},{"upper_bound":null,"unit_amount":1,"flat_amount":null}]}`, "/tiers/1/upper_bound", "not_ascending"},
	} {
		for _, r := range []struct{ path, body, pointer string }{
			{"/v1/plans/" + draft + "/prices", tc.price, tc.pointer},
			{"/v1/plans", fmt.Sprintf(`{"product_id":%q,"code":"c-%s","name":"x","billing_period":"monthly","currency":"SAR","prices":[{"component_type":"setup_fee","amount":1},%s]}`,
				product, uuid.NewString()[:8], tc.price), "/prices/1" + tc.pointer},
		} {
			resp := refused(t, env, apitest.OperatorToken, http.MethodPost, r.path, r.body, http.StatusUnprocessableEntity, "unprocessable")
			var problem struct {
				Errors []struct{ Pointer, Code string }
			}
			_ = json.Unmarshal(resp.Body, &problem)
			if len(problem.Errors) == 0 || problem.Errors[0].Pointer != r.pointer || problem.Errors[0].Code != tc.code {
				t.Errorf("%s %s: errors %+v, want %s %s", r.path, tc.price, problem.Errors, r.pointer, tc.code)
			}
		}
	}
	// Plan terms name the product's metrics only.
	refused(t, env, apitest.OperatorToken, http.MethodPatch, "/v1/plans/"+draft, `{"overage_rules":[{"metric":"calls","unit_price":1}]}`, http.StatusUnprocessableEntity, "unprocessable")
	// Every plan of the seed, copied through the API, is whole by the rules activation applies.
	var seeded struct{ Items []map[string]any }
	getJSON(t, env, apitest.OperatorToken, "/v1/plans", &seeded)
	for _, p := range seeded.Items {
		if !strings.HasPrefix(p["id"].(string), "0193a000-") {
			continue
		}
		copied := catalogueDo(t, env, apitest.OperatorToken, http.MethodPost, "/v1/plans", seedCopy(p), http.StatusCreated)
		resp := env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v1/plans/" + copied["id"].(string), Token: apitest.OperatorToken, Body: `{"status":"active"}`})
		if resp.Status != http.StatusOK {
			t.Errorf("a copy of the seeded plan %s cannot be offered: %s", p["code"], resp.Body)
		}
	}
}

// seedCopy is a createPlan body with the terms and prices of plan p, every price active.
func seedCopy(p map[string]any) string {
	body := map[string]any{"code": p["code"].(string) + "-copy"}
	for _, k := range []string{"product_id", "name", "billing_period", "currency", "setup_fee", "recurring_fee", "minimum_commitment",
		"included_usage", "overage_rules", "trial_policy", "tax_policy_reference"} {
		body[k] = p[k]
	}
	var prices []map[string]any
	for _, raw := range p["prices"].([]any) {
		price := map[string]any{}
		for _, k := range []string{"component_type", "metric", "tax_treatment", "amount", "unit_amount", "tiers", "package_size", "package_amount"} {
			price[k] = raw.(map[string]any)[k]
		}
		prices = append(prices, price)
	}
	body["prices"] = prices
	b, _ := json.Marshal(body)
	return string(b)
}

func TestCatalogueAdministration_InternalOnly(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	product, plan := offeredPlan(t, env, "internal_only")
	internal := createOrganization(t, env, orgBody(t, "organization_type", `"internal"`))["id"].(string)
	internalToken := apitest.OrgToken(uuid.MustParse(internal))
	standard, standardToken := newOrganization(t, env)

	sees := func(token string) (listed, planListed bool, get int) {
		var page struct{ Items []map[string]any }
		getJSON(t, env, token, "/v1/products?limit=200", &page)
		listed = slices.ContainsFunc(page.Items, func(p map[string]any) bool { return p["id"] == product })
		var plans struct{ Items []map[string]any }
		getJSON(t, env, token, "/v1/plans", &plans)
		planListed = slices.ContainsFunc(plans.Items, func(p map[string]any) bool { return p["id"] == plan })
		return listed, planListed, env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/products/" + product, Token: token}).Status
	}
	for _, tc := range []struct {
		name  string
		token string
		sees  bool
	}{{"Operator", apitest.OperatorToken, true}, {"Internal", internalToken, true}, {"Standard", standardToken, false}} {
		listed, planListed, get := sees(tc.token)
		want := http.StatusNotFound
		if tc.sees {
			want = http.StatusOK
		}
		if listed != tc.sees || planListed != tc.sees || get != want {
			t.Errorf("%s: listed %v, plan listed %v, get %d; want seen %v", tc.name, listed, planListed, get, tc.sees)
		}
	}
	// An unknown product and an internal_only one answer alike to an organization.
	unknown := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/products/" + uuid.NewString(), Token: standardToken})
	hidden := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/products/" + product, Token: standardToken})
	if unknown.JSON(t)["code"] != hidden.JSON(t)["code"] {
		t.Errorf("unknown %s, internal_only %s", unknown.Body, hidden.Body)
	}

	// Only an internal organization subscribes, whoever asks.
	for _, token := range []string{standardToken, apitest.OperatorToken} {
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/subscriptions", Token: token, Body: subscriptionBody(standard, product, plan)})
		assertProblem(t, "standard organization subscribes", resp, http.StatusUnprocessableEntity, "unprocessable")
		if !strings.Contains(string(resp.Body), "unknown_product") {
			t.Errorf("refusal is not unknown_product: %s", resp.Body)
		}
	}
	if n := env.Count("SELECT count(*) FROM subscriptions WHERE organization_id = $1", standard); n != 0 {
		t.Errorf("%d subscriptions of the standard organization", n)
	}
	createSubscription(t, env, internalToken, internal, product, plan)

	// Withdrawal: a ga product made internal_only is hidden from the very next request, in
	// this process and in another, and its plans can no longer be selected by the standard
	// organization's existing subscription (which keeps working).
	sibling := env.Sibling()
	gaProduct, gaPlan := offeredPlan(t, env, "ga")
	sub := createSubscription(t, env, standardToken, standard, gaProduct, gaPlan)
	for _, e := range []*apitest.Env{env, sibling} {
		if r := e.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/products/" + gaProduct, Token: standardToken}); r.Status != http.StatusOK {
			t.Fatalf("before: %d", r.Status)
		}
		var plans struct{ Items []map[string]any }
		getJSON(t, e, standardToken, "/v1/plans?product_id="+gaProduct, &plans) // warms the cache
	}
	catalogueDo(t, env, apitest.OperatorToken, http.MethodPatch, "/v1/products/"+gaProduct, `{"availability":"internal_only"}`, http.StatusOK)
	for name, e := range map[string]*apitest.Env{"same process": env, "sibling": sibling} {
		if r := e.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/products/" + gaProduct, Token: standardToken}); r.Status != http.StatusNotFound {
			t.Errorf("%s: the product made internal_only still answers %d", name, r.Status)
		}
		var plans struct{ Items []map[string]any }
		getJSON(t, e, standardToken, "/v1/plans?product_id="+gaProduct, &plans)
		if len(plans.Items) != 0 {
			t.Errorf("%s: the standard organization still lists %d plans of the hidden product", name, len(plans.Items))
		}
	}
	resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/subscriptions/" + sub.ID + "/change-plan", Token: standardToken, Body: fmt.Sprintf(`{"plan_id":%q}`, gaPlan)})
	assertProblem(t, "change plan of a hidden product", resp, http.StatusUnprocessableEntity, "unprocessable")
	if got := catalogueDo(t, env, standardToken, http.MethodGet, "/v1/subscriptions/"+sub.ID, "", http.StatusOK); got["plan_id"] != gaPlan {
		t.Errorf("the existing subscription lost its plan: %v", got)
	}
}

func TestCatalogueAdministration_DeprecatedAndRetired(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	product, plan := offeredPlan(t, env, "ga")
	other := newDraftPlan(t, env, product)["id"].(string)
	movePlan(t, env, other, "active")
	org, token := newOrganization(t, env)
	bystander, bystanderToken := newOrganization(t, env)
	recv := newReceiver(t, nil)
	createEndpoint(t, env, token, endpointBody(org, recv.URL, "plan.deprecated", "plan.retired", "product.updated"))
	sub := createSubscription(t, env, token, org, product, plan)
	waitForService(t, env, token, sub.ID, "active")
	// The bystander's subscription to the plan ended: it is told nothing.
	gone := createSubscription(t, env, bystanderToken, bystander, product, plan)
	catalogueDo(t, env, apitest.OperatorToken, http.MethodPost, "/v1/subscriptions/"+gone.ID+"/terminate", "", http.StatusOK)

	// A deprecated plan takes no new subscription nor plan change; its subscribers keep it.
	movePlan(t, env, plan, "deprecated")
	resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/subscriptions", Token: bystanderToken, Body: subscriptionBody(bystander, product, plan)})
	assertProblem(t, "subscribe to a deprecated plan", resp, http.StatusUnprocessableEntity, "unprocessable")
	catalogueDo(t, env, token, http.MethodPost, "/v1/subscriptions/"+sub.ID+"/change-plan", fmt.Sprintf(`{"plan_id":%q}`, other), http.StatusOK)
	for _, action := range []string{"change-plan", "select-plan"} {
		resp = env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/subscriptions/" + sub.ID + "/" + action, Token: token, Body: fmt.Sprintf(`{"plan_id":%q}`, plan)})
		assertProblem(t, action+" to a deprecated plan", resp, http.StatusUnprocessableEntity, "unprocessable")
	}
	// Back on the deprecated plan is impossible now, so move the other plan through instead:
	// the subscription stays on it while it is deprecated and retired.
	movePlan(t, env, other, "deprecated")
	movePlan(t, env, other, "retired")
	got := catalogueDo(t, env, token, http.MethodGet, "/v1/subscriptions/"+sub.ID, "", http.StatusOK)
	if got["plan_id"] != other || got["service_status"] != "active" {
		t.Errorf("subscription on the retired plan: %v", got)
	}
	// Its terms are still readable, prices inactive, and the subscription keeps working.
	var list struct{ Items []map[string]any }
	getJSON(t, env, token, "/v1/plans?product_id="+product, &list)
	i := slices.IndexFunc(list.Items, func(p map[string]any) bool { return p["id"] == other })
	if i < 0 || list.Items[i]["status"] != "retired" || list.Items[i]["recurring_fee"] != 0.0 || priceOf(t, list.Items[i], 0)["status"] != "inactive" {
		t.Errorf("the retired plan as its subscriber reads it: %v", list.Items)
	}
	for _, action := range []string{"suspend", "resume", "cancel", "reactivate"} {
		catalogueDo(t, env, token, http.MethodPost, "/v1/subscriptions/"+sub.ID+"/"+action, "", http.StatusOK)
	}

	// A deprecated product is listed, takes no new subscription; the existing one works.
	catalogueDo(t, env, apitest.OperatorToken, http.MethodPatch, "/v1/products/"+product, `{"availability":"deprecated"}`, http.StatusOK)
	third := newDraftPlan(t, env, product)["id"].(string)
	movePlan(t, env, third, "active")
	resp = env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/subscriptions", Token: bystanderToken, Body: subscriptionBody(bystander, product, third)})
	assertProblem(t, "subscribe to a deprecated product", resp, http.StatusUnprocessableEntity, "unprocessable")
	catalogueDo(t, env, bystanderToken, http.MethodGet, "/v1/products/"+product, "", http.StatusOK)
	catalogueDo(t, env, token, http.MethodPost, "/v1/subscriptions/"+sub.ID+"/change-plan", fmt.Sprintf(`{"plan_id":%q}`, third), http.StatusOK)

	// Events: the subscriber of each plan when it moved, and of the product; nobody else.
	events := map[string]int{}
	rows, err := env.Pool.Query(t.Context(), "SELECT type, data FROM webhook_events WHERE organization_id = $1 AND type IN ('plan.deprecated', 'plan.retired', 'product.updated')", org)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var typ string
		var data map[string]any
		_ = rows.Scan(&typ, &data)
		validateEventData(t, typ, data)
		events[fmt.Sprintf("%s %v", typ, data["id"])]++
	}
	rows.Close()
	want := map[string]int{"plan.deprecated " + plan: 1, "plan.deprecated " + other: 1, "plan.retired " + other: 1, "product.updated " + product: 1}
	if fmt.Sprint(events) != fmt.Sprint(want) {
		t.Errorf("events %v, want %v", events, want)
	}
	if n := env.Count("SELECT count(*) FROM webhook_events WHERE organization_id = $1 AND type LIKE 'p%'", bystander); n != 0 {
		t.Errorf("%d catalogue events for the organization whose subscription ended", n)
	}
	recv.waitFor(t, 4)
}

// TestCatalogueAdministration_EveryProcessSeesAChange: a change is in the next read of the
// process that made it and of any other, whatever their caches held.
func TestCatalogueAdministration_EveryProcessSeesAChange(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	sibling := env.Sibling()
	product := newProduct(t, env, "ga")["id"].(string)
	plan := newDraftPlan(t, env, product)["id"].(string)
	planStatus := func(e *apitest.Env) any {
		var list struct{ Items []map[string]any }
		getJSON(t, e, apitest.OperatorToken, "/v1/plans?product_id="+product, &list)
		if len(list.Items) != 1 {
			t.Fatalf("%d plans", len(list.Items))
		}
		return list.Items[0]["status"]
	}
	productName := func(e *apitest.Env) any {
		var page struct{ Items []map[string]any }
		getJSON(t, e, apitest.OperatorToken, "/v1/products?limit=200", &page)
		for _, p := range page.Items {
			if p["id"] == product {
				return p["name_en"]
			}
		}
		return nil
	}
	for _, e := range []*apitest.Env{env, sibling} { // both caches hold the lists now
		if planStatus(e) != "draft" || productName(e) != "Product" {
			t.Fatal("unexpected catalogue before the change")
		}
	}
	movePlan(t, env, plan, "active")
	catalogueDo(t, env, apitest.OperatorToken, http.MethodPatch, "/v1/products/"+product, `{"name_en":"Renamed"}`, http.StatusOK)
	for name, e := range map[string]*apitest.Env{"same process": env, "sibling": sibling} {
		if got := planStatus(e); got != "active" {
			t.Errorf("%s: plan %v after activation", name, got)
		}
		if got := productName(e); got != "Renamed" {
			t.Errorf("%s: product %v after the rename", name, got)
		}
	}
	// A change by the sibling is seen here at once too.
	movePlan(t, sibling, plan, "deprecated")
	if got := planStatus(env); got != "deprecated" {
		t.Errorf("plan %v after the sibling deprecated it", got)
	}
}
