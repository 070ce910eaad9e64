package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/provider/coreapi/internal/apitest"
)

// TestMalformedIdsKeepTheirAnswers pins the answer every operation gives to an id in a body or
// query that is not a UUID, now that the transport parses ids once and hands the domain a
// uuid.UUID (issue 22): an organization id is 403 for an organization principal (it is not
// its own); for the operator it is 404 where an unknown organization is 404 and 422 where it
// is 422; a product or plan id names nothing (422 at the field). A growth event's
// organization_id is free text for the operator. No refusal stores anything.
func TestMalformedIdsKeepTheirAnswers(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org, tenant := newOrganization(t, env)
	sub := createSubscription(t, env, tenant, org, productEinvoice, planEinvoiceSandbox)
	op := apitest.OperatorToken
	tables := []string{"subscriptions", "spend_controls", "growth_events"}
	before := map[string]int{}
	for _, table := range tables {
		before[table] = env.Count("SELECT count(*) FROM "+table+" WHERE organization_id::text = $1", org)
	}

	type field struct{ location, pointer, code, message string }
	notOwn := func(location, pointer string) *field {
		return &field{location, pointer, "forbidden", "Not the caller's organization."}
	}
	const (
		notOwnDetail  = "The credential may only act for its own organization."
		noAcme        = `Organization "acme" does not exist.`
		planGrowth    = "Plan growth does not exist."
		spendBodyAcme = `{"organization_id":"acme","warning_threshold_percent":50,"monthly_budget_minor_units":null,"hard_operation_limit":4,"notification_recipients":[],"enabled":true}`
	)
	unknownPlan := &field{"body", "/plan_id", "unknown_plan", planGrowth}
	for _, tc := range []struct {
		name, token, method, path, body string
		status                          int
		code, detail                    string
		field                           *field
	}{
		{"CreateSubscription/TenantOrganization", tenant, http.MethodPost, "/v1/subscriptions", subscriptionBody("acme", productAddress, planAddressPreview),
			http.StatusForbidden, "forbidden", notOwnDetail, notOwn("body", "/organization_id")},
		{"CreateSubscription/OperatorOrganization", op, http.MethodPost, "/v1/subscriptions", subscriptionBody("acme", productAddress, planAddressPreview),
			http.StatusNotFound, "not_found", "Organization acme does not exist.", nil},
		{"CreateSubscription/Product", tenant, http.MethodPost, "/v1/subscriptions", subscriptionBody(org, "einvoice", planEinvoiceSandbox),
			http.StatusUnprocessableEntity, "unprocessable", "Product einvoice does not exist.", &field{"body", "/product_id", "unknown_product", "Product einvoice does not exist."}},
		{"CreateSubscription/Plan", op, http.MethodPost, "/v1/subscriptions", subscriptionBody(org, productAddress, "growth"),
			http.StatusUnprocessableEntity, "unprocessable", planGrowth, unknownPlan},
		{"ListSubscriptions/Tenant", tenant, http.MethodGet, "/v1/subscriptions?organization_id=acme", "",
			http.StatusForbidden, "forbidden", notOwnDetail, notOwn("query", "organization_id")},
		{"ListSubscriptions/Operator", op, http.MethodGet, "/v1/subscriptions?organization_id=acme", "",
			http.StatusNotFound, "not_found", "Organization acme does not exist.", nil},
		{"SelectPlan", tenant, http.MethodPost, "/v1/subscriptions/" + sub.ID + "/select-plan", `{"plan_id":"growth"}`,
			http.StatusUnprocessableEntity, "unprocessable", planGrowth, unknownPlan},
		{"ChangePlan", op, http.MethodPost, "/v1/subscriptions/" + sub.ID + "/change-plan", `{"plan_id":"growth"}`,
			http.StatusUnprocessableEntity, "unprocessable", planGrowth, unknownPlan},
		{"PutSpendControl/Tenant", tenant, http.MethodPut, "/v1/spend-controls/einvoice", spendBodyAcme,
			http.StatusForbidden, "forbidden", notOwnDetail, notOwn("body", "/organization_id")},
		{"PutSpendControl/Operator", op, http.MethodPut, "/v1/spend-controls/einvoice", spendBodyAcme,
			http.StatusUnprocessableEntity, "unprocessable", noAcme, nil},
		{"ListSpendControls/Tenant", tenant, http.MethodGet, "/v1/spend-controls?organization_id=acme", "",
			http.StatusForbidden, "forbidden", notOwnDetail, notOwn("query", "organization_id")},
		{"ListSpendControls/Operator", op, http.MethodGet, "/v1/spend-controls?organization_id=acme", "",
			http.StatusUnprocessableEntity, "unprocessable", noAcme, nil},
		{"GetUsage/Tenant", tenant, http.MethodGet, "/v1/usage?organization_id=acme", "",
			http.StatusForbidden, "forbidden", notOwnDetail, notOwn("query", "organization_id")},
		{"GetUsage/Operator", op, http.MethodGet, "/v1/usage?organization_id=acme", "",
			http.StatusUnprocessableEntity, "unprocessable", noAcme, nil},
		{"ListRequestLogs/Tenant", tenant, http.MethodGet, "/v1/request-logs?organization_id=acme", "",
			http.StatusForbidden, "forbidden", notOwnDetail, notOwn("query", "organization_id")},
		{"ListRequestLogs/Operator", op, http.MethodGet, "/v1/request-logs?organization_id=acme", "",
			http.StatusUnprocessableEntity, "unprocessable", noAcme, nil},
		{"CreateGrowthEvent/Tenant", tenant, http.MethodPost, "/v1/growth/events", `{"event_name":"page_view","organization_id":"acme"}`,
			http.StatusForbidden, "forbidden", notOwnDetail, notOwn("body", "/organization_id")},
		{"GetGrowthSummary/Tenant", tenant, http.MethodGet, "/v1/growth/summary?organization_id=acme", "",
			http.StatusForbidden, "forbidden", notOwnDetail, notOwn("query", "organization_id")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := env.Do(apitest.Request{Method: tc.method, Path: tc.path, Token: tc.token, Body: tc.body})
			assertProblem(t, tc.name, resp, tc.status, tc.code)
			var got struct {
				Detail string `json:"detail"`
				Errors []struct {
					Location, Pointer, Code, Message string
				} `json:"errors"`
			}
			if err := json.Unmarshal(resp.Body, &got); err != nil {
				t.Fatal(err)
			}
			var fields []field
			for _, e := range got.Errors {
				fields = append(fields, field{e.Location, e.Pointer, e.Code, e.Message})
			}
			want := []field(nil)
			if tc.field != nil {
				want = []field{*tc.field}
			}
			if got.Detail != tc.detail || len(fields) != len(want) || (len(want) == 1 && fields[0] != want[0]) {
				t.Errorf("detail %q, errors %+v; want %q, %+v", got.Detail, fields, tc.detail, want)
			}
		})
	}

	t.Run("OperatorGrowthOrganizationIsFreeText", func(t *testing.T) {
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/growth/events", Token: op, Body: `{"event_name":"page_view","organization_id":"acme"}`})
		if resp.Status != http.StatusAccepted {
			t.Errorf("operator event for acme: %d %s", resp.Status, resp.Body)
		}
		if resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/growth/summary?organization_id=acme", Token: op}); resp.Status != http.StatusOK {
			t.Errorf("operator summary for acme: %d %s", resp.Status, resp.Body)
		}
	})

	for _, table := range tables {
		if n := env.Count("SELECT count(*) FROM "+table+" WHERE organization_id::text = $1", org); n != before[table] {
			t.Errorf("%s: %d rows after the refusals, %d before", table, n, before[table])
		}
	}
	if n := env.Count("SELECT count(*) FROM growth_events WHERE organization_id = 'acme'"); n != 1 {
		t.Errorf("%d growth events for acme, want the operator's one", n)
	}
}
