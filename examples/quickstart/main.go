// Command quickstart walks a new customer through the Provider Core API with the generated
// Go client (github.com/provider/coreapi/gen/api) and nothing else: as the operator it signs
// up an organization and creates its API key; as the organization it exchanges the key for an
// OAuth access token, subscribes to e-invoicing, selects a plan, generates a simplified tax
// invoice and resolves a short address.
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
			api.ScopeSubscriptionsWrite, api.ScopeInvoiceGenerate, api.ScopeAddressRead},
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
	scope := "organizations:read products:read subscriptions:read subscriptions:write invoice:generate address:read"
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

	// 4. Subscribe to e-invoicing on the free sandbox plan and wait for provisioning.
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

	// 5. Select a paid plan: the first period's invoice is issued.
	sel, err := customer.SelectSubscriptionPlanWithResponse(ctx, subID, nil, api.SelectSubscriptionPlanJSONRequestBody{PlanId: planGrowthMonthly})
	if err := expect("select a plan", sel, sel.Body, err, http.StatusOK); err != nil {
		return err
	}
	fmt.Printf("plan          %s selected: %s", sel.JSON200.Subscription.PlanId, sel.JSON200.Activation)
	if inv, err := sel.JSON200.Invoice.Get(); err == nil {
		fmt.Printf(", invoice %s total %d %s (VAT %d)", inv.Id, inv.Total, inv.Currency, inv.Tax)
	}
	fmt.Println()

	// 6. Generate a simplified tax invoice (synthetic sandbox; nothing is reported).
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

	// 7. Resolve a short address.
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
