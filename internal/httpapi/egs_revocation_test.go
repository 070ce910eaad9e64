package httpapi_test

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/provider/coreapi/internal/apitest"
	"github.com/provider/coreapi/internal/einvoice"
	"github.com/provider/coreapi/internal/einvoice/egstest"
)

// TestRevokedUnitDocuments: a document an EGS unit stamped before it was revoked stays valid,
// with the warning that its certificate has since been revoked (SBX-CERT-07), for its
// organization, another and the operator alike (a revocation is public), and it is still
// reported when submitted; a document signed with the unit's key and certificate after the
// revocation is invalid (SBX-CERT-08).
func TestRevokedUnitDocuments(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org := createOrganization(t, env, minimalOrganization)["id"].(string)
	other := createOrganization(t, env, minimalOrganization)["id"].(string)
	token := "dev:org:" + org

	private, privatePEM := egstest.NewKey()
	fields := egstest.Example
	fields.VATNumber, fields.InvoiceTypes = sellerVAT, "0100"
	body, _ := json.Marshal(map[string]string{"organization_id": org, "csr": egstest.CSR(private, fields), "private_key": privatePEM})
	unit := call(t, env, http.MethodPost, egsUnitsPath, token, string(body), http.StatusCreated)
	unitID := unit["id"].(string)
	block, _ := pem.Decode([]byte(unit["compliance_certificate"].(map[string]any)["pem"].(string)))
	key, err := einvoice.LoadSandboxKey(private.Serialize(), block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	before := generateInvoice(t, env, token, invoiceBody(t, org, map[string]string{"egs_unit_id": fmt.Sprintf("%q", unitID)}))
	if v := validateXML(t, env, token, before.XML.Content); !v.Valid || len(v.codesOf("warning")) > 0 {
		t.Fatalf("before the revocation: %s %+v", v.Status, v.Results)
	}
	call(t, env, http.MethodPost, egsUnitsPath+"/"+unitID+"/revoke", token, "", http.StatusOK)

	for name, who := range map[string]string{"own organization": token, "another organization": "dev:org:" + other, "operator": "dev:operator"} {
		v := validateXML(t, env, who, before.XML.Content)
		if !v.Valid || v.Status != einvoice.VerdictWarning || !slices.Equal(v.codesOf("warning"), []string{"SBX-CERT-07"}) || len(v.codesOf("error")) > 0 {
			t.Errorf("%s: a document signed before the revocation: %s %+v", name, v.Status, v.Results)
		}
	}
	s, _ := submit(t, env, token, before.Invoice.ID)
	if s.SubmissionStatus != einvoice.SubmissionReported || s.ValidationResults.Status != einvoice.VerdictWarning ||
		!slices.Equal(messageCodes(s.ValidationResults.WarningMessages), []string{"SBX-CERT-07"}) {
		t.Errorf("submitting a document signed before the revocation: %+v", s)
	}

	// The unit's key and certificate sign again, after the revocation (second precision:
	// a second past the revocation's second).
	after, _, err := einvoice.Restamp(before.XML.Content, key, time.Now().Add(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	v := validateXML(t, env, token, after)
	if v.Valid || v.Status != einvoice.VerdictError || !slices.Equal(v.codesOf("error"), []string{"SBX-CERT-08"}) ||
		!slices.Contains(v.codesOf("info"), "SBX-SIG-00") {
		t.Errorf("a document signed after the revocation: %s %+v", v.Status, v.Results)
	}
}
