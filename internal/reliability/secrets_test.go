//go:build reliability

package reliability_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/provider/coreapi/internal/secretbox"
)

// TestNoSecretAtRestOrInLogs creates every kind of secret the API hands out (API key
// secrets at creation, with an Idempotency-Key, and at rotation; OAuth access tokens;
// connected-business credentials; the developer key of an onboarding) plus the e-invoice
// sandbox stamping key the server keeps, uses each credential, and then looks for each secret
// in every text, bytea and JSON column of every table, and in everything the server logged
// at debug level. Webhook signing secrets join this list with the webhook branch (issue 7).
func TestNoSecretAtRestOrInLogs(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	s := startServer(t, c.dsn(), "", "LOG_LEVEL=debug")
	db := c.pool(t)
	secrets := map[string]string{} // what -> secret

	post := func(path, token, body string, h http.Header) map[string]any {
		t.Helper()
		r := call(nil, http.MethodPost, s.url(path), token, body, h)
		if r.status != http.StatusCreated && r.status != http.StatusOK {
			t.Fatalf("POST %s: %d %s", path, r.status, r.body)
		}
		return r.json()
	}
	org := createOrg(t, s, "Secretive", "standard_customer")
	keyBody := func(name string) string {
		return fmt.Sprintf(`{"organization_id":%q,"name":%q,"environment":"sandbox","scopes":["organizations:read","invoice:generate","address:read"]}`, org, name)
	}
	k1 := post("/v1/api-keys", operator, keyBody("plain"), nil)
	secrets["api key secret"], secrets["api key full_key"] = k1["secret"].(string), k1["full_key"].(string)
	k2 := post("/v1/api-keys", operator, keyBody("idempotent"), http.Header{"Idempotency-Key": {"secret-key-1"}})
	secrets["api key secret (idempotent create)"] = k2["secret"].(string)
	k3 := post("/v1/api-keys/"+k1["id"].(string)+"/rotate", operator, `{"grace_period_seconds":60}`, nil)
	secrets["api key secret (rotated)"] = k3["secret"].(string)

	tok := post("/v1/oauth/token", "", fmt.Sprintf(`{"grant_type":"client_credentials","client_id":%q,"client_secret":%q,"scope":"organizations:read"}`,
		k2["prefix"], k2["secret"]), nil)
	secrets["oauth access token"] = tok["access_token"].(string)

	platform := createOrg(t, s, "Platform", "reseller")
	cb := post("/v1/connected-businesses", orgToken(platform), `{"external_reference":"m-1","display_name":"Merchant","legal_name_en":"Merchant LLC"}`, nil)
	cred := post("/v1/connected-businesses/"+cb["id"].(string)+"/credentials", orgToken(platform), `{"product":"einvoice","name":"pos"}`, nil)
	full := cred["full_key"].(string)
	secrets["connected business credential"] = full[strings.LastIndex(full, "_")+1:]

	onb := post("/v1/onboarding/verified-logins", operator, `{"identity":{"issuer":"https://login.example","subject":"s-1","email":"a@example.com","email_verified":true},
		"organization":{"legal_name_ar":"شركة","legal_name_en":"Onboarded","display_name":"Onboarded","organization_type":"standard_customer","country":"SA"},
		"traffic_type":"real_customer","language":"en"}`, nil)
	secrets["onboarding developer key"] = onb["api_key_secret"].(map[string]any)["secret"].(string)

	// Every credential is used, so a logger that printed headers would print it.
	for what, bearer := range map[string]string{"api key": k3["full_key"].(string), "token": secrets["oauth access token"], "credential": full} {
		r := call(nil, http.MethodGet, s.url("/v1/organizations/"+org), bearer, "", nil)
		if r.status >= 500 || r.status == http.StatusUnauthorized {
			t.Errorf("using the %s: %d %s", what, r.status, r.body)
		}
	}

	// The e-invoice sandbox key: generated with the organization's first invoice, sealed.
	inv := call(nil, http.MethodPost, s.url("/v1/taxauth/invoices/generate/simplified"), orgToken(org), invoiceBody(org), nil)
	if inv.status != http.StatusCreated {
		t.Fatalf("generate invoice: %d %s", inv.status, inv.body)
	}
	var sealed []byte
	if err := db.QueryRow(context.Background(), "SELECT private_key FROM einvoice_sandbox_keys WHERE organization_id = $1", org).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	box, _ := secretbox.New(secretbox.DevelopmentKey())
	orgID := uuid.MustParse(org)
	private, err := box.Open(sealed, orgID[:])
	if err != nil || len(private) != 32 {
		t.Fatalf("the stored stamping key does not open as a sealed 32-byte key: %d bytes, %v", len(private), err)
	}
	secrets["e-invoice stamping key (hex)"] = hex.EncodeToString(private)
	secrets["e-invoice stamping key (base64)"] = base64.StdEncoding.EncodeToString(private)

	columns := scanColumns(t, db)
	for what, secret := range secrets {
		if len(secret) < 16 {
			t.Fatalf("%s: %q is too short to be a secret", what, secret)
		}
		for _, col := range columns {
			if n := count(t, db, col.query, col.arg(secret)); n > 0 {
				t.Errorf("the %s is stored in clear in %s (%d rows)", what, col.name, n)
			}
		}
		if strings.Contains(s.out.String(), secret) {
			t.Errorf("the %s is in the server's log", what)
		}
	}
	if n := count(t, db, "SELECT count(*) FROM einvoice_sandbox_keys WHERE position($1::bytea in private_key) > 0", private); n != 0 {
		t.Error("the raw stamping key is stored in clear")
	}
	if n := count(t, db, "SELECT count(*) FROM idempotency_keys WHERE key = 'secret-key-1' AND response_body IS NOT NULL"); n != 1 {
		t.Error("the idempotent create's response was not stored (sealed)")
	}
	t.Logf("secrets figures: %d secrets x %d columns of %d bytes of server log: none found", len(secrets), len(columns), len(s.out.String()))
}

// column is one scannable column with the query that finds a secret in it.
type column struct {
	name, query string
	binary      bool
}

func (c column) arg(secret string) any {
	if c.binary {
		return []byte(secret)
	}
	return secret
}

// scanColumns lists every text, bytea and JSON column of every table of the public schema.
func scanColumns(t testing.TB, db *pgxpool.Pool) []column {
	t.Helper()
	rows, err := db.Query(context.Background(), `SELECT table_name, column_name, data_type FROM information_schema.columns
		WHERE table_schema = 'public' AND data_type IN ('text', 'character varying', 'bytea', 'jsonb', 'json', 'ARRAY')
		ORDER BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []column
	for rows.Next() {
		var table, name, typ string
		if err := rows.Scan(&table, &name, &typ); err != nil {
			t.Fatal(err)
		}
		col := column{name: table + "." + name}
		if typ == "bytea" {
			col.binary = true
			col.query = fmt.Sprintf(`SELECT count(*) FROM %q WHERE position($1::bytea in %q) > 0`, table, name)
		} else {
			col.query = fmt.Sprintf(`SELECT count(*) FROM %q WHERE strpos(%q::text, $1) > 0`, table, name)
		}
		out = append(out, col)
	}
	if len(out) < 20 {
		t.Fatalf("only %d columns to scan", len(out))
	}
	return out
}

// invoiceBody is a valid simplified-invoice request of org.
func invoiceBody(org string) string {
	b, _ := json.Marshal(map[string]any{
		"organization_id": org, "tax_calculation_mode": "service_calculated", "requested_invoice_type": "simplified_tax_invoice",
		"seller": map[string]any{"legal_name": "Nakhla", "vat_number": "310123456700003", "commercial_registration": "1010123456",
			"address": map[string]any{"street_name": "King Fahd Road", "building_number": "2929", "district": "Al Olaya", "city": "Riyadh",
				"postal_code": "12214", "country_code": "SA"}},
		"line_items": []any{map[string]any{"line_id": "1", "name_en": "Coffee", "quantity": 2, "unit_code": "PCE", "unit_price": 4500,
			"tax_category": "S", "tax_rate": 15}},
	})
	return string(b)
}
