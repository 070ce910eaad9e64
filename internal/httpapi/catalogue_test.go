package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
)

// Ids of the seeded catalogue (db/migrations/00031_catalogue_seed.sql).
const (
	productEinvoice = "0193a000-0000-7000-8000-000000000001"
	productAddress  = "0193a000-0000-7000-8000-000000000002"
	productPlatform = "0193a000-0000-7000-8000-000000000003"

	planEinvoiceGrowthMonthly = "0193a000-0000-7000-8000-000000000101" // setup 50000 + recurring 29900
	planEinvoiceGrowthAnnual  = "0193a000-0000-7000-8000-000000000102" // setup 50000 waived by a discount, recurring 299000
	planEinvoiceSandbox       = "0193a000-0000-7000-8000-000000000103" // free
	planEinvoicePayAsYouGo    = "0193a000-0000-7000-8000-000000000104" // usage only
	planEinvoiceBusinessTrial = "0193a000-0000-7000-8000-000000000105" // 14-day trial with payment method, setup 100000
	planEinvoiceDeprecated    = "0193a000-0000-7000-8000-000000000106"
	planAddressPreview        = "0193a000-0000-7000-8000-000000000201" // free
	planAddressStandardTrial  = "0193a000-0000-7000-8000-000000000202" // 30-day trial without payment method
	planAddressRetired        = "0193a000-0000-7000-8000-000000000203"
	planPlatformDeveloper     = "0193a000-0000-7000-8000-000000000301"
	planPlatformOnboarding    = "0193a000-0000-7000-8000-000000000304" // one-time 150000
)

type productPage struct {
	Items []struct {
		ID   string `json:"id"`
		Code string `json:"code"`
	} `json:"items"`
	NextCursor *string `json:"next_cursor"`
}

func getJSON(t testing.TB, env *apitest.Env, token, path string, into any) *apitest.Response {
	t.Helper()
	resp := env.Do(apitest.Request{Method: http.MethodGet, Path: path, Token: token})
	if resp.Status != http.StatusOK {
		t.Fatalf("GET %s: status %d: %s", path, resp.Status, resp.Body)
	}
	if err := json.Unmarshal(resp.Body, into); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return resp
}

func TestListProducts(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)

	var all productPage
	getJSON(t, env, apitest.OperatorToken, "/v1/products", &all)
	total := len(all.Items)
	codes := map[string]bool{}
	for _, p := range all.Items {
		codes[p.Code] = true
	}
	if total != 3 || !codes["einvoice"] || !codes["address"] || !codes["platform"] || all.NextCursor != nil {
		t.Fatalf("catalogue: %d products %v, next_cursor %v; want einvoice, address, platform on one page", total, codes, all.NextCursor)
	}

	t.Run("EveryLimitWalksEveryProductOnce", func(t *testing.T) {
		t.Parallel()
		// More products than the seed, inserted out of id order, make the walk meaningful.
		env := apitest.New(t)
		org := createOrganization(t, env, minimalOrganization)["id"].(string)
		ids := make([]uuid.UUID, 17)
		for i := range ids {
			ids[i] = uuid.Must(uuid.NewV7())
		}
		rand.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		for i, id := range ids {
			if _, err := env.Pool.Exec(context.Background(), `INSERT INTO products (id, code, name_ar, name_en, description, category,
				service_classification, regulatory_classification, availability, provisioning_workflow, termination_policy, billing_model)
				VALUES ($1, $2, 'منتج', 'Product', 'A test product.', 'other', 'developer_platform', 'ordinary_software', 'ga',
				'manual', 'immediate', 'free')`, id, fmt.Sprintf("test-%d", i)); err != nil {
				t.Fatal(err)
			}
		}
		var all productPage
		getJSON(t, env, apitest.OperatorToken, "/v1/products?limit=200", &all)
		total := len(all.Items)
		if total != 20 || all.NextCursor != nil {
			t.Fatalf("%d products, next_cursor %v; want 20 on one page", total, all.NextCursor)
		}
		for limit := 1; limit <= total+1; limit++ {
			seen := map[string]int{}
			var order []string
			path := fmt.Sprintf("/v1/products?limit=%d", limit)
			for pages := 0; ; pages++ {
				if pages > total+1 {
					t.Fatalf("limit %d: pagination does not end", limit)
				}
				var page productPage
				getJSON(t, env, apitest.OrgToken(uuid.MustParse(org)), path, &page)
				if len(page.Items) > limit || len(page.Items) == 0 {
					t.Fatalf("limit %d: page of %d items", limit, len(page.Items))
				}
				for _, p := range page.Items {
					seen[p.ID]++
					order = append(order, p.ID)
				}
				if page.NextCursor == nil {
					break
				}
				path = fmt.Sprintf("/v1/products?limit=%d&cursor=%s", limit, *page.NextCursor)
			}
			if len(order) != total {
				t.Errorf("limit %d: walked %d items, want %d", limit, len(order), total)
			}
			for i, p := range all.Items {
				if seen[p.ID] != 1 {
					t.Errorf("limit %d: product %s seen %d times", limit, p.Code, seen[p.ID])
				}
				if i < len(order) && order[i] != p.ID {
					t.Errorf("limit %d: item %d is %s, want %s (id order)", limit, i, order[i], p.ID)
				}
			}
		}
	})

	t.Run("LastPageHasNullCursor", func(t *testing.T) {
		t.Parallel()
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: fmt.Sprintf("/v1/products?limit=%d", total), Token: apitest.OperatorToken})
		if m := resp.JSON(t); m["next_cursor"] != nil {
			t.Errorf("a page holding the last product has next_cursor %v, want null", m["next_cursor"])
		}
	})

	t.Run("ErrBadParameters", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct{ query, pointer string }{
			{"limit=0", "limit"},
			{"limit=201", "limit"},
			{"limit=-1", "limit"},
			{"limit=ten", "limit"},
			{"cursor=", "cursor"},
			{"cursor=not-a-cursor", "cursor"},
		} {
			resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/products?" + tc.query, Token: apitest.OperatorToken})
			assertProblem(t, tc.query, resp, http.StatusBadRequest, "validation_failed")
			if !hasFieldError(resp, tc.pointer) {
				t.Errorf("%s: errors do not name %s: %s", tc.query, tc.pointer, resp.Body)
			}
		}
	})

	t.Run("ErrUnauthenticated", func(t *testing.T) {
		t.Parallel()
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/products"})
		assertProblem(t, "no token", resp, http.StatusUnauthorized, "unauthenticated")
	})
}

func TestGetProduct(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)

	t.Run("DetailWithPlansWithoutPrices", func(t *testing.T) {
		t.Parallel()
		for _, id := range []string{productEinvoice, productAddress, productPlatform} {
			resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/products/" + id, Token: apitest.OperatorToken})
			if resp.Status != http.StatusOK {
				t.Fatalf("%s: status %d: %s", id, resp.Status, resp.Body)
			}
			var p struct {
				ID    string           `json:"id"`
				Plans []map[string]any `json:"plans"`
			}
			if err := json.Unmarshal(resp.Body, &p); err != nil {
				t.Fatal(err)
			}
			if p.ID != id || len(p.Plans) < 3 {
				t.Errorf("%s: id %s with %d plans", id, p.ID, len(p.Plans))
			}
			for _, plan := range p.Plans {
				if plan["product_id"] != id {
					t.Errorf("%s: plan %v of product %v", id, plan["code"], plan["product_id"])
				}
				if _, ok := plan["prices"]; ok {
					t.Errorf("%s: plan %v carries prices in the product detail", id, plan["code"])
				}
			}
		}
	})

	t.Run("ErrUnknown", func(t *testing.T) {
		t.Parallel()
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/products/" + uuid.NewString(), Token: apitest.OperatorToken})
		assertProblem(t, "unknown product", resp, http.StatusNotFound, "not_found")
		resp = env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/products/einvoice", Token: apitest.OperatorToken})
		assertProblem(t, "not a uuid", resp, http.StatusBadRequest, "validation_failed")
	})
}

func TestListPlans(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)

	type plan struct {
		ID          string          `json:"id"`
		ProductID   string          `json:"product_id"`
		Code        string          `json:"code"`
		Status      string          `json:"status"`
		Period      string          `json:"billing_period"`
		TrialPolicy json.RawMessage `json:"trial_policy"`
		Prices      []struct {
			PlanID        string          `json:"plan_id"`
			ComponentType string          `json:"component_type"`
			Currency      string          `json:"currency"`
			Tiers         json.RawMessage `json:"tiers"`
		} `json:"prices"`
	}
	type planList struct {
		Items      []plan  `json:"items"`
		NextCursor *string `json:"next_cursor"`
	}

	t.Run("EveryPlanWithPrices", func(t *testing.T) {
		t.Parallel()
		var list planList
		getJSON(t, env, apitest.OperatorToken, "/v1/plans", &list)
		if list.NextCursor != nil {
			t.Errorf("next_cursor %v, want null", *list.NextCursor)
		}
		statuses, periods, components := map[string]bool{}, map[string]bool{}, map[string]bool{}
		trials := 0
		for _, p := range list.Items {
			statuses[p.Status], periods[p.Period] = true, true
			if string(p.TrialPolicy) != "null" {
				trials++
			}
			if len(p.Prices) == 0 {
				t.Errorf("plan %s has no prices", p.Code)
			}
			for _, price := range p.Prices {
				components[price.ComponentType] = true
				if price.PlanID != p.ID || price.Currency != "SAR" {
					t.Errorf("plan %s: price of plan %s in %s", p.Code, price.PlanID, price.Currency)
				}
				if price.ComponentType == "graduated_usage" && string(price.Tiers) == "null" {
					t.Errorf("plan %s: graduated price without tiers", p.Code)
				}
			}
		}
		for _, want := range []string{"active", "deprecated", "retired"} {
			if !statuses[want] {
				t.Errorf("no %s plan in the catalogue", want)
			}
		}
		for _, want := range []string{"monthly", "annual", "usage_only"} {
			if !periods[want] {
				t.Errorf("no %s plan in the catalogue", want)
			}
		}
		for _, want := range []string{"recurring_fee", "setup_fee", "graduated_usage", "package_pricing", "per_unit"} {
			if !components[want] {
				t.Errorf("no %s price component in the catalogue", want)
			}
		}
		if trials == 0 {
			t.Error("no plan with a trial in the catalogue")
		}
	})

	t.Run("OfOneProduct", func(t *testing.T) {
		t.Parallel()
		for _, product := range []string{productEinvoice, productAddress, productPlatform} {
			var list planList
			getJSON(t, env, apitest.OperatorToken, "/v1/plans?product_id="+product, &list)
			if len(list.Items) == 0 {
				t.Errorf("product %s: no plans", product)
			}
			for _, p := range list.Items {
				if p.ProductID != product {
					t.Errorf("filter %s returned plan %s of product %s", product, p.Code, p.ProductID)
				}
			}
		}
	})

	t.Run("UnknownProductMatchesNothing", func(t *testing.T) {
		t.Parallel()
		for _, product := range []string{uuid.NewString(), "einvoice"} {
			var list planList
			getJSON(t, env, apitest.OperatorToken, "/v1/plans?product_id="+product, &list)
			if len(list.Items) != 0 || list.NextCursor != nil {
				t.Errorf("product_id %s: %d plans", product, len(list.Items))
			}
		}
	})

	t.Run("ErrEmptyProductID", func(t *testing.T) {
		t.Parallel()
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/plans?product_id=", Token: apitest.OperatorToken})
		assertProblem(t, "empty product_id", resp, http.StatusBadRequest, "validation_failed")
		if !strings.Contains(string(resp.Body), "product_id") {
			t.Errorf("problem does not name product_id: %s", resp.Body)
		}
	})
}

// TestCatalogueAnswersFollowTheCatalogue: catalogue lists are answered from encoded bodies
// kept per catalogue version, so a change made behind the API's back (psql, a migration,
// the seed) shows in the very next answer, and an unchanged catalogue answers the same bytes.
func TestCatalogueAnswersFollowTheCatalogue(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	token := apitest.OrgToken(uuid.MustParse(createOrganization(t, env, minimalOrganization)["id"].(string)))
	get := func(path string) []byte {
		t.Helper()
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: path, Token: token})
		if resp.Status != http.StatusOK {
			t.Fatalf("GET %s: status %d: %s", path, resp.Status, resp.Body)
		}
		return resp.Body
	}
	plansPath := "/v1/plans?product_id=" + productEinvoice
	plans, products := get(plansPath), get("/v1/products")
	if again := get(plansPath); string(again) != string(plans) {
		t.Fatalf("unchanged catalogue, different plans:\n%s\n%s", plans, again)
	}

	for _, change := range []struct {
		name, sql, path, want string
	}{
		{"PlanRenamed", `UPDATE plans SET name = 'Growth, renamed' WHERE id = '` + planEinvoiceGrowthMonthly + `'`, plansPath, `"Growth, renamed"`},
		{"PriceChanged", `UPDATE prices SET amount = 31337 WHERE plan_id = '` + planEinvoiceGrowthMonthly + `' AND amount IS NOT NULL`, plansPath, `31337`},
		{"ProductRenamed", `UPDATE products SET name_en = 'E-invoicing, renamed' WHERE id = '` + productEinvoice + `'`, "/v1/products", `"E-invoicing, renamed"`},
	} {
		before := get(change.path)
		if strings.Contains(string(before), change.want) {
			t.Fatalf("%s: %s already in %s", change.name, change.want, before)
		}
		env.Exec(change.sql)
		if after := get(change.path); !strings.Contains(string(after), change.want) {
			t.Errorf("%s: the next answer does not show the change: %s", change.name, after)
		}
	}
	if string(get(plansPath)) == string(plans) || string(get("/v1/products")) == string(products) {
		t.Error("the answers are those of the catalogue before the changes")
	}

	// A statement that changes no row still raises the version: the cache only ever errs
	// towards reading the catalogue again.
	var before, after int64
	if err := env.Pool.QueryRow(context.Background(), `SELECT version FROM catalogue_version`).Scan(&before); err != nil {
		t.Fatal(err)
	}
	env.Exec(`DELETE FROM prices WHERE false`)
	if err := env.Pool.QueryRow(context.Background(), `SELECT version FROM catalogue_version`).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after != before+1 {
		t.Errorf("catalogue version %d after a statement on prices, want %d", after, before+1)
	}
}
