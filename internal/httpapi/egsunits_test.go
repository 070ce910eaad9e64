package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/provider/coreapi/internal/apitest"
	"github.com/provider/coreapi/internal/einvoice/egstest"
)

const egsUnitsPath = "/v1/taxauth/egs-units"

// sellerVAT is the seller's VAT number in invoiceBody: a unit stamping its documents is
// registered for it.
const sellerVAT = "310123456700003"

// egsUnitBody is a registration of a unit of org for sellerVAT with the given invoice types.
func egsUnitBody(org, invoiceTypes string) string {
	key, keyPEM := egstest.NewKey()
	f := egstest.Example
	f.VATNumber, f.InvoiceTypes = sellerVAT, invoiceTypes
	b, _ := json.Marshal(map[string]string{"organization_id": org, "csr": egstest.CSR(key, f), "private_key": keyPEM})
	return string(b)
}

func registerUnit(t *testing.T, env *apitest.Env, org, token, invoiceTypes string) map[string]any {
	t.Helper()
	return call(t, env, http.MethodPost, egsUnitsPath, token, egsUnitBody(org, invoiceTypes), http.StatusCreated)
}

// passCompliance generates one document of each simplified kind with the unit.
func passCompliance(t *testing.T, env *apitest.Env, org, token, unit string) []invoiceResult {
	t.Helper()
	egs := fmt.Sprintf("%q", unit)
	first := generateInvoice(t, env, token, invoiceBody(t, org, map[string]string{"egs_unit_id": egs}))
	out := []invoiceResult{first}
	for _, kind := range []string{"simplified_credit_note", "simplified_debit_note"} {
		out = append(out, generateInvoice(t, env, token, invoiceBody(t, org, map[string]string{
			"egs_unit_id": egs, "requested_invoice_type": fmt.Sprintf("%q", kind),
			"billing_reference": fmt.Sprintf(`{"invoice_id":%q}`, first.Invoice.ID), "note_reason": `"Returned goods"`,
		})))
	}
	return out
}

// certificateBody is the base64 DER of a PEM certificate, as ds:X509Certificate carries it.
func certificateBody(pemText string) string {
	lines := strings.Split(strings.TrimSpace(pemText), "\n")
	return strings.Join(lines[1:len(lines)-1], "")
}

// TestEGSUnitJourney: register a unit from a CSR, pass compliance with one document of each
// declared kind, get the production certificate, stamp with it on the unit's own chain,
// validate what was stamped, revoke; and every refusal on the way.
func TestEGSUnitJourney(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org, token := newOrganization(t, env)
	unitCount := func() int { return env.Count("SELECT count(*) FROM egs_units WHERE organization_id = $1", org) }

	// Before any unit: today's behaviour, any egs_unit_id, the sandbox's own key.
	before := generateInvoice(t, env, token, invoiceBody(t, org, map[string]string{"egs_unit_id": `"till-7"`}))
	if before.Invoice.EGSUnitID != "till-7" {
		t.Fatalf("egs_unit_id = %q", before.Invoice.EGSUnitID)
	}

	// A CSR with a bad serial number and a bad VAT number: both fields named, nothing stored.
	key, keyPEM := egstest.NewKey()
	bad := egstest.Example
	bad.SerialNumber, bad.VATNumber = "TST", "12345"
	body, _ := json.Marshal(map[string]string{"organization_id": org, "csr": egstest.CSR(key, bad), "private_key": keyPEM})
	resp := env.Do(apitest.Request{Method: http.MethodPost, Path: egsUnitsPath, Token: token, Body: string(body)})
	if resp.Status != http.StatusUnprocessableEntity || !strings.Contains(string(resp.Body), `"code":"serial_number"`) || !strings.Contains(string(resp.Body), `"code":"vat_number"`) {
		t.Fatalf("bad CSR: %d %s", resp.Status, resp.Body)
	}
	// A key that is not the CSR's.
	_, otherPEM := egstest.NewKey()
	body, _ = json.Marshal(map[string]string{"organization_id": org, "csr": egstest.CSR(key, egstest.Example), "private_key": otherPEM})
	if resp := env.Do(apitest.Request{Method: http.MethodPost, Path: egsUnitsPath, Token: token, Body: string(body)}); resp.Status != http.StatusUnprocessableEntity || !strings.Contains(string(resp.Body), "/private_key") {
		t.Fatalf("other key: %d %s", resp.Status, resp.Body)
	}
	if n := unitCount(); n != 0 {
		t.Fatalf("refusals stored %d units", n)
	}

	// Registered (replayed by its Idempotency-Key), in compliance with a sandbox certificate.
	reg := egsUnitBody(org, "0100")
	idem := http.Header{"Idempotency-Key": []string{"egs-register-1"}}
	first := env.Do(apitest.Request{Method: http.MethodPost, Path: egsUnitsPath, Token: token, Body: reg, Header: idem})
	replay := env.Do(apitest.Request{Method: http.MethodPost, Path: egsUnitsPath, Token: token, Body: reg, Header: idem})
	if first.Status != http.StatusCreated || replay.Status != http.StatusCreated || string(first.Body) != string(replay.Body) || replay.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("register: %d / replay %d %s", first.Status, replay.Status, replay.Body)
	}
	unit := first.JSON(t)
	id := unit["id"].(string)
	compliance := unit["compliance_certificate"].(map[string]any)
	if unit["status"] != "compliance" || unit["sandbox"] != true || unitCount() != 1 || unit["vat_number"] != sellerVAT ||
		!strings.Contains(compliance["issuer"].(string), "SANDBOX-EINVOICE-CA") || unit["production_certificate"] != nil {
		t.Fatalf("unit: %v", unit)
	}
	if missing := unit["compliance"].(map[string]any)["missing_kinds"].([]any); len(missing) != 3 {
		t.Fatalf("missing kinds: %v", missing)
	}

	// Not yet: 409 naming each missing kind, nothing changes.
	resp = env.Do(apitest.Request{Method: http.MethodPost, Path: egsUnitsPath + "/" + id + "/production-certificate", Token: token})
	if resp.Status != http.StatusConflict || !strings.Contains(string(resp.Body), "invalid_state_transition") ||
		!strings.Contains(string(resp.Body), `"code":"simplified_debit_note"`) {
		t.Fatalf("early production certificate: %d %s", resp.Status, resp.Body)
	}
	// Once the organization has units it must name one; another VAT number is not the unit's.
	for name, changes := range map[string]map[string]string{
		"no unit":     {"egs_unit_id": "null"},
		"not a unit":  {"egs_unit_id": `"till-7"`},
		"another VAT": {"egs_unit_id": fmt.Sprintf("%q", id), "seller.vat_number": `"300000000000003"`},
	} {
		resp := env.Do(apitest.Request{Method: http.MethodPost, Path: invoicePath, Token: token, Body: invoiceBody(t, org, changes)})
		if resp.Status != http.StatusUnprocessableEntity || !strings.Contains(string(resp.Body), "/egs_unit_id") {
			t.Errorf("%s: %d %s", name, resp.Status, resp.Body)
		}
	}

	// Compliance: the three simplified kinds, stamped with the compliance certificate on the
	// unit's own chain, each valid for the validation service.
	docs := passCompliance(t, env, org, token, id)
	for i, doc := range docs {
		if doc.Invoice.EGSUnitID != id || doc.Invoice.Identity.ICV != int64(i+1) {
			t.Errorf("document %d: unit %s ICV %d", i, doc.Invoice.EGSUnitID, doc.Invoice.Identity.ICV)
		}
		if !strings.Contains(doc.XML.Content, certificateBody(compliance["pem"].(string))) || !strings.Contains(doc.XML.Content, "xades:SignedProperties") {
			t.Errorf("document %d is not stamped with the unit's compliance certificate", i)
		}
		validateClean(t, env, token, doc.XML.Content)
	}
	got := call(t, env, http.MethodGet, egsUnitsPath+"/"+id, token, "", http.StatusOK)
	if missing := got["compliance"].(map[string]any)["missing_kinds"].([]any); len(missing) != 0 {
		t.Fatalf("missing after compliance: %v", missing)
	}

	// Production: once; the next document is stamped with the production certificate.
	prod := call(t, env, http.MethodPost, egsUnitsPath+"/"+id+"/production-certificate", token, "", http.StatusOK)
	if prod["status"] != "production" || prod["production_certificate"] == nil {
		t.Fatalf("production: %v", prod)
	}
	call(t, env, http.MethodPost, egsUnitsPath+"/"+id+"/production-certificate", token, "", http.StatusConflict)
	next := generateInvoice(t, env, token, invoiceBody(t, org, map[string]string{"egs_unit_id": fmt.Sprintf("%q", id)}))
	productionPEM := prod["production_certificate"].(map[string]any)["pem"].(string)
	if next.Invoice.Identity.ICV != 4 || next.Invoice.Identity.PIH != docs[2].Invoice.Identity.InvoiceHash || !strings.Contains(next.XML.Content, certificateBody(productionPEM)) {
		t.Fatalf("production document: ICV %d", next.Invoice.Identity.ICV)
	}
	validateClean(t, env, token, next.XML.Content)
	// The unit's id in capitals names the same unit: its chain goes on, under its own spelling.
	upper := generateInvoice(t, env, token, invoiceBody(t, org, map[string]string{"egs_unit_id": fmt.Sprintf("%q", strings.ToUpper(id))}))
	if upper.Invoice.EGSUnitID != id || upper.Invoice.Identity.ICV != 5 || upper.Invoice.Identity.PIH != next.Invoice.Identity.InvoiceHash {
		t.Fatalf("the unit named in capitals: unit %q, ICV %d", upper.Invoice.EGSUnitID, upper.Invoice.Identity.ICV)
	}
	if n := env.Count("SELECT count(*) FROM einvoice_counters WHERE organization_id = $1", org); n != 2 {
		t.Fatalf("%d chains of the organization, want 2 (till-7's and the unit's)", n)
	}

	// Listed; another organization sees 404 and its list is its own; the operator is 403.
	list := call(t, env, http.MethodGet, egsUnitsPath+"?organization_id="+org, token, "", http.StatusOK)
	if items := list["items"].([]any); len(items) != 1 || items[0].(map[string]any)["id"] != id {
		t.Fatalf("list: %v", list)
	}
	other, otherToken := newOrganization(t, env)
	call(t, env, http.MethodGet, egsUnitsPath+"/"+id, otherToken, "", http.StatusNotFound)
	call(t, env, http.MethodPost, egsUnitsPath+"/"+id+"/revoke", otherToken, "", http.StatusNotFound)
	call(t, env, http.MethodGet, egsUnitsPath+"?organization_id="+org, otherToken, "", http.StatusForbidden)
	call(t, env, http.MethodPost, egsUnitsPath, otherToken, egsUnitBody(org, "0100"), http.StatusForbidden)
	call(t, env, http.MethodGet, egsUnitsPath+"?organization_id="+org, apitest.OperatorToken, "", http.StatusForbidden)
	call(t, env, http.MethodPost, egsUnitsPath, apitest.OperatorToken, egsUnitBody(other, "0100"), http.StatusForbidden)
	if n := env.Count("SELECT count(*) FROM egs_units WHERE organization_id = $1", other); n != 0 {
		t.Fatalf("refused registrations stored %d units", n)
	}

	// Revoked: the very next generation naming it is refused; revoking again is 409.
	revoked := call(t, env, http.MethodPost, egsUnitsPath+"/"+id+"/revoke", token, "", http.StatusOK)
	if revoked["status"] != "revoked" || revoked["revoked_at"] == nil {
		t.Fatalf("revoked: %v", revoked)
	}
	resp = env.Do(apitest.Request{Method: http.MethodPost, Path: invoicePath, Token: token, Body: invoiceBody(t, org, map[string]string{"egs_unit_id": fmt.Sprintf("%q", id)})})
	if resp.Status != http.StatusConflict || !strings.Contains(string(resp.Body), "revoked") {
		t.Fatalf("stamping with a revoked unit: %d %s", resp.Status, resp.Body)
	}
	call(t, env, http.MethodPost, egsUnitsPath+"/"+id+"/revoke", token, "", http.StatusConflict)
	if n := env.Count("SELECT count(*) FROM tax_invoices WHERE organization_id = $1 AND egs_unit_id = $2", org, id); n != 5 {
		t.Fatalf("%d documents of the unit, want 5", n)
	}
	for _, ev := range []string{"egs_unit.registered", "egs_unit.production_certificate_issued", "egs_unit.revoked"} {
		if n := env.Count("SELECT count(*) FROM webhook_events WHERE type = $1 AND data->>'id' = $2", ev, id); n != 1 {
			t.Errorf("%d %s events", n, ev)
		}
		if n := env.Count("SELECT count(*) FROM audit_events WHERE action = $1 AND resource_id = $2", ev, id); n != 1 {
			t.Errorf("%d %s audit events", n, ev)
		}
	}
}

// validateClean posts a stamped document to the validation service: no error.
func validateClean(t *testing.T, env *apitest.Env, token, xml string) {
	t.Helper()
	resp := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/taxauth/invoices/validate", Token: token, Body: xml, ContentType: "application/xml"})
	if resp.Status != http.StatusOK || !strings.Contains(string(resp.Body), `"valid":true`) {
		t.Errorf("validate: %d %s", resp.Status, resp.Body)
	}
}

// Reachers (TestEveryDocumentedStateIsReachable).

var _ = reachable("EgsUnitStatus", "compliance", func(t *testing.T, env *apitest.Env) map[string]any {
	org, token := newOrganization(t, env)
	return registerUnit(t, env, org, token, "0100")
})

var _ = reachable("EgsUnitStatus", "production", func(t *testing.T, env *apitest.Env) map[string]any {
	org, token := newOrganization(t, env)
	id := registerUnit(t, env, org, token, "0100")["id"].(string)
	passCompliance(t, env, org, token, id)
	return call(t, env, http.MethodPost, egsUnitsPath+"/"+id+"/production-certificate", token, "", http.StatusOK)
})

var _ = reachable("EgsUnitStatus", "revoked", func(t *testing.T, env *apitest.Env) map[string]any {
	org, token := newOrganization(t, env)
	id := registerUnit(t, env, org, token, "0100")["id"].(string)
	return call(t, env, http.MethodPost, egsUnitsPath+"/"+id+"/revoke", token, "", http.StatusOK)
})

// egsFuzzFixtures give the spec-driven fuzzing's EGS unit family an organization of its own
// (its units change how its documents are stamped) and a real CSR and key for its bodies.
type egsFuzzFixtures struct {
	org          string
	registration map[string]string // csr, private_key
}

// seedEGSFixtures registers the units the family's operations name: a unit that has passed
// its compliance checks for issueEgsUnitProductionCertificate, another for revokeEgsUnit and
// getEgsUnit.
func seedEGSFixtures(t *testing.T, env *apitest.Env, fx *fuzzFixtures) {
	t.Helper()
	org, token := newOrganization(t, env)
	fx.egs.org = org
	if err := json.Unmarshal([]byte(egsUnitBody(org, "0100")), &fx.egs.registration); err != nil {
		t.Fatal(err)
	}
	certified := registerUnit(t, env, org, token, "0100")["id"].(string)
	passCompliance(t, env, org, token, certified)
	fx.byOperation["issueEgsUnitProductionCertificate"] = certified
	other := registerUnit(t, env, org, token, "0100")["id"].(string)
	fx.byOperation["revokeEgsUnit"] = other
	fx.byOperation["getEgsUnit"] = other
}
