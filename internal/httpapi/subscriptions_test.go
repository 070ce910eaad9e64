package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
)

type subscription struct {
	ID                    string     `json:"id"`
	CreatedAt             time.Time  `json:"created_at"`
	UpdatedAt             time.Time  `json:"updated_at"`
	OrganizationID        string     `json:"organization_id"`
	ProductID             string     `json:"product_id"`
	PlanID                string     `json:"plan_id"`
	CommercialStatus      string     `json:"commercial_status"`
	ServiceStatus         string     `json:"service_status"`
	BillingStatus         string     `json:"billing_status"`
	ProvisioningRequestID *string    `json:"provisioning_request_id"`
	StartedAt             time.Time  `json:"started_at"`
	RenewsAt              *time.Time `json:"renews_at"`
	SuspendedAt           *time.Time `json:"suspended_at"`
	TerminatedAt          *time.Time `json:"terminated_at"`
}

type billingInvoice struct {
	ID             string `json:"id"`
	OrganizationID string `json:"organization_id"`
	BillingPeriod  struct {
		Start string `json:"start"`
		End   string `json:"end"`
	} `json:"billing_period"`
	Subtotal          int64      `json:"subtotal"`
	Discount          int64      `json:"discount"`
	Tax               int64      `json:"tax"`
	Total             int64      `json:"total"`
	Currency          string     `json:"currency"`
	Status            string     `json:"status"`
	TaxDocumentStatus string     `json:"tax_document_status"`
	IssuedAt          *time.Time `json:"issued_at"`
	DueAt             *time.Time `json:"due_at"`
	PaidAt            *time.Time `json:"paid_at"`
}

type planSelection struct {
	Subscription subscription    `json:"subscription"`
	Invoice      *billingInvoice `json:"invoice"`
	Activation   string          `json:"activation"`
}

func decode[T any](t testing.TB, resp *apitest.Response) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(resp.Body, &v); err != nil {
		t.Fatalf("decode %T: %v: %s", v, err, resp.Body)
	}
	return v
}

// newOrganization creates an organization and returns its id and development token.
func newOrganization(t testing.TB, env *apitest.Env) (id, token string) {
	t.Helper()
	id = createOrganization(t, env, minimalOrganization)["id"].(string)
	return id, apitest.OrgToken(uuid.MustParse(id))
}

func subscriptionBody(org, product, plan string) string {
	return fmt.Sprintf(`{"organization_id":%q,"product_id":%q,"plan_id":%q}`, org, product, plan)
}

func createSubscription(t testing.TB, env *apitest.Env, token, org, product, plan string) subscription {
	t.Helper()
	resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/subscriptions", Token: token, Body: subscriptionBody(org, product, plan)})
	if resp.Status != http.StatusCreated {
		t.Fatalf("create subscription: status %d: %s", resp.Status, resp.Body)
	}
	return decode[subscription](t, resp)
}

func subscriptionAction(env *apitest.Env, token, id, action, body string) *apitest.Response {
	return env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/subscriptions/" + id + "/" + action, Token: token, Body: body})
}

// waitForService polls the subscription until its service status is want.
func waitForService(t testing.TB, env *apitest.Env, token, id, want string) subscription {
	t.Helper()
	deadline := time.Now().Add(eventually)
	for {
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/subscriptions/" + id, Token: token})
		sub := decode[subscription](t, resp)
		if sub.ServiceStatus == want {
			return sub
		}
		if time.Now().After(deadline) {
			t.Fatalf("subscription %s: service %s after %s, want %s", id, sub.ServiceStatus, eventually, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// setState puts a subscription in a state directly in the database (keeping the table's
// invariants; any service but provisioning has been provisioned), after settling its provisioning job so the worker leaves it alone: a job not
// yet started is deleted, one running is waited for.
func setState(t testing.TB, env *apitest.Env, id, commercial, service string) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(eventually)
	for {
		if _, err := env.Pool.Exec(ctx, `DELETE FROM river_job WHERE kind = 'provision_subscription' AND args->>'subscription_id' = $1
			AND state IN ('available', 'scheduled', 'retryable', 'pending')`, id); err != nil {
			t.Fatal(err)
		}
		if env.Count("SELECT count(*) FROM river_job WHERE kind = 'provision_subscription' AND args->>'subscription_id' = $1 AND state = 'running'", id) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the provisioning job still running after %s", eventually)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := env.Pool.Exec(ctx, `UPDATE subscriptions SET commercial_status = $2, service_status = $3,
		suspended_at  = CASE WHEN $3 = 'suspended' THEN now() END,
		suspended_by  = CASE WHEN $3 = 'suspended' THEN 'organization' END,
		cancelled_by  = CASE WHEN $2 = 'cancelled' THEN 'organization' END,
		terminated_at = CASE WHEN $3 = 'terminated' THEN now() END,
		provisioned_at = CASE WHEN $3 <> 'provisioning' THEN coalesce(provisioned_at, now()) END,
		renews_at     = CASE WHEN $2 = 'cancelled' THEN NULL ELSE coalesce(renews_at, now() + interval '1 month') END
		WHERE id = $1`, id, commercial, service); err != nil {
		t.Fatal(err)
	}
}

func auditCount(env *apitest.Env, resourceID, action string) int {
	return env.Count("SELECT count(*) FROM audit_events WHERE resource_id = $1 AND action = $2", resourceID, action)
}

func TestCreateSubscription(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)

	t.Run("ProvisionsInTheBackground", func(t *testing.T) {
		t.Parallel()
		org, token := newOrganization(t, env)
		body := fmt.Sprintf(`{"organization_id":%q,"product_id":%q,"plan_id":%q,"requested_configuration":{"egs_unit_name":"Riyadh HQ POS","branches":2,"nested":{"ok":true}}}`,
			org, productEinvoice, planEinvoiceGrowthMonthly)
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/subscriptions", Token: token, Body: body})
		if resp.Status != http.StatusCreated {
			t.Fatalf("status %d: %s", resp.Status, resp.Body)
		}
		sub := decode[subscription](t, resp)
		if uuid.MustParse(sub.ID).Version() != 7 {
			t.Errorf("id %s is not a UUIDv7", sub.ID)
		}
		if sub.OrganizationID != org || sub.ProductID != productEinvoice || sub.PlanID != planEinvoiceGrowthMonthly {
			t.Errorf("ids: %s", resp.Body)
		}
		if sub.CommercialStatus != "active" || sub.ServiceStatus != "provisioning" || sub.BillingStatus != "current" {
			t.Errorf("statuses %s/%s/%s, want active/provisioning/current", sub.CommercialStatus, sub.ServiceStatus, sub.BillingStatus)
		}
		if sub.ProvisioningRequestID == nil || !strings.HasPrefix(*sub.ProvisioningRequestID, "prov_") {
			t.Errorf("provisioning_request_id %v", sub.ProvisioningRequestID)
		}
		if sub.StartedAt.IsZero() || time.Since(sub.StartedAt) > time.Minute || !sub.CreatedAt.Equal(sub.StartedAt) || !sub.UpdatedAt.Equal(sub.StartedAt) {
			t.Errorf("started_at %v (created %v, updated %v), want now, all three equal", sub.StartedAt, sub.CreatedAt, sub.UpdatedAt)
		}
		if sub.RenewsAt == nil || sub.StartedAt.Day() <= 28 && !sub.RenewsAt.Equal(sub.StartedAt.AddDate(0, 1, 0)) {
			t.Errorf("renews_at %v, want a month after %v", sub.RenewsAt, sub.StartedAt)
		}
		if sub.SuspendedAt != nil || sub.TerminatedAt != nil {
			t.Errorf("suspended_at/terminated_at must be null: %s", resp.Body)
		}
		var config map[string]any
		if err := env.Pool.QueryRow(context.Background(), "SELECT requested_configuration FROM subscriptions WHERE id = $1", sub.ID).Scan(&config); err != nil {
			t.Fatal(err)
		}
		if config["egs_unit_name"] != "Riyadh HQ POS" || config["branches"] != float64(2) || config["nested"].(map[string]any)["ok"] != true {
			t.Errorf("requested_configuration stored as %v", config)
		}
		if n := auditCount(env, sub.ID, "subscription.created"); n != 1 {
			t.Errorf("%d subscription.created audit events, want 1", n)
		}

		active := waitForService(t, env, token, sub.ID, "active")
		if active.CommercialStatus != "active" || *active.ProvisioningRequestID != *sub.ProvisioningRequestID {
			t.Errorf("after provisioning: %+v", active)
		}
		// River records the job's completion just after the transaction that provisioned.
		waitForCount(t, env, 1, `SELECT count(*) FROM river_job WHERE kind = 'provision_subscription' AND args->>'subscription_id' = $1::text
			AND state = 'completed' AND attempt = 1`, sub.ID)
		if n := env.Count("SELECT count(*) FROM audit_events WHERE resource_id = $1 AND action = 'subscription.provisioned' AND actor_type = 'system'", sub.ID); n != 1 {
			t.Errorf("%d subscription.provisioned audit events by the system, want 1", n)
		}
	})

	t.Run("OperatorForAnyOrganization", func(t *testing.T) {
		t.Parallel()
		org, _ := newOrganization(t, env)
		sub := createSubscription(t, env, apitest.OperatorToken, org, productPlatform, planPlatformDeveloper)
		var actor string
		if err := env.Pool.QueryRow(context.Background(), "SELECT actor_type FROM audit_events WHERE resource_id = $1 AND action = 'subscription.created'", sub.ID).Scan(&actor); err != nil || actor != "operator" {
			t.Errorf("audit actor %q, %v", actor, err)
		}
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/subscriptions", Token: apitest.OperatorToken, Body: `{"organization_id":"` + org + `","product_id":"` + productEinvoice + `","plan_id":"` + planEinvoiceSandbox + `"}`})
		if resp.Status != http.StatusCreated {
			t.Errorf("no requested_configuration: status %d: %s", resp.Status, resp.Body)
		}
	})

	t.Run("ErrUnprocessable", func(t *testing.T) {
		t.Parallel()
		org, token := newOrganization(t, env)
		for _, tc := range []struct {
			name, product, plan, pointer, detail string
		}{
			{"UnknownProduct", uuid.NewString(), planEinvoiceSandbox, "/product_id", "does not exist"},
			{"ProductNotAUUID", "einvoice", planEinvoiceSandbox, "/product_id", "does not exist"},
			{"UnknownPlan", productEinvoice, uuid.NewString(), "/plan_id", "does not exist"},
			{"PlanNotAUUID", productEinvoice, "growth", "/plan_id", "does not exist"},
			{"PlanOfAnotherProduct", productEinvoice, planAddressPreview, "/plan_id", "belongs to another product"},
			{"DeprecatedPlan", productEinvoice, planEinvoiceDeprecated, "/plan_id", "is deprecated; only active plans"},
			{"RetiredPlan", productAddress, planAddressRetired, "/plan_id", "is retired; only active plans"},
		} {
			resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/subscriptions", Token: token, Body: subscriptionBody(org, tc.product, tc.plan)})
			assertProblem(t, tc.name, resp, http.StatusUnprocessableEntity, "unprocessable")
			if !hasFieldError(resp, tc.pointer) || !strings.Contains(string(resp.Body), tc.detail) {
				t.Errorf("%s: want %s named and %q in the detail: %s", tc.name, tc.pointer, tc.detail, resp.Body)
			}
		}
		if n := env.Count("SELECT count(*) FROM subscriptions WHERE organization_id = $1", org); n != 0 {
			t.Errorf("refused requests stored %d subscriptions", n)
		}
	})

	t.Run("ErrOtherOrganization", func(t *testing.T) {
		t.Parallel()
		_, token := newOrganization(t, env)
		other, _ := newOrganization(t, env)
		for name, org := range map[string]string{"Other": other, "Unknown": uuid.NewString(), "NotAUUID": "acme"} {
			resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/subscriptions", Token: token, Body: subscriptionBody(org, productEinvoice, planEinvoiceSandbox)})
			assertProblem(t, name, resp, http.StatusForbidden, "forbidden")
		}
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/subscriptions", Token: apitest.OperatorToken, Body: subscriptionBody(uuid.NewString(), productEinvoice, planEinvoiceSandbox)})
		assertProblem(t, "operator, unknown organization", resp, http.StatusNotFound, "not_found")
		if n := env.Count("SELECT count(*) FROM subscriptions WHERE organization_id = $1", other); n != 0 {
			t.Errorf("another tenant's request stored %d subscriptions", n)
		}
	})

	t.Run("ErrSecondLiveSubscriptionConflicts", func(t *testing.T) {
		t.Parallel()
		org, token := newOrganization(t, env)
		const n = 10
		statuses := make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				statuses[i] = env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/subscriptions", Token: token,
					Body: subscriptionBody(org, productEinvoice, planEinvoiceSandbox)}).Status
			})
		}
		wg.Wait()
		created := 0
		for _, s := range statuses {
			switch s {
			case http.StatusCreated:
				created++
			case http.StatusConflict:
			default:
				t.Errorf("status %d, want 201 or 409", s)
			}
		}
		if created != 1 {
			t.Errorf("%d of %d concurrent creates succeeded, want 1", created, n)
		}
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/subscriptions", Token: token, Body: subscriptionBody(org, productEinvoice, planEinvoiceSandbox)})
		assertProblem(t, "second", resp, http.StatusConflict, "conflict")
		// Another product is fine, and so is the same product once the first is terminated.
		createSubscription(t, env, token, org, productAddress, planAddressPreview)
		var live string
		if err := env.Pool.QueryRow(context.Background(), "SELECT id FROM subscriptions WHERE organization_id = $1 AND product_id = $2", org, productEinvoice).Scan(&live); err != nil {
			t.Fatal(err)
		}
		if r := subscriptionAction(env, token, live, "terminate", ""); r.Status != http.StatusOK {
			t.Fatalf("terminate: %d %s", r.Status, r.Body)
		}
		createSubscription(t, env, token, org, productEinvoice, planEinvoiceGrowthMonthly)
	})

	t.Run("ErrBadInput", func(t *testing.T) {
		t.Parallel()
		org, token := newOrganization(t, env)
		for name, body := range map[string]string{
			"MissingPlan":     fmt.Sprintf(`{"organization_id":%q,"product_id":%q}`, org, productEinvoice),
			"EmptyProduct":    subscriptionBody(org, "", planEinvoiceSandbox),
			"UnknownProperty": fmt.Sprintf(`{"organization_id":%q,"product_id":%q,"plan_id":%q,"coupon":"X"}`, org, productEinvoice, planEinvoiceSandbox),
			"ConfigNotObject": fmt.Sprintf(`{"organization_id":%q,"product_id":%q,"plan_id":%q,"requested_configuration":[1]}`, org, productEinvoice, planEinvoiceSandbox),
		} {
			resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/subscriptions", Token: token, Body: body})
			assertProblem(t, name, resp, http.StatusBadRequest, "validation_failed")
		}
	})
}

func TestGetAndListSubscriptions(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org, token := newOrganization(t, env)
	other, otherToken := newOrganization(t, env)
	a := createSubscription(t, env, token, org, productEinvoice, planEinvoiceSandbox)
	b := createSubscription(t, env, token, org, productAddress, planAddressPreview)
	theirs := createSubscription(t, env, otherToken, other, productEinvoice, planEinvoiceSandbox)

	t.Run("Get", func(t *testing.T) {
		t.Parallel()
		for _, tok := range []string{token, apitest.OperatorToken} {
			resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/subscriptions/" + a.ID, Token: tok})
			if got := decode[subscription](t, resp); resp.Status != http.StatusOK || got.ID != a.ID || !got.CreatedAt.Equal(a.CreatedAt) {
				t.Errorf("get: %d %s", resp.Status, resp.Body)
			}
			if len(resp.JSON(t)) != 14 {
				t.Errorf("a subscription has 14 fields: %s", resp.Body)
			}
		}
	})

	t.Run("List", func(t *testing.T) {
		t.Parallel()
		for _, tok := range []string{token, apitest.OperatorToken} {
			resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/subscriptions?organization_id=" + org, Token: tok})
			list := decode[struct {
				Items      []subscription `json:"items"`
				NextCursor *string        `json:"next_cursor"`
			}](t, resp)
			if len(list.Items) != 2 || list.Items[0].ID != a.ID || list.Items[1].ID != b.ID || list.NextCursor != nil {
				t.Errorf("list: %s", resp.Body)
			}
			if m := resp.JSON(t); m["next_cursor"] != nil {
				t.Errorf("next_cursor must be null: %s", resp.Body)
			}
		}
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/subscriptions?organization_id=" + org, Token: otherToken})
		assertProblem(t, "another organization's list", resp, http.StatusForbidden, "forbidden")
		resp = env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/subscriptions?organization_id=" + uuid.NewString(), Token: apitest.OperatorToken})
		assertProblem(t, "unknown organization", resp, http.StatusNotFound, "not_found")
		resp = env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/subscriptions", Token: token})
		assertProblem(t, "missing organization_id", resp, http.StatusBadRequest, "validation_failed")
	})

	t.Run("ErrOtherTenantIsNotFound", func(t *testing.T) {
		t.Parallel()
		missing := uuid.NewString()
		theirsResp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/subscriptions/" + theirs.ID, Token: token})
		unknownResp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/subscriptions/" + missing, Token: token})
		assertProblem(t, "other tenant", theirsResp, http.StatusNotFound, "not_found")
		if problemShape(theirsResp, theirs.ID) != problemShape(unknownResp, missing) {
			t.Errorf("another tenant's subscription must look exactly like a missing one:\n%s\n%s", theirsResp.Body, unknownResp.Body)
		}
		for _, action := range []string{"select-plan", "change-plan", "cancel", "reactivate", "suspend", "resume", "terminate"} {
			body := ""
			if strings.HasSuffix(action, "-plan") {
				body = `{"plan_id":"` + planEinvoiceGrowthMonthly + `"}`
			}
			resp := subscriptionAction(env, token, theirs.ID, action, body)
			assertProblem(t, action+" on another tenant's subscription", resp, http.StatusNotFound, "not_found")
		}
		got := waitForService(t, env, otherToken, theirs.ID, "active")
		if got.CommercialStatus != "active" || got.PlanID != planEinvoiceSandbox {
			t.Errorf("another tenant's actions changed the subscription: %+v", got)
		}
	})
}
