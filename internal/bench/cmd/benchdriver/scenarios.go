package main

import (
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/google/uuid"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// scenario is one kind of traffic, sent identically to the API and to the floor.
type scenario struct {
	name  string
	write bool // the write targets apply rather than the read ones
	// workers overrides the connections of the saturation phase (growth bursts use more).
	workers uint64
	// requests returns the i-th request for base; it must be safe for concurrent use.
	request func(base string, i uint64) vegeta.Target
}

// targeter numbers the requests of one attack.
func (s scenario) targeter(base string) vegeta.Targeter {
	var n atomic.Uint64
	return func(t *vegeta.Target) error {
		*t = s.request(base, n.Add(1)-1)
		return nil
	}
}

const einvoiceProduct = "0193a000-0000-7000-8000-000000000001"

func scenarios(fix *fixtures) []scenario {
	orgs := fix.orgs
	// key picks organization i's key for request i; over all keys of all organizations.
	pick := func(i uint64) (org seededOrg, key string) {
		org = orgs[i%uint64(len(orgs))]
		return org, org.keys[(i/uint64(len(orgs)))%uint64(len(org.keys))]
	}
	auth := func(key string) http.Header {
		return http.Header{"Authorization": {"Bearer " + key}}
	}
	jsonAuth := func(key string) http.Header {
		h := auth(key)
		h.Set("Content-Type", "application/json")
		return h
	}
	getOrganization := func(base string, i uint64) vegeta.Target {
		org, key := pick(i)
		return vegeta.Target{Method: "GET", URL: base + "/v1/organizations/" + org.id, Header: auth(key)}
	}
	catalogue := func(base string, i uint64) vegeta.Target {
		_, key := pick(i)
		if i%2 == 0 {
			return vegeta.Target{Method: "GET", URL: base + "/v1/products", Header: auth(key)}
		}
		return vegeta.Target{Method: "GET", URL: base + "/v1/plans?product_id=" + einvoiceProduct, Header: auth(key)}
	}
	supportCase := func(base string, i uint64) vegeta.Target {
		org, key := pick(i)
		h := jsonAuth(key)
		h.Set("Idempotency-Key", uuid.NewString())
		body := fmt.Sprintf(`{"organization_id":%q,"subject":"Invoices fail %d","description":"Every invoice reports BR-KSA-40.",`+
			`"severity":"medium","category":"technical","product_id":"einvoice","diagnostics":{"sdk":"go","retries":3}}`, org.id, i)
		return vegeta.Target{Method: "POST", URL: base + "/v1/support-cases", Header: h, Body: []byte(body)}
	}
	growthEvent := func(base string, i uint64) vegeta.Target {
		org, key := pick(i)
		body := fmt.Sprintf(`{"event_name":"page_view","organization_id":%q,"anonymous_id":"visitor-%06d","traffic_type":"load_test",`+
			`"product":"einvoice","source":"bench","page_path":"/pricing"}`, org.id, i%100_000)
		return vegeta.Target{Method: "POST", URL: base + "/v1/growth/events", Header: jsonAuth(key), Body: []byte(body)}
	}
	invoiceOne := func(base string, i uint64) vegeta.Target {
		org := orgs[0]
		key := org.keys[i%uint64(len(org.keys))]
		return vegeta.Target{Method: "POST", URL: base + "/v1/taxauth/invoices/generate/simplified", Header: jsonAuth(key), Body: []byte(invoiceBody(org.id))}
	}
	invoiceMany := func(base string, i uint64) vegeta.Target {
		org, key := pick(i)
		return vegeta.Target{Method: "POST", URL: base + "/v1/taxauth/invoices/generate/simplified", Header: jsonAuth(key), Body: []byte(invoiceBody(org.id))}
	}
	// The mixed workload: mostly reads, as an API's traffic is (per 20 requests).
	mix := []func(string, uint64) vegeta.Target{
		getOrganization, getOrganization, getOrganization, getOrganization, getOrganization, getOrganization,
		catalogue, catalogue, catalogue, catalogue,
		growthEvent, growthEvent, growthEvent, growthEvent,
		supportCase, supportCase, supportCase,
		invoiceMany, invoiceMany, invoiceOne,
	}
	mixed := func(base string, i uint64) vegeta.Target {
		return mix[i%uint64(len(mix))](base, i/uint64(len(mix)))
	}
	return []scenario{
		{name: "get-organization", request: getOrganization},
		{name: "catalogue", request: catalogue},
		{name: "support-case", write: true, request: supportCase},
		{name: "growth-events", write: true, workers: 64, request: growthEvent},
		{name: "invoice-one-org", write: true, request: invoiceOne},
		{name: "invoice-many-orgs", write: true, request: invoiceMany},
		{name: "mixed", write: true, request: mixed},
	}
}
