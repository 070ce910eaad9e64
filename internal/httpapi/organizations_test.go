package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/oapi-codegen/nullable"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/apitest"
)

const minimalOrganization = `{"legal_name_ar":"شركة المثال","legal_name_en":"Example Co","display_name":"Example","organization_type":"standard_customer","country":"SA"}`

// orgBody returns the minimal valid body with one field set to raw JSON, or removed when raw
// is empty.
func orgBody(t testing.TB, field, raw string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(minimalOrganization), &m); err != nil {
		t.Fatal(err)
	}
	if raw == "" {
		delete(m, field)
	} else {
		m[field] = json.RawMessage(raw)
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func createOrganization(t testing.TB, env *apitest.Env, body string) map[string]any {
	t.Helper()
	resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/organizations", Token: apitest.OperatorToken, Body: body})
	if resp.Status != http.StatusCreated {
		t.Fatalf("create organization: status %d: %s", resp.Status, resp.Body)
	}
	return resp.JSON(t)
}

func TestCreateOrganization(t *testing.T) {
	t.Parallel()

	t.Run("RequiredFieldsOnly", func(t *testing.T) {
		t.Parallel()
		env := apitest.New(t)
		c := env.Client(apitest.OperatorToken)
		resp, err := c.CreateOrganizationWithResponse(context.Background(), nil, api.OrganizationCreateRequest{
			LegalNameAr: "شركة المثال", LegalNameEn: "Example Co", DisplayName: "Example",
			OrganizationType: api.OrganizationTypeStandardCustomer, Country: "SA",
		})
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode() != http.StatusCreated || resp.JSON201 == nil {
			t.Fatalf("status %d: %s", resp.StatusCode(), resp.Body)
		}
		org := resp.JSON201
		if org.Id.Version() != 7 {
			t.Errorf("id %s is not a UUIDv7", org.Id)
		}
		if org.VerificationStatus != "unverified" || org.RiskStatus != "normal" ||
			org.DataResidencyPolicy != "sa_only" || org.LifecycleStatus != "pending" {
			t.Errorf("defaults: got %s/%s/%s/%s", org.VerificationStatus, org.RiskStatus, org.DataResidencyPolicy, org.LifecycleStatus)
		}
		if !org.VatReference.IsNull() || !org.CommercialRegistrationReference.IsNull() || !org.NationalAddressReference.IsNull() {
			t.Errorf("omitted references must be null: %s", resp.Body)
		}
		if org.CreatedAt.IsZero() || !org.UpdatedAt.Equal(org.CreatedAt) {
			t.Errorf("timestamps: created %v updated %v", org.CreatedAt, org.UpdatedAt)
		}
		var stored string
		if err := env.Pool.QueryRow(context.Background(),
			"SELECT display_name FROM organizations WHERE id = $1", org.Id).Scan(&stored); err != nil || stored != "Example" {
			t.Errorf("stored row: %q, %v", stored, err)
		}
		var actor, action, requestID string
		if err := env.Pool.QueryRow(context.Background(),
			"SELECT actor_type, action, request_id FROM audit_events WHERE resource_id = $1", org.Id.String()).Scan(&actor, &action, &requestID); err != nil {
			t.Fatalf("audit event: %v", err)
		}
		if actor != "operator" || action != "organization.created" || requestID != resp.HTTPResponse.Header.Get("Request-Id") {
			t.Errorf("audit event: actor %s action %s request %s", actor, action, requestID)
		}
		get, err := c.GetOrganizationWithResponse(context.Background(), org.Id)
		if err != nil || get.JSON200 == nil {
			t.Fatalf("get: %v %s", err, get.Body)
		}
		if get.JSON200.DisplayName != "Example" || !get.JSON200.CreatedAt.Equal(org.CreatedAt) {
			t.Errorf("read back differs: %s", get.Body)
		}
	})

	t.Run("AllFields", func(t *testing.T) {
		t.Parallel()
		env := apitest.New(t)
		c := env.Client(apitest.OperatorToken)
		verified, risk, residency, lifecycle := api.OrganizationVerificationStatusVerified, api.OrganizationRiskStatusWatch,
			api.DataResidencyPolicyUnrestricted, api.OrganizationLifecycleStatusActive
		resp, err := c.CreateOrganizationWithResponse(context.Background(), nil, api.OrganizationCreateRequest{
			LegalNameAr: "منصة", LegalNameEn: "Platform Ltd", DisplayName: "Platform",
			OrganizationType: api.OrganizationTypeReseller, Country: "AE",
			CommercialRegistrationReference: nullable.NewNullableWithValue("1010010000"),
			VatReference:                    nullable.NewNullableWithValue("300000000000003"),
			NationalAddressReference:        nullable.NewNullableWithValue("RRRD2929"),
			VerificationStatus:              &verified, RiskStatus: &risk,
			DataResidencyPolicy: &residency, LifecycleStatus: &lifecycle,
		})
		if err != nil || resp.JSON201 == nil {
			t.Fatalf("%v %s", err, resp.Body)
		}
		org := resp.JSON201
		if org.VerificationStatus != verified || org.RiskStatus != risk || org.DataResidencyPolicy != residency ||
			org.LifecycleStatus != lifecycle || org.OrganizationType != api.OrganizationTypeReseller || org.Country != "AE" {
			t.Errorf("statuses not kept: %s", resp.Body)
		}
		if v, _ := org.VatReference.Get(); v != "300000000000003" {
			t.Errorf("vat_reference = %q", v)
		}
		if v, _ := org.NationalAddressReference.Get(); v != "RRRD2929" {
			t.Errorf("national_address_reference = %q", v)
		}
	})

	t.Run("ExplicitNullReferences", func(t *testing.T) {
		t.Parallel()
		env := apitest.New(t)
		org := createOrganization(t, env, orgBody(t, "vat_reference", "null"))
		if v, ok := org["vat_reference"]; !ok || v != nil {
			t.Errorf("vat_reference = %v (present %v), want null", v, ok)
		}
	})

	t.Run("ErrBadInput", func(t *testing.T) {
		t.Parallel()
		env := apitest.New(t)
		type badCase struct {
			name, body, code, pointer string
		}
		cases := []badCase{
			{"UnknownProperty", orgBody(t, "nickname", `"x"`), "validation_failed", ""},
			{"CountryLowercase", orgBody(t, "country", `"sa"`), "validation_failed", "/country"},
			{"CountryThreeLetters", orgBody(t, "country", `"SAU"`), "validation_failed", "/country"},
			{"CountryDigits", orgBody(t, "country", `"S1"`), "validation_failed", "/country"},
			{"CountryNull", orgBody(t, "country", `null`), "validation_failed", "/country"},
			{"DisplayNameNumber", orgBody(t, "display_name", `42`), "validation_failed", "/display_name"},
			{"LegalNameArray", orgBody(t, "legal_name_en", `["a"]`), "validation_failed", "/legal_name_en"},
			{"OrganizationTypeNumber", orgBody(t, "organization_type", `5`), "validation_failed", "/organization_type"},
			{"VatReferenceNumber", orgBody(t, "vat_reference", `300000000000003`), "validation_failed", "/vat_reference"},
			{"VerificationStatusBoolean", orgBody(t, "verification_status", `true`), "validation_failed", "/verification_status"},
			{"MalformedJSON", `{"legal_name_ar":`, "malformed_json", ""},
			{"TrailingGarbage", minimalOrganization + `}`, "malformed_json", ""},
			{"NotAnObject", `["x"]`, "validation_failed", ""},
			{"EmptyBody", ``, "validation_failed", ""},
		}
		for _, f := range []string{"legal_name_ar", "legal_name_en", "display_name", "organization_type", "country"} {
			cases = append(cases, badCase{"Missing_" + f, orgBody(t, f, ""), "validation_failed", ""})
		}
		for _, f := range []string{"legal_name_ar", "legal_name_en", "display_name", "commercial_registration_reference", "vat_reference", "national_address_reference"} {
			cases = append(cases, badCase{"Empty_" + f, orgBody(t, f, `""`), "validation_failed", "/" + f})
		}
		for _, f := range []string{"organization_type", "verification_status", "risk_status", "data_residency_policy", "lifecycle_status"} {
			cases = append(cases, badCase{"Enum_" + f, orgBody(t, f, `"not_a_value"`), "validation_failed", "/" + f},
				badCase{"EnumCase_" + f, orgBody(t, f, `"ACTIVE"`), "validation_failed", "/" + f})
		}
		for _, tc := range cases {
			resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/organizations", Token: apitest.OperatorToken, Body: tc.body})
			if tc.name == "EmptyBody" {
				resp = env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/organizations", Token: apitest.OperatorToken,
					Header: http.Header{"Content-Type": {"application/json"}}})
			}
			assertProblem(t, tc.name, resp, http.StatusBadRequest, tc.code)
			if tc.pointer != "" && !hasFieldError(resp, tc.pointer) {
				t.Errorf("%s: errors do not name %s: %s", tc.name, tc.pointer, resp.Body)
			}
			if strings.HasPrefix(tc.name, "Missing_") && !strings.Contains(string(resp.Body), strings.TrimPrefix(tc.name, "Missing_")) {
				t.Errorf("%s: problem does not name the missing field: %s", tc.name, resp.Body)
			}
		}
		for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "application/xml"} {
			resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/organizations", Token: apitest.OperatorToken,
				Body: minimalOrganization, ContentType: ct})
			assertProblem(t, "ContentType "+ct, resp, http.StatusBadRequest, "validation_failed")
			if !hasFieldError(resp, "Content-Type") {
				t.Errorf("content type %s: errors do not name Content-Type: %s", ct, resp.Body)
			}
		}
		if n := env.Count("SELECT count(*) FROM organizations"); n != 0 {
			t.Errorf("bad input created %d organizations", n)
		}
		if n := env.Count("SELECT count(*) FROM audit_events"); n != 0 {
			t.Errorf("bad input wrote %d audit events", n)
		}
	})

	t.Run("ErrUnknownPropertyIsNamed", func(t *testing.T) {
		t.Parallel()
		env := apitest.New(t)
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/organizations", Token: apitest.OperatorToken,
			Body: orgBody(t, "nickname", `"x"`)})
		assertProblem(t, "unknown property", resp, http.StatusBadRequest, "validation_failed")
		if !strings.Contains(string(resp.Body), "nickname") {
			t.Errorf("problem does not name the unknown property: %s", resp.Body)
		}
	})

	t.Run("ErrOrganizationPrincipalForbidden", func(t *testing.T) {
		t.Parallel()
		env := apitest.New(t)
		org := uuid.MustParse(createOrganization(t, env, minimalOrganization)["id"].(string))
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/organizations", Token: apitest.OrgToken(org), Body: minimalOrganization})
		assertProblem(t, "org principal", resp, http.StatusForbidden, "forbidden")
		if n := env.Count("SELECT count(*) FROM organizations"); n != 1 {
			t.Errorf("forbidden create stored %d rows", n)
		}
	})
}

func TestGetOrganization(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org := createOrganization(t, env, minimalOrganization)
	id := org["id"].(string)
	other := createOrganization(t, env, minimalOrganization)["id"].(string)

	t.Run("Operator", func(t *testing.T) {
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/organizations/" + id, Token: apitest.OperatorToken})
		if resp.Status != http.StatusOK {
			t.Fatalf("status %d: %s", resp.Status, resp.Body)
		}
		got := resp.JSON(t)
		for k, v := range org {
			if fmt.Sprint(got[k]) != fmt.Sprint(v) {
				t.Errorf("%s: read %v, created %v", k, got[k], v)
			}
		}
		if len(got) != 15 {
			t.Errorf("organization has %d fields, want 15: %s", len(got), resp.Body)
		}
	})
	t.Run("OwnOrganization", func(t *testing.T) {
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/organizations/" + id, Token: "dev:org:" + id})
		if resp.Status != http.StatusOK {
			t.Fatalf("status %d: %s", resp.Status, resp.Body)
		}
	})
	t.Run("ErrOtherOrganizationIsNotFound", func(t *testing.T) {
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/organizations/" + other, Token: "dev:org:" + id})
		assertProblem(t, "other tenant", resp, http.StatusNotFound, "not_found")
		missing := uuid.NewString()
		unknown := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/organizations/" + missing, Token: "dev:org:" + id})
		if problemShape(resp, other) != problemShape(unknown, missing) {
			t.Errorf("another tenant's organization must look exactly like a missing one:\n%s\n%s", resp.Body, unknown.Body)
		}
	})
	t.Run("ErrUnknownID", func(t *testing.T) {
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/organizations/" + uuid.NewString(), Token: apitest.OperatorToken})
		assertProblem(t, "unknown id", resp, http.StatusNotFound, "not_found")
	})
	t.Run("ErrNotAUUID", func(t *testing.T) {
		for _, bad := range []string{"123", "not-a-uuid", id + "0", strings.ReplaceAll(id, "-", "")} {
			resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/organizations/" + bad, Token: apitest.OperatorToken})
			assertProblem(t, "id "+bad, resp, http.StatusBadRequest, "validation_failed")
			if !hasFieldError(resp, "id") {
				t.Errorf("id %s: errors do not name the id parameter: %s", bad, resp.Body)
			}
		}
	})
	t.Run("ErrUnauthenticated", func(t *testing.T) {
		for name, header := range map[string]string{
			"NoHeader":       "",
			"UnknownToken":   "Bearer dev:nobody",
			"BadOrgID":       "Bearer dev:org:not-a-uuid",
			"BasicScheme":    "Basic ZGV2Om9wZXJhdG9y",
			"EmptyBearer":    "Bearer ",
			"OperatorSuffix": "Bearer dev:operator2",
		} {
			req := apitest.Request{Method: http.MethodGet, Path: "/v1/organizations/" + id}
			if header != "" {
				req.Header = http.Header{"Authorization": {header}}
			}
			resp := env.Do(req)
			assertProblem(t, name, resp, http.StatusUnauthorized, "unauthenticated")
			if resp.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s: 401 without WWW-Authenticate", name)
			}
		}
	})
}

// problemShape is the problem body without its request id and with the looked-up ids
// replaced, so two answers about different ids can be compared.
func problemShape(r *apitest.Response, ids ...string) string {
	var m map[string]any
	_ = json.Unmarshal(r.Body, &m)
	delete(m, "request_id")
	b, _ := json.Marshal(m)
	s := string(b)
	for _, id := range ids {
		s = strings.ReplaceAll(s, id, "{id}")
	}
	return s
}

func assertProblem(t testing.TB, name string, resp *apitest.Response, status int, code string) {
	t.Helper()
	if resp.Status != status {
		t.Errorf("%s: status %d, want %d: %s", name, resp.Status, status, resp.Body)
		return
	}
	var p struct {
		Code      string `json:"code"`
		Status    int    `json:"status"`
		RequestID string `json:"request_id"`
		Retryable bool   `json:"retryable"`
	}
	if err := json.Unmarshal(resp.Body, &p); err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	if p.Code != code || p.Status != status {
		t.Errorf("%s: code %q status %d, want %q %d: %s", name, p.Code, p.Status, code, status, resp.Body)
	}
	if p.RequestID == "" || p.RequestID != resp.Header.Get("Request-Id") {
		t.Errorf("%s: request_id %q does not match the Request-Id header %q", name, p.RequestID, resp.Header.Get("Request-Id"))
	}
}

func hasFieldError(resp *apitest.Response, pointer string) bool {
	var p struct {
		Errors []struct {
			Pointer string `json:"pointer"`
		} `json:"errors"`
	}
	_ = json.Unmarshal(resp.Body, &p)
	for _, e := range p.Errors {
		if e.Pointer == pointer {
			return true
		}
	}
	return false
}
