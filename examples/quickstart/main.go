// Command quickstart walks a new customer through the Provider Core API with the generated
// Go client (github.com/provider/coreapi/gen/api) and nothing else: as the operator it signs
// up an organization and creates its API key; as the organization it exchanges the key for an
// OAuth access token, puts its billing on a test clock, subscribes to e-invoicing, selects a
// plan, pays its first invoice, advances the clock a month to see the renewal invoice,
// generates a simplified tax invoice and resolves a short address.
//
//	go run ./examples/quickstart -base-url http://127.0.0.1:8080 -operator-token dev:operator
//
// The flags default to COREAPI_BASE_URL and COREAPI_OPERATOR_TOKEN. In production mode the
// operator token is one minted by `coreapi operator-token`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/oapi-codegen/nullable"

	"github.com/provider/coreapi/gen/api"
)

// The seeded catalogue's e-invoicing product and two of its plans.
const (
	productEinvoice      = "0193a000-0000-7000-8000-000000000001"
	planSandbox          = "0193a000-0000-7000-8000-000000000103" // free
	planGrowthMonthly    = "0193a000-0000-7000-8000-000000000101" // setup and monthly fee: issues an invoice
	provisioningPatience = 30 * time.Second
)

// The test clock's start and the time a month later it is advanced to: Growth monthly renews
// on 2025-04-01T09:30Z, so the advance issues April's invoice.
var (
	clockStart = time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC)
	clockMonth = time.Date(2025, 4, 2, 0, 0, 0, 0, time.UTC)
)

func main() {
	baseURL := flag.String("base-url", envOr("COREAPI_BASE_URL", "http://127.0.0.1:8080"), "URL of the API (env COREAPI_BASE_URL)")
	operatorToken := flag.String("operator-token", envOr("COREAPI_OPERATOR_TOKEN", "dev:operator"), "operator bearer token (env COREAPI_OPERATOR_TOKEN)")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, *baseURL, *operatorToken); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// client returns the generated client sending token as its bearer.
func client(baseURL, token string) (*api.ClientWithResponses, error) {
	return api.NewClientWithResponses(baseURL, api.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		return nil
	}))
}

// response is what every generated response has.
type response interface{ StatusCode() int }

// expect fails unless resp has status want, showing the problem the server returned.
func expect(step string, resp response, body []byte, err error, want int) error {
	if err != nil {
		return fmt.Errorf("%s: %w", step, err)
	}
	if resp.StatusCode() != want {
		return fmt.Errorf("%s: status %d, want %d: %s", step, resp.StatusCode(), want, body)
	}
	return nil
}

func run(ctx context.Context, baseURL, operatorToken string) error {
	operator, err := client(baseURL, operatorToken)
	if err != nil {
		return err
	}

	// 1. The operator signs up an organization.
	org, err := operator.CreateOrganizationWithResponse(ctx, nil, api.CreateOrganizationJSONRequestBody{
		LegalNameAr:      "شركة البداية السريعة",
		LegalNameEn:      "Quickstart Trading Co",
		DisplayName:      "Quickstart",
		OrganizationType: api.OrganizationTypeStandardCustomer,
		Country:          "SA",
	})
	if err := expect("create organization", org, org.Body, err, http.StatusCreated); err != nil {
		return err
	}
	orgID := org.JSON201.Id.String()
	fmt.Printf("organization  %s (%s)\n", orgID, org.JSON201.LifecycleStatus)

	// 2. …and creates its sandbox API key; the secret is shown this once.
	key, err := operator.CreateApiKeyWithResponse(ctx, nil, api.CreateApiKeyJSONRequestBody{
		OrganizationId: orgID,
		Name:           "quickstart backend",
		Environment:    api.ApiKeyEnvironmentSandbox,
		Scopes: []api.Scope{api.ScopeOrganizationsRead, api.ScopeProductsRead, api.ScopeSubscriptionsRead,
			api.ScopeSubscriptionsWrite, api.ScopeInvoicesRead, api.ScopePaymentsWrite, api.ScopeInvoiceGenerate,
			api.ScopeAddressRead},
	})
	if err := expect("create API key", key, key.Body, err, http.StatusCreated); err != nil {
		return err
	}
	fmt.Printf("api key       %s (prefix %s)\n", key.JSON201.Id, key.JSON201.Prefix)

	// 3. The organization exchanges its key for an OAuth access token (client credentials;
	// client_id is the key's prefix, client_secret its secret).
	anonymous, err := client(baseURL, "")
	if err != nil {
		return err
	}
	prefix, secret, _ := strings.Cut(strings.TrimPrefix(key.JSON201.FullKey, key.JSON201.Prefix), "_")
	if prefix != "" || secret == "" {
		return errors.New("the full key is not <prefix>_<secret>")
	}
	scope := "organizations:read products:read subscriptions:read subscriptions:write invoices:read payments:write invoice:generate address:read"
	tok, err := anonymous.CreateOAuthTokenWithFormdataBodyWithResponse(ctx, nil, api.CreateOAuthTokenFormdataRequestBody{
		GrantType:    api.OAuthFormGrantTypeClientCredentials,
		ClientId:     &key.JSON201.Prefix,
		ClientSecret: &secret,
		Scope:        &scope,
	})
	if err := expect("exchange the key for a token", tok, tok.Body, err, http.StatusOK); err != nil {
		return err
	}
	fmt.Printf("access token  %s, expires in %gs\n", tok.JSON200.TokenType, tok.JSON200.ExpiresIn)
	customer, err := client(baseURL, tok.JSON200.AccessToken)
	if err != nil {
		return err
	}

	// 4. Put the organization's billing on a test clock (sandbox credentials only): from now on
	// its subscriptions are billed at the clock's time, which moves only when advanced.
	clock, err := customer.CreateTestClockWithResponse(ctx, nil, api.CreateTestClockJSONRequestBody{OrganizationId: orgID, FrozenTime: clockStart})
	if err := expect("create a test clock", clock, clock.Body, err, http.StatusCreated); err != nil {
		return err
	}
	fmt.Printf("test clock    %s at %s\n", clock.JSON201.Id, clock.JSON201.FrozenTime.Format(time.RFC3339))

	// 5. Subscribe to e-invoicing on the free sandbox plan and wait for provisioning.
	sub, err := customer.CreateSubscriptionWithResponse(ctx, nil, api.CreateSubscriptionJSONRequestBody{
		OrganizationId: orgID, ProductId: productEinvoice, PlanId: planSandbox,
	})
	if err := expect("subscribe", sub, sub.Body, err, http.StatusCreated); err != nil {
		return err
	}
	subID := sub.JSON201.Id
	fmt.Printf("subscription  %s (%s)\n", subID, sub.JSON201.ServiceStatus)
	deadline := time.Now().Add(provisioningPatience)
	for {
		got, err := customer.GetSubscriptionWithResponse(ctx, subID)
		if err := expect("read the subscription", got, got.Body, err, http.StatusOK); err != nil {
			return err
		}
		if got.JSON200.ServiceStatus == api.SubscriptionServiceStatusActive {
			fmt.Printf("subscription  %s is active\n", subID)
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("subscription %s still %s after %s", subID, got.JSON200.ServiceStatus, provisioningPatience)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// 6. Select a paid plan: the first period's invoice is issued.
	sel, err := customer.SelectSubscriptionPlanWithResponse(ctx, subID, nil, api.SelectSubscriptionPlanJSONRequestBody{PlanId: planGrowthMonthly})
	if err := expect("select a plan", sel, sel.Body, err, http.StatusOK); err != nil {
		return err
	}
	fmt.Printf("plan          %s selected: %s", sel.JSON200.Subscription.PlanId, sel.JSON200.Activation)
	first, err := sel.JSON200.Invoice.Get()
	if err != nil {
		return fmt.Errorf("select a plan: no invoice: %s", sel.Body)
	}
	fmt.Printf(", invoice %s total %d %s (VAT %d)\n", first.Id, first.Total, first.Currency, first.Tax)
	if err := payAndRenew(ctx, customer, clock.JSON201.Id, subID, first); err != nil {
		return err
	}

	// 9. Generate a simplified tax invoice (synthetic sandbox; nothing is reported).
	street, building, district, city, postal := "King Fahd Road", "2929", "Al Olaya", "Riyadh", "12214"
	inv, err := customer.GenerateSimplifiedInvoiceWithResponse(ctx, nil, api.GenerateSimplifiedInvoiceJSONRequestBody{
		OrganizationId:       orgID,
		TaxCalculationMode:   api.TaxCalculationModeServiceCalculated,
		RequestedInvoiceType: api.RequestedInvoiceTypeSimplifiedTaxInvoice,
		Seller: api.InvoiceSeller{
			LegalName:              "Quickstart Trading Co",
			VatNumber:              "310123456700003",
			CommercialRegistration: nullable.NewNullableWithValue("1010123456"),
			Address: nullable.NewNullableWithValue(api.InvoiceAddress{
				StreetName: &street, BuildingNumber: &building, District: &district, City: &city,
				PostalCode: &postal, CountryCode: "SA",
			}),
		},
		LineItems: []api.InvoiceLineItem{{
			LineId: "1", NameEn: "Arabic coffee", Quantity: 2, UnitCode: api.UnitCodePCE,
			UnitPrice: 4500, TaxCategory: api.TaxCategoryS, TaxRate: 15,
		}},
	})
	if err := expect("generate a simplified invoice", inv, inv.Body, err, http.StatusCreated); err != nil {
		return err
	}
	gen := inv.JSON201.Invoice
	fmt.Printf("tax invoice   %s %s: ICV %d, payable %d %s (VAT %d)\n", gen.Id, gen.Status, gen.Identity.Icv,
		gen.Totals.PayableAmount, gen.Totals.Currency, gen.Totals.VatAmount)

	// 10. Resolve a short address.
	addr, err := customer.ResolveShortAddressWithResponse(ctx, nil, api.ResolveShortAddressJSONRequestBody{
		ShortAddress: "RRRD2929", Language: api.LanguageEn,
	})
	if err := expect("resolve a short address", addr, addr.Body, err, http.StatusOK); err != nil {
		return err
	}
	fmt.Printf("short address %s: %s, missing %v\n", addr.JSON200.ShortAddress, addr.JSON200.Status, addr.JSON200.MissingFields)
	fmt.Println("quickstart: done")
	return nil
}

// payAndRenew pays the first invoice in full with the sandbox's always-succeeding payment
// method (7), advances the test clock a month (8) and lists the subscription's invoices: the
// first, paid, and the renewal the advance issued.
func payAndRenew(ctx context.Context, customer *api.ClientWithResponses, clock, sub api.Id, first api.BillingInvoice) error {
	pay, err := customer.CreateInvoicePaymentWithResponse(ctx, first.Id, nil, api.CreateInvoicePaymentJSONRequestBody{
		Amount: first.Total, PaymentMethod: api.PaymentMethodSandboxSuccess,
	})
	if err := expect("pay the first invoice", pay, pay.Body, err, http.StatusCreated); err != nil {
		return err
	}
	fmt.Printf("payment       %s %s: %d %s\n", pay.JSON201.Id, pay.JSON201.Status, pay.JSON201.Amount, pay.JSON201.Currency)

	adv, err := customer.AdvanceTestClockWithResponse(ctx, clock, nil, api.AdvanceTestClockJSONRequestBody{FrozenTime: clockMonth})
	if err := expect("advance the test clock", adv, adv.Body, err, http.StatusOK); err != nil {
		return err
	}
	fmt.Printf("test clock    advanced to %s\n", adv.JSON200.FrozenTime.Format(time.RFC3339))

	list, err := customer.ListInvoicesWithResponse(ctx, &api.ListInvoicesParams{SubscriptionId: &sub})
	if err := expect("list the invoices", list, list.Body, err, http.StatusOK); err != nil {
		return err
	}
	if len(list.JSON200.Items) != 2 {
		return fmt.Errorf("list the invoices: %d after a month, want the first and its renewal: %s", len(list.JSON200.Items), list.Body)
	}
	for _, item := range list.JSON200.Items {
		inv, err := item.Get()
		if err != nil {
			return fmt.Errorf("list the invoices: %w", err)
		}
		fmt.Printf("invoice       %s..%s total %d %s: %s\n", inv.BillingPeriod.Start, inv.BillingPeriod.End, inv.Total, inv.Currency, inv.Status)
	}
	return nil
}
