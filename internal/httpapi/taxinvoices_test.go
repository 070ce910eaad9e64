package httpapi_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
	"github.com/provider/coreapi/internal/einvoice"
)

const invoicePath = "/v1/taxauth/invoices/generate/simplified"

// invoiceBody is the document's example request for organization orgID, with fields set to
// raw JSON (or removed when raw is empty) at the given top-level or dotted paths.
func invoiceBody(t testing.TB, orgID string, changes map[string]string) string {
	t.Helper()
	body := `{
	  "organization_id": "` + orgID + `", "egs_unit_id": null, "taxpayer_profile_id": null,
	  "tax_calculation_mode": "service_calculated", "requested_invoice_type": "simplified_tax_invoice",
	  "seller": {"legal_name": "Nakhla Technology Company", "vat_number": "310123456700003", "commercial_registration": "1010123456",
	    "address": {"street_name": "King Fahd Road", "building_number": "2929", "additional_number": "8228", "district": "Al Olaya",
	      "city": "Riyadh", "postal_code": "12214", "country_code": "SA"},
	    "branch": "Riyadh HQ", "additional_identifiers": [{"scheme": "CRN", "value": "1010123456"}]},
	  "buyer": {"legal_name": null, "vat_number": null, "commercial_registration": null, "address": null, "additional_identifiers": [], "buyer_type": "individual"},
	  "supply": {"supply_date": "2025-03-01", "end_date": null, "purchase_order_reference": null, "contract_reference": null,
	    "delivery_reference": null, "payment_terms": null, "payment_method": "10"},
	  "line_items": [{"line_id": "1", "name_ar": "قهوة عربية", "name_en": "Arabic coffee", "description": "Arabic coffee, 250 g",
	    "quantity": 2, "unit_code": "PCE", "unit_price": 4500, "discounts": [{"amount": 500, "reason": "Loyalty discount", "reason_code": "95"}],
	    "charges": [], "tax_category": "S", "tax_rate": 15, "tax_exemption_reason": null}],
	  "notes": {"en": "Thank you for your visit."}
	}`
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	// In path order, so a whole object is replaced before a change inside it.
	paths := make([]string, 0, len(changes))
	for path := range changes {
		paths = append(paths, path)
	}
	slices.Sort(paths)
	for _, path := range paths {
		raw := changes[path]
		parts := strings.Split(path, ".")
		parent := m
		for _, p := range parts[:len(parts)-1] {
			parent = parent[p].(map[string]any)
		}
		last := parts[len(parts)-1]
		if raw == "" {
			delete(parent, last)
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		parent[last] = v
	}
	b, _ := json.Marshal(m)
	return string(b)
}

type invoiceResult struct {
	Invoice struct {
		ID             string `json:"id"`
		OrganizationID string `json:"organization_id"`
		EGSUnitID      string `json:"egs_unit_id"`
		Status         string `json:"status"`
		Identity       struct {
			InvoiceType string `json:"invoice_type"`
			Number      string `json:"number"`
			UUID        string `json:"uuid"`
			ICV         int64  `json:"icv"`
			PIH         string `json:"pih"`
			InvoiceHash string `json:"invoice_hash"`
		} `json:"identity"`
		Totals struct {
			LineExtension int64 `json:"line_extension_amount"`
			VAT           int64 `json:"vat_amount"`
			Payable       int64 `json:"payable_amount"`
		} `json:"totals"`
	} `json:"invoice"`
	Classification struct {
		SelectedType string `json:"selected_type"`
	} `json:"classification"`
	Validation struct {
		Internal struct {
			Valid  bool             `json:"valid"`
			Issues []einvoice.Issue `json:"issues"`
		} `json:"internal_validation"`
	} `json:"validation"`
	TaxDiscrepancies []einvoice.Discrepancy `json:"tax_discrepancies"`
	XML              struct {
		Content       string             `json:"content"`
		MappingReport []einvoice.Mapping `json:"mapping_report"`
	} `json:"xml"`
	QR struct {
		Payload string `json:"payload"`
	} `json:"qr"`
	Sandbox             bool            `json:"sandbox"`
	ReportedToAuthority bool            `json:"reported_to_authority"`
	Request             json.RawMessage `json:"request"`
}

func decodeInvoice(t testing.TB, resp *apitest.Response) invoiceResult {
	t.Helper()
	var r invoiceResult
	if err := json.Unmarshal(resp.Body, &r); err != nil {
		t.Fatalf("%v: %s", err, resp.Body)
	}
	return r
}

func generateInvoice(t testing.TB, env *apitest.Env, token, body string) invoiceResult {
	t.Helper()
	return generateAt(t, env, invoicePath, token, body)
}

func TestGenerateSimplifiedInvoice(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T) (*apitest.Env, string, string) {
		t.Helper()
		env := apitest.New(t)
		id := createOrganization(t, env, minimalOrganization)["id"].(string)
		return env, id, "dev:org:" + id
	}

	t.Run("ExampleRequest", func(t *testing.T) {
		t.Parallel()
		env, org, token := setup(t)
		r := generateInvoice(t, env, token, invoiceBody(t, org, nil))
		if r.Invoice.Status != "GENERATED" || r.Invoice.Identity.InvoiceType != "simplified_tax_invoice" ||
			r.Classification.SelectedType != "simplified_tax_invoice" || !r.Sandbox || r.ReportedToAuthority {
			t.Errorf("result: %+v", r)
		}
		if r.Invoice.Identity.ICV != 1 || r.Invoice.Identity.PIH != einvoice.FirstPIH || r.Invoice.Identity.Number != "SINV-000001" ||
			r.Invoice.EGSUnitID != einvoice.DefaultEGSUnit || r.Invoice.OrganizationID != org {
			t.Errorf("identity: %+v", r.Invoice)
		}
		if r.Invoice.Totals.LineExtension != 8500 || r.Invoice.Totals.VAT != 1275 || r.Invoice.Totals.Payable != 9775 {
			t.Errorf("totals: %+v", r.Invoice.Totals)
		}
		if !r.Validation.Internal.Valid || len(r.Validation.Internal.Issues) != 1 || r.Validation.Internal.Issues[0].Code != "SBX-NOTE-01" {
			t.Errorf("validation: %+v", r.Validation)
		}
		if !strings.Contains(r.XML.Content, "<cbc:InvoiceTypeCode name=\"0200000\">388</cbc:InvoiceTypeCode>") || len(r.XML.MappingReport) == 0 {
			t.Errorf("xml: %.300s", r.XML.Content)
		}
		tags, err := einvoice.DecodeQR(r.QR.Payload)
		if err != nil || string(tags[1]) != "Nakhla Technology Company" || string(tags[4]) != "97.75" || string(tags[5]) != "12.75" ||
			string(tags[6]) != r.Invoice.Identity.InvoiceHash {
			t.Errorf("qr tags: %v, %v", tags, err)
		}
		if n := env.Count("SELECT count(*) FROM usage_events WHERE organization_id = $1 AND product = 'einvoice'", org); n != 1 {
			t.Errorf("%d usage events, want 1", n)
		}
		if n := env.Count("SELECT count(*) FROM audit_events WHERE action = 'tax_invoice.generated' AND resource_id = $1", r.Invoice.ID); n != 1 {
			t.Errorf("%d audit events, want 1", n)
		}

		get := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/taxauth/invoices/" + r.Invoice.ID, Token: token})
		if get.Status != http.StatusOK {
			t.Fatalf("get: %d %s", get.Status, get.Body)
		}
		g := decodeInvoice(t, get)
		if g.Invoice.Identity != r.Invoice.Identity || g.XML.Content != r.XML.Content || g.QR != r.QR {
			t.Error("the stored invoice differs from the generated one")
		}
		var req map[string]any
		if err := json.Unmarshal(g.Request, &req); err != nil || req["organization_id"] != org || req["egs_unit_id"] != nil {
			t.Errorf("request read back: %s", g.Request)
		}
		if op := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/taxauth/invoices/" + r.Invoice.ID, Token: apitest.OperatorToken}); op.Status != http.StatusOK {
			t.Errorf("operator get: %d", op.Status)
		}
	})

	t.Run("BusinessRuleWarningsAreIssues", func(t *testing.T) {
		t.Parallel()
		env, org, token := setup(t)
		r := generateInvoice(t, env, token, invoiceBody(t, org, map[string]string{
			"line_items":                     `[{"line_id":"1","name_en":"Export","quantity":1,"unit_code":"PCE","unit_price":100,"tax_category":"Z","tax_rate":0}]`,
			"tax_calculation_mode":           `"client_supplied"`,
			"supplied_totals":                `{"vat_amount": 5}`,
			"seller.address.building_number": `"29"`,
			"buyer.vat_number":               `"300000000000003"`,
			"buyer.buyer_type":               `"business"`,
			"supply.end_date":                `"2025-02-01"`,
		}))
		if !r.Validation.Internal.Valid {
			t.Error("warnings made the invoice invalid")
		}
		codes := map[string]string{}
		for _, is := range r.Validation.Internal.Issues {
			codes[is.Code] = is.Severity + " " + is.Path
		}
		for code, want := range map[string]string{
			"BR-KSA-69":   "warning /line_items/0/tax_exemption_reason",
			"BR-KSA-37":   "warning /seller/address/building_number",
			"BR-KSA-36":   "warning /supply/end_date",
			"SBX-TYPE-01": "warning /buyer/buyer_type",
			"SBX-CALC-01": "warning /tax_calculation_mode",
		} {
			if codes[code] != want {
				t.Errorf("%s = %q, want %q (issues %+v)", code, codes[code], want, r.Validation.Internal.Issues)
			}
		}
		if len(r.TaxDiscrepancies) != 1 || r.TaxDiscrepancies[0].Path != "/supplied_totals/vat_amount" || r.TaxDiscrepancies[0].Computed != 0 {
			t.Errorf("discrepancies: %+v", r.TaxDiscrepancies)
		}
	})

	t.Run("EveryCategory", func(t *testing.T) {
		t.Parallel()
		env, org, token := setup(t)
		r := generateInvoice(t, env, token, invoiceBody(t, org, map[string]string{"line_items": `[
			{"line_id":"s","name_en":"Coffee","quantity":3,"unit_code":"PCE","unit_price":1001,"tax_category":"S","tax_rate":15},
			{"line_id":"z","name_en":"Medicine","quantity":1,"unit_code":"EA","unit_price":2500,"tax_category":"Z","tax_rate":0,"tax_exemption_reason":"VATEX-SA-35"},
			{"line_id":"e","name_en":"Fee","quantity":1,"unit_code":"EA","unit_price":700,"tax_category":"E","tax_rate":0,"tax_exemption_reason":"VATEX-SA-29"},
			{"line_id":"o","name_en":"Levy","quantity":0.5,"unit_code":"EA","unit_price":999,"tax_category":"O","tax_rate":0,"tax_exemption_reason":"VATEX-SA-OOS"}]`}))
		// 3003 + 2500 + 700 + 500 (499.5 rounds up); VAT 3003 x 15 % = 450.45 -> 450
		if r.Invoice.Totals.LineExtension != 6703 || r.Invoice.Totals.VAT != 450 || r.Invoice.Totals.Payable != 7153 || !r.Validation.Internal.Valid {
			t.Errorf("totals %+v, validation %+v", r.Invoice.Totals, r.Validation)
		}
	})

	t.Run("ChainAfterConcurrentGenerations", func(t *testing.T) {
		t.Parallel()
		env, org, token := setup(t)
		// A dozen concurrent generations wait for one another on the chain's lock; more only
		// made the last wait past the request's database timeout on a loaded machine.
		const n = 12
		var wg sync.WaitGroup
		results := make([]invoiceResult, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = generateInvoice(t, env, token, invoiceBody(t, org, nil))
			}()
		}
		wg.Wait()
		other := generateInvoice(t, env, token, invoiceBody(t, org, map[string]string{"egs_unit_id": `"till-2"`}))
		if other.Invoice.Identity.ICV != 1 || other.Invoice.Identity.PIH != einvoice.FirstPIH {
			t.Errorf("another EGS unit starts its own chain: %+v", other.Invoice.Identity)
		}
		byICV := map[int64]invoiceResult{}
		for _, r := range results {
			if _, dup := byICV[r.Invoice.Identity.ICV]; dup {
				t.Fatalf("ICV %d given twice", r.Invoice.Identity.ICV)
			}
			byICV[r.Invoice.Identity.ICV] = r
		}
		prev := einvoice.FirstPIH
		for icv := int64(1); icv <= n; icv++ {
			r, ok := byICV[icv]
			if !ok {
				t.Fatalf("gap: no ICV %d", icv)
			}
			if r.Invoice.Identity.PIH != prev {
				t.Fatalf("ICV %d: PIH %s, want the previous hash %s", icv, r.Invoice.Identity.PIH, prev)
			}
			if !strings.Contains(r.XML.Content, "<cbc:UUID>"+fmt.Sprint(icv)+"</cbc:UUID>") || !strings.Contains(r.XML.Content, prev) {
				t.Fatalf("ICV %d: the XML does not carry its ICV and PIH", icv)
			}
			sum := sha256.Sum256(nil)
			if r.Invoice.Identity.InvoiceHash == base64.StdEncoding.EncodeToString(sum[:]) {
				t.Fatal("empty hash")
			}
			prev = r.Invoice.Identity.InvoiceHash
		}
		if got := env.Count("SELECT count(*) FROM usage_events WHERE organization_id = $1", org); got != n+1 {
			t.Errorf("%d usage events, want %d", got, n+1)
		}
		var last int64
		var lastHash string
		if err := env.Pool.QueryRow(context.Background(), "SELECT last_icv, last_invoice_hash FROM einvoice_counters WHERE organization_id = $1 AND egs_unit_id = $2",
			org, einvoice.DefaultEGSUnit).Scan(&last, &lastHash); err != nil || last != n || lastHash != prev {
			t.Errorf("counter = %d %s, %v", last, lastHash, err)
		}
	})

	t.Run("ErrOtherOrganization", func(t *testing.T) {
		t.Parallel()
		env, org, _ := setup(t)
		other := createOrganization(t, env, minimalOrganization)["id"].(string)
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: invoicePath, Token: "dev:org:" + other, Body: invoiceBody(t, org, nil)})
		assertProblem(t, "other organization", resp, http.StatusForbidden, "forbidden")
		resp = env.Do(apitest.Request{Method: http.MethodPost, Path: invoicePath, Token: "dev:org:" + other, Body: invoiceBody(t, org, map[string]string{"organization_id": `"not-a-uuid"`})})
		assertProblem(t, "not a uuid", resp, http.StatusForbidden, "forbidden")
		resp = env.Do(apitest.Request{Method: http.MethodPost, Path: invoicePath, Token: apitest.OperatorToken, Body: invoiceBody(t, uuid.NewString(), nil)})
		assertProblem(t, "operator, unknown organization", resp, http.StatusNotFound, "not_found")
		if n := env.Count("SELECT count(*) FROM tax_invoices") + env.Count("SELECT count(*) FROM usage_events"); n != 0 {
			t.Errorf("refused requests stored %d rows", n)
		}
		op := generateInvoice(t, env, apitest.OperatorToken, invoiceBody(t, org, nil))
		resp = env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/taxauth/invoices/" + op.Invoice.ID, Token: "dev:org:" + other})
		assertProblem(t, "other tenant's invoice", resp, http.StatusNotFound, "not_found")
		resp = env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/taxauth/invoices/" + uuid.NewString(), Token: "dev:org:" + org})
		assertProblem(t, "unknown invoice", resp, http.StatusNotFound, "not_found")
	})

	t.Run("ErrStructural", func(t *testing.T) {
		t.Parallel()
		env, org, token := setup(t)
		for name, changes := range map[string]map[string]string{
			"NoLines":        {"line_items": `[]`},
			"NoSeller":       {"seller": ""},
			"BadCategory":    {"line_items": `[{"line_id":"1","name_en":"x","quantity":1,"unit_code":"PCE","unit_price":1,"tax_category":"X","tax_rate":15}]`},
			"ZeroQuantity":   {"line_items": `[{"line_id":"1","name_en":"x","quantity":0,"unit_code":"PCE","unit_price":1,"tax_category":"S","tax_rate":15}]`},
			"FractionPrice":  {"line_items": `[{"line_id":"1","name_en":"x","quantity":1,"unit_code":"PCE","unit_price":1.5,"tax_category":"S","tax_rate":15}]`},
			"BadUnit":        {"line_items": `[{"line_id":"1","name_en":"x","quantity":1,"unit_code":"ZZZ","unit_price":1,"tax_category":"S","tax_rate":15}]`},
			"BadMode":        {"tax_calculation_mode": `"guess"`},
			"BadType":        {"requested_invoice_type": `"receipt"`},
			"BadPayment":     {"supply.payment_method": `"99"`},
			"BadDate":        {"supply.supply_date": `"01/03/2025"`},
			"UnknownField":   {"discount": `1`},
			"BadBuyerType":   {"buyer.buyer_type": `"alien"`},
			"BadScheme":      {"seller.additional_identifiers": `[{"scheme":"TIN","value":"1"}]`},
			"NegativeAmount": {"line_items": `[{"line_id":"1","name_en":"x","quantity":1,"unit_code":"PCE","unit_price":-1,"tax_category":"S","tax_rate":15}]`},
		} {
			resp := env.Do(apitest.Request{Method: http.MethodPost, Path: invoicePath, Token: token, Body: invoiceBody(t, org, changes)})
			assertProblem(t, name, resp, http.StatusBadRequest, "validation_failed")
		}
		if n := env.Count("SELECT count(*) FROM tax_invoices"); n != 0 {
			t.Errorf("bad requests stored %d invoices", n)
		}
	})
}

// problemErrors decodes a problem's field errors.
func problemErrors(t testing.TB, resp *apitest.Response) (detail string, errs []map[string]string) {
	t.Helper()
	var p struct {
		Detail string              `json:"detail"`
		Errors []map[string]string `json:"errors"`
	}
	if err := json.Unmarshal(resp.Body, &p); err != nil {
		t.Fatalf("%v: %s", err, resp.Body)
	}
	return p.Detail, p.Errors
}

// invoiceChainState is the stored state of the chain of one organization's EGS unit: how many
// invoices it holds and its counter row.
func invoiceChainState(t testing.TB, env *apitest.Env, org string) (invoices int, lastICV int64, lastHash string) {
	t.Helper()
	invoices = env.Count("SELECT count(*) FROM tax_invoices WHERE organization_id = $1", org)
	if err := env.Pool.QueryRow(context.Background(), "SELECT last_icv, last_invoice_hash FROM einvoice_counters WHERE organization_id = $1 AND egs_unit_id = $2",
		org, einvoice.DefaultEGSUnit).Scan(&lastICV, &lastHash); err != nil {
		t.Fatalf("counter: %v", err)
	}
	return invoices, lastICV, lastHash
}

// Issue 21, item 8: an invoice with an error-severity issue is refused with 422 listing the
// issues; it uses no counter value, links no hash and stores nothing.
func TestGenerateSimplifiedInvoiceInvalidIsNotIssued(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org := createOrganization(t, env, minimalOrganization)["id"].(string)
	token := "dev:org:" + org
	first := generateInvoice(t, env, token, invoiceBody(t, org, nil))

	for name, tc := range map[string]struct {
		changes map[string]string
		pointer string
		code    string
	}{
		// Discount 10000 on a gross of 9000: the line's net (and the payable amount) below zero.
		"DiscountBeyondLine": {map[string]string{"line_items": `[{"line_id":"1","name_en":"x","quantity":2,"unit_code":"PCE","unit_price":4500,
			"discounts":[{"amount":10000,"reason":"Too generous"}],"tax_category":"S","tax_rate":15}]`}, "/line_items/0", "SBX-LINE-02"},
		"SellerVATNumber": {map[string]string{"seller.vat_number": `"123"`}, "/seller/vat_number", "BR-KSA-40"},
	} {
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: invoicePath, Token: token, Body: invoiceBody(t, org, tc.changes)})
		assertProblem(t, name, resp, http.StatusUnprocessableEntity, "unprocessable")
		detail, errs := problemErrors(t, resp)
		found := false
		for _, e := range errs {
			if e["location"] != "body" || e["message"] == "" {
				t.Errorf("%s: field error %v", name, e)
			}
			found = found || (e["pointer"] == tc.pointer && e["code"] == tc.code)
		}
		if !found || !strings.Contains(detail, "not issued") {
			t.Errorf("%s: want %s at %s in the problem: %s", name, tc.code, tc.pointer, resp.Body)
		}
		if n, icv, hash := invoiceChainState(t, env, org); n != 1 || icv != 1 || hash != first.Invoice.Identity.InvoiceHash {
			t.Errorf("%s: after the refusal %d invoices, counter %d %s; want 1, 1 and the first invoice's hash", name, n, icv, hash)
		}
	}

	next := generateInvoice(t, env, token, invoiceBody(t, org, nil))
	if next.Invoice.Identity.ICV != 2 || next.Invoice.Identity.PIH != first.Invoice.Identity.InvoiceHash || !next.Validation.Internal.Valid {
		t.Errorf("the next valid invoice: ICV %d PIH %s, want 2 and %s", next.Invoice.Identity.ICV, next.Invoice.Identity.PIH, first.Invoice.Identity.InvoiceHash)
	}
	if n, icv, hash := invoiceChainState(t, env, org); n != 2 || icv != 2 || hash != next.Invoice.Identity.InvoiceHash {
		t.Errorf("%d invoices, counter %d %s; want 2, 2 and the second invoice's hash", n, icv, hash)
	}
	if n := env.Count("SELECT count(*) FROM usage_events WHERE organization_id = $1", org); n != 2 {
		t.Errorf("%d usage events, want 2 (refused invoices count nothing)", n)
	}
	if n := env.Count("SELECT count(*) FROM audit_events WHERE action = 'tax_invoice.generated'"); n != 2 {
		t.Errorf("%d audit events, want 2", n)
	}
	if n := env.Count("SELECT count(*) FROM tax_invoices WHERE NOT valid"); n != 0 {
		t.Errorf("%d invalid invoices stored", n)
	}
}

// Issue 21, item 8: quantity, unit_price and every amount are bounded in the document, so a
// computed amount either fits or is refused; nothing answers 500 and nothing is stored.
func TestGenerateSimplifiedInvoiceBounds(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org := createOrganization(t, env, minimalOrganization)["id"].(string)
	token := "dev:org:" + org
	line := func(fields string) map[string]string {
		return map[string]string{"line_items": `[{"line_id":"1","name_en":"x","unit_code":"PCE","tax_category":"S","tax_rate":15,` + fields + `}]`}
	}
	discounts := func(n int, amount string) string {
		items := make([]string, n)
		for i := range items {
			items[i] = `{"amount":` + amount + `,"reason":"r"}`
		}
		return `"discounts":[` + strings.Join(items, ",") + `]`
	}
	for name, tc := range map[string]struct {
		changes map[string]string
		status  int
		code    string
	}{
		"QuantityAboveMaximum":  {line(`"quantity":1000000.5,"unit_price":1`), http.StatusBadRequest, "validation_failed"},
		"QuantityHuge":          {line(`"quantity":1e308,"unit_price":1`), http.StatusBadRequest, "validation_failed"},
		"UnitPriceAboveMaximum": {line(`"quantity":1,"unit_price":1000000001`), http.StatusBadRequest, "validation_failed"},
		"UnitPriceBeyondInt64":  {line(`"quantity":1,"unit_price":100000000000000000000`), http.StatusBadRequest, "validation_failed"},
		"UnitPriceInt64Limit":   {line(`"quantity":1,"unit_price":9223372036854775807`), http.StatusBadRequest, "validation_failed"},
		"DiscountAboveMaximum":  {line(`"quantity":1,"unit_price":1,` + discounts(1, "1000000000000001")), http.StatusBadRequest, "validation_failed"},
		"TooManyDiscounts":      {line(`"quantity":1,"unit_price":1000,` + discounts(101, "1")), http.StatusBadRequest, "validation_failed"},
		// At the bounds the gross is 10^15 minor units; with 15 % VAT the total exceeds the range.
		"MaximaWithVAT": {line(`"quantity":1000000,"unit_price":1000000000`), http.StatusUnprocessableEntity, "unprocessable"},
		// A thousand lines at the bounds: the document total exceeds the range.
		"MaximaSummed": {map[string]string{"line_items": `[` + strings.TrimSuffix(strings.Repeat(
			`{"line_id":"1","name_en":"x","quantity":1000000,"unit_code":"PCE","unit_price":1000000000,"tax_category":"Z","tax_rate":0},`, 1000), ",") + `]`},
			http.StatusUnprocessableEntity, "unprocessable"},
		// Charges at their bound summed on one line exceed the range.
		"ChargesSummed": {line(`"quantity":1,"unit_price":1,"charges":[` + strings.TrimSuffix(strings.Repeat(
			`{"amount":1000000000000000,"reason":"r","reason_code":"FC"},`, 100), ",") + `]`), http.StatusUnprocessableEntity, "unprocessable"},
	} {
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: invoicePath, Token: token, Body: invoiceBody(t, org, tc.changes)})
		assertProblem(t, name, resp, tc.status, tc.code)
	}
	if n := env.Count("SELECT count(*) FROM tax_invoices") + env.Count("SELECT count(*) FROM einvoice_counters") +
		env.Count("SELECT count(*) FROM usage_events"); n != 0 {
		t.Errorf("refused requests stored %d rows", n)
	}

	// At the bounds without VAT every amount is exactly 10^15 minor units, and it is issued.
	r := generateInvoice(t, env, token, invoiceBody(t, org, map[string]string{"line_items": `[{"line_id":"1","name_en":"x","quantity":1000000,
		"unit_code":"PCE","unit_price":1000000000,"tax_category":"Z","tax_rate":0,"tax_exemption_reason":"VATEX-SA-35"}]`}))
	if r.Invoice.Totals.Payable != einvoice.MaxAmount || r.Invoice.Identity.ICV != 1 {
		t.Errorf("at the bounds: payable %d ICV %d", r.Invoice.Totals.Payable, r.Invoice.Identity.ICV)
	}
	var payable int64
	if err := env.Pool.QueryRow(context.Background(), "SELECT payable_amount FROM tax_invoices WHERE id = $1", r.Invoice.ID).Scan(&payable); err != nil ||
		payable != einvoice.MaxAmount {
		t.Errorf("stored payable %d, %v", payable, err)
	}
}

// einvoiceCredential creates a connected business of platform p and returns its id and an
// einvoice credential of it.
func einvoiceCredential(t testing.TB, p *platformFixture, ref string) (business, key string) {
	t.Helper()
	cb := p.create(t, businessBody(ref, nil))
	business = cb["id"].(string)
	resp := p.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/connected-businesses/" + business + "/credentials", Token: p.token,
		Body: `{"product":"einvoice"}`})
	if resp.Status != http.StatusCreated {
		t.Fatalf("credential: %d %s", resp.Status, resp.Body)
	}
	return business, resp.JSON(t)["full_key"].(string)
}

// storedSeller is the connected business an invoice is stored with ("" for the
// organization's own).
func storedSeller(t testing.TB, env *apitest.Env, invoiceID string) string {
	t.Helper()
	var business *string
	if err := env.Pool.QueryRow(context.Background(), "SELECT connected_business_id::text FROM tax_invoices WHERE id = $1", invoiceID).Scan(&business); err != nil {
		t.Fatalf("invoice %s: %v", invoiceID, err)
	}
	if business == nil {
		return ""
	}
	return *business
}

// Issue 21, item 2: a connected business is its own seller: its invoices record it, have
// their own chain per EGS unit, and are not readable by another business.
func TestGenerateSimplifiedInvoiceConnectedBusiness(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T) (*apitest.Env, *platformFixture) {
		t.Helper()
		env := apitest.New(t)
		return env, newPlatform(t, env)
	}

	t.Run("OwnChainPerBusiness", func(t *testing.T) {
		t.Parallel()
		env, p := setup(t)
		b1, key1 := einvoiceCredential(t, p, "b-1")
		b2, key2 := einvoiceCredential(t, p, "b-2")
		body := invoiceBody(t, p.orgID, nil)
		platform1 := generateInvoice(t, env, p.token, body)
		steps := []struct {
			name, token, seller string
			egs                 string
			icv                 int64
			pih                 string
		}{
			{"b2", key2, b2, "", 1, einvoice.FirstPIH},
			{"platform", p.token, "", "", 2, platform1.Invoice.Identity.InvoiceHash},
			{"b1", key1, b1, "", 1, einvoice.FirstPIH},
			{"b2 again", key2, b2, "", 2, ""}, // PIH: b2's first hash
			{"b1 other unit", key1, b1, "till-2", 1, einvoice.FirstPIH},
		}
		var b2First string
		for _, st := range steps {
			changes := map[string]string{}
			if st.egs != "" {
				changes["egs_unit_id"] = `"` + st.egs + `"`
			}
			r := generateInvoice(t, env, st.token, invoiceBody(t, p.orgID, changes))
			pih := st.pih
			if st.name == "b2 again" {
				pih = b2First
			}
			if r.Invoice.Identity.ICV != st.icv || r.Invoice.Identity.PIH != pih || r.Invoice.OrganizationID != p.orgID {
				t.Errorf("%s: ICV %d PIH %s organization %s; want %d %s %s", st.name, r.Invoice.Identity.ICV, r.Invoice.Identity.PIH,
					r.Invoice.OrganizationID, st.icv, pih, p.orgID)
			}
			if st.name == "b2" {
				b2First = r.Invoice.Identity.InvoiceHash
			}
			if got := storedSeller(t, env, r.Invoice.ID); got != st.seller {
				t.Errorf("%s: stored with business %q, want %q", st.name, got, st.seller)
			}
		}
		counters := map[string]int64{}
		rows, err := env.Pool.Query(context.Background(), "SELECT seller_id::text, egs_unit_id, last_icv FROM einvoice_counters WHERE organization_id = $1", p.orgID)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var seller, egs string
			var last int64
			if err := rows.Scan(&seller, &egs, &last); err != nil {
				t.Fatal(err)
			}
			counters[seller+" "+egs] = last
		}
		want := map[string]int64{
			p.orgID + " " + einvoice.DefaultEGSUnit: 2, b1 + " " + einvoice.DefaultEGSUnit: 1, b1 + " till-2": 1, b2 + " " + einvoice.DefaultEGSUnit: 2,
		}
		if fmt.Sprint(counters) != fmt.Sprint(want) {
			t.Errorf("counters %v, want %v", counters, want)
		}
	})

	t.Run("ErrOtherBusinessReads", func(t *testing.T) {
		t.Parallel()
		env, p := setup(t)
		_, key1 := einvoiceCredential(t, p, "b-1")
		_, key2 := einvoiceCredential(t, p, "b-2")
		mine := generateInvoice(t, env, key1, invoiceBody(t, p.orgID, nil))
		platform := generateInvoice(t, env, p.token, invoiceBody(t, p.orgID, nil))
		get := func(token, id string) *apitest.Response {
			return env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/taxauth/invoices/" + id, Token: token})
		}
		for name, token := range map[string]string{"OwnBusiness": key1, "Platform": p.token, "Operator": apitest.OperatorToken} {
			if r := get(token, mine.Invoice.ID); r.Status != http.StatusOK || decodeInvoice(t, r).Invoice.Identity != mine.Invoice.Identity {
				t.Errorf("%s reads the business's invoice: %d %s", name, r.Status, r.Body)
			}
		}
		unknown := uuid.NewString()
		wantDetail, _ := problemErrors(t, get(key2, unknown))
		for name, id := range map[string]string{"OtherBusiness": mine.Invoice.ID, "PlatformOwn": platform.Invoice.ID} {
			resp := get(key2, id)
			assertProblem(t, name, resp, http.StatusNotFound, "not_found")
			if detail, _ := problemErrors(t, resp); strings.ReplaceAll(detail, id, unknown) != wantDetail {
				t.Errorf("%s: detail %q differs from an unknown id's %q", name, detail, wantDetail)
			}
		}
	})

	t.Run("ChainsExactUnderConcurrency", func(t *testing.T) {
		t.Parallel()
		env, p := setup(t)
		b1, key1 := einvoiceCredential(t, p, "b-1")
		_, key2 := einvoiceCredential(t, p, "b-2")
		const n = 15
		var wg sync.WaitGroup
		for _, token := range []string{p.token, key1, key2} {
			for range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					generateInvoice(t, env, token, invoiceBody(t, p.orgID, nil))
				}()
			}
		}
		wg.Wait()
		// Each seller's chain, read from the database: ICV 1..n without a gap, each PIH the
		// previous invoice's hash.
		rows, err := env.Pool.Query(context.Background(), `SELECT coalesce(connected_business_id::text, ''), icv, pih, invoice_hash
			FROM tax_invoices WHERE organization_id = $1 ORDER BY 1, icv`, p.orgID)
		if err != nil {
			t.Fatal(err)
		}
		prev, next, count := map[string]string{}, map[string]int64{}, map[string]int{}
		for rows.Next() {
			var seller, pih, hash string
			var icv int64
			if err := rows.Scan(&seller, &icv, &pih, &hash); err != nil {
				t.Fatal(err)
			}
			if prev[seller] == "" {
				prev[seller] = einvoice.FirstPIH
			}
			next[seller]++
			if icv != next[seller] || pih != prev[seller] {
				t.Fatalf("seller %q: ICV %d PIH %s, want %d %s", seller, icv, pih, next[seller], prev[seller])
			}
			prev[seller] = hash
			count[seller]++
		}
		if len(count) != 3 || count[""] != n || count[b1] != n {
			t.Errorf("invoices per seller: %v", count)
		}
	})
}
