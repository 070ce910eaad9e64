package httpapi_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
)

const resolvePath = "/v1/address/resolve-short"

type shortAddressResult struct {
	Status        string         `json:"status"`
	ShortAddress  string         `json:"short_address"`
	Language      string         `json:"language"`
	Address       map[string]any `json:"address"`
	MissingFields []string       `json:"missing_fields"`
	Provenance    map[string]any `json:"provenance"`
}

func TestResolveShortAddress(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org := createOrganization(t, env, minimalOrganization)["id"].(string)
	token := "dev:org:" + org

	cases := []struct {
		name, code, lang, status, normalised string
		want                                 map[string]any
		missing                              []string
	}{
		{"Resolved", "RRMA1234", "en", "resolved", "RRMA1234",
			map[string]any{"building_number": "1234", "street": "Anas Ibn Malik Road", "city": "Riyadh", "region": "Riyadh Region", "postal_code": "13521"}, []string{}},
		{"ResolvedArabic", "RRMA1234", "ar", "resolved", "RRMA1234",
			map[string]any{"street": "طريق أنس بن مالك", "district": "الملقا", "city": "الرياض"}, []string{}},
		{"LowerCaseWithSpaces", "  rrrd2929 ", "en", "partial", "RRRD2929",
			map[string]any{"street": "King Fahd Road", "district": "Al Olaya", "postal_code": "12214", "additional_number": nil, "latitude": nil},
			[]string{"additional_number", "latitude", "longitude"}},
		{"PartialArabic", "nnaj4321", "ar", "partial", "NNAJ4321",
			map[string]any{"region": "منطقة نجران", "city": nil, "street": nil},
			[]string{"street", "district", "city", "postal_code", "additional_number", "latitude", "longitude"}},
		{"NotFound", "RZZZ2929", "en", "not_found", "RZZZ2929",
			map[string]any{"building_number": nil, "street": nil, "region": nil},
			[]string{"building_number", "street", "district", "city", "region", "postal_code", "additional_number", "latitude", "longitude"}},
	}
	for _, tc := range cases {
		body, _ := json.Marshal(map[string]string{"short_address": tc.code, "language": tc.lang})
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: resolvePath, Token: token, Body: string(body)})
		if resp.Status != http.StatusOK {
			t.Errorf("%s: status %d: %s", tc.name, resp.Status, resp.Body)
			continue
		}
		var r shortAddressResult
		if err := json.Unmarshal(resp.Body, &r); err != nil {
			t.Fatal(err)
		}
		if r.Status != tc.status || r.ShortAddress != tc.normalised || r.Language != tc.lang || !slices.Equal(r.MissingFields, tc.missing) {
			t.Errorf("%s: %s", tc.name, resp.Body)
		}
		for k, v := range tc.want {
			if got, ok := r.Address[k]; !ok || got != v {
				t.Errorf("%s: %s = %v, want %v", tc.name, k, got, v)
			}
		}
		if r.Provenance["source"] != "synthetic_sandbox_dataset" || r.Provenance["authoritative"] != false || r.Provenance["external_source_consulted"] != false {
			t.Errorf("%s: provenance %v", tc.name, r.Provenance)
		}
	}
	if n := env.Count("SELECT count(*) FROM usage_events WHERE organization_id = $1 AND product = 'address'", org); n != len(cases) {
		t.Errorf("%d address usage events, want %d", n, len(cases))
	}

	t.Run("ErrMalformed", func(t *testing.T) {
		for _, bad := range []string{`{"short_address":"RRRD292","language":"en"}`, `{"short_address":"RR-D2929","language":"en"}`,
			`{"short_address":"","language":"en"}`, `{"short_address":"RRRD2929","language":"fr"}`, `{"short_address":"RRRD2929"}`,
			`{"short_address":12345678,"language":"en"}`, `{"short_address":"RRRD2929","language":"en","x":1}`} {
			resp := env.Do(apitest.Request{Method: http.MethodPost, Path: resolvePath, Token: token, Body: bad})
			assertProblem(t, bad, resp, http.StatusBadRequest, "validation_failed")
		}
		if n := env.Count("SELECT count(*) FROM usage_events WHERE product = 'address'"); n != len(cases) {
			t.Errorf("malformed requests were counted: %d", n)
		}
	})

	t.Run("OperatorIsNotCounted", func(t *testing.T) {
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: resolvePath, Token: apitest.OperatorToken, Body: `{"short_address":"RRMA1234","language":"en"}`})
		if resp.Status != http.StatusOK {
			t.Fatalf("status %d: %s", resp.Status, resp.Body)
		}
		if n := env.Count("SELECT count(*) FROM usage_events WHERE product = 'address'"); n != len(cases) {
			t.Errorf("the operator's resolution was counted: %d", n)
		}
	})

	t.Run("ErrUnknownOrganization", func(t *testing.T) {
		// A development token naming no organization is no credential (issue 21, item 14).
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: resolvePath, Token: "dev:org:" + uuid.NewString(), Body: `{"short_address":"RRMA1234","language":"en"}`})
		assertProblem(t, "unknown organization", resp, http.StatusUnauthorized, "unauthenticated")
	})
}
