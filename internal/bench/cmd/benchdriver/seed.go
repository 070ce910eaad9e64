package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// fixtures are what the seeding created through the API.
type fixtures struct {
	orgs []seededOrg
}

type seededOrg struct {
	id   string
	keys []string // full API keys with the scopes of every scenario
}

// benchScopes are the scopes the scenarios need.
var benchScopes = []string{"organizations:read", "products:read", "support:write", "growth-events:write", "invoice:generate"}

// keysPerOrg keeps every key under its rate limit (100/s: the standard policy, README) at the throughput
// of this machine; the first organization, the one of the single-organization invoices,
// gets more.
const keysPerOrg = 8

// seed creates n organizations with API keys as the operator, and one invoice each, which
// creates its sandbox stamping key (the floor only reads it).
func seed(ctx context.Context, base string, n int) (*fixtures, error) {
	fix := &fixtures{}
	for i := range n {
		var org struct {
			ID string `json:"id"`
		}
		body := fmt.Sprintf(`{"legal_name_ar":"شركة القياس %d","legal_name_en":"Bench Co %d","display_name":"Bench %d","organization_type":"standard_customer","country":"SA"}`, i, i, i)
		if err := call(ctx, base, "POST", "/v1/organizations", "dev:operator", body, http.StatusCreated, &org); err != nil {
			return nil, err
		}
		o := seededOrg{id: org.ID}
		keys := keysPerOrg
		if i == 0 {
			keys *= 4
		}
		for k := range keys {
			var key struct {
				FullKey string `json:"full_key"`
			}
			scopes, _ := json.Marshal(benchScopes)
			body := fmt.Sprintf(`{"organization_id":%q,"name":"bench-%d","environment":"sandbox","scopes":%s}`, org.ID, k, scopes)
			if err := call(ctx, base, "POST", "/v1/api-keys", "dev:operator", body, http.StatusCreated, &key); err != nil {
				return nil, err
			}
			o.keys = append(o.keys, key.FullKey)
		}
		if err := call(ctx, base, "POST", "/v1/taxauth/invoices/generate/simplified", o.keys[0], invoiceBody(org.ID), http.StatusCreated, nil); err != nil {
			return nil, err
		}
		fix.orgs = append(fix.orgs, o)
	}
	return fix, nil
}

func call(ctx context.Context, base, method, path, token, body string, want int, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, base+path, bytes.NewBufferString(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// invoiceBody is the README's simplified invoice for organization org.
func invoiceBody(org string) string {
	return `{"organization_id":"` + org + `","tax_calculation_mode":"service_calculated","requested_invoice_type":"simplified_tax_invoice",` +
		`"seller":{"legal_name":"Nakhla","vat_number":"310123456700003","commercial_registration":"1010123456",` +
		`"address":{"street_name":"King Fahd Road","building_number":"2929","district":"Al Olaya","city":"Riyadh","postal_code":"12214","country_code":"SA"}},` +
		`"line_items":[{"line_id":"1","name_en":"Coffee","quantity":2,"unit_code":"PCE","unit_price":4500,"tax_category":"S","tax_rate":15},` +
		`{"line_id":"2","name_en":"Croissant","quantity":3,"unit_code":"PCE","unit_price":1250,"tax_category":"S","tax_rate":15}]}`
}
