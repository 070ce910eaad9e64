package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/provider/coreapi/internal/apitest"
)

// retryTaxDocuments posts the retry of the invoice's tax document as token, with an
// Idempotency-Key when key is not empty.
func retryTaxDocuments(env *apitest.Env, token, invoice, key string) *apitest.Response {
	req := apitest.Request{Method: http.MethodPost, Path: "/v1/invoices/" + invoice + "/tax-documents/retry", Token: token}
	if key != "" {
		req.Header = http.Header{"Idempotency-Key": {key}}
	}
	return env.Do(req)
}

// wantTaxDocumentStatus checks the stored tax_document_status of the invoice.
func wantTaxDocumentStatus(t testing.TB, env *apitest.Env, invoice, want string) {
	t.Helper()
	if n := env.Count(`SELECT count(*) FROM billing_invoices WHERE id = $1 AND tax_document_status = $2`, invoice, want); n != 1 {
		t.Errorf("invoice %s: tax_document_status is not %s", invoice, want)
	}
}

// TestInvoiceTaxDocumentRetry: a tax document refused for a bad VAT number is issued by a
// retry once the organization fixed it; only a failed document is retried; the organization
// retries its own, the operator any.
func TestInvoiceTaxDocumentRetry(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)

	t.Run("RetryAfterTheVATNumberIsFixed", func(t *testing.T) {
		t.Parallel()
		org, token, invoice := billedOrganization(t, env, buyerWithBadVAT)
		id := invoice["id"].(string)
		if docs := waitForTaxDocuments(t, env, token, id, 0); docs["tax_document_status"] != "failed" {
			t.Fatalf("tax documents %v", docs)
		}
		// Another organization cannot even see it; a key without invoices:write cannot retry.
		_, other := newOrganization(t, env)
		assertProblem(t, "another organization", retryTaxDocuments(env, other, id, ""), http.StatusNotFound, "not_found")
		reader := call(t, env, http.MethodPost, "/v1/api-keys", apitest.OperatorToken,
			fmt.Sprintf(`{"organization_id":%q,"name":"reader","environment":"sandbox","scopes":["invoices:read"]}`, org), http.StatusCreated)["full_key"].(string)
		assertProblem(t, "without invoices:write", retryTaxDocuments(env, reader, id, ""), http.StatusForbidden, "insufficient_scope")
		wantTaxDocumentStatus(t, env, id, "failed")

		call(t, env, http.MethodPatch, "/v1/organizations/"+org, token, `{"vat_reference":"310123456700003"}`, http.StatusOK)
		for i := range 2 { // the retry, then its replay
			resp := retryTaxDocuments(env, token, id, "retry-1")
			if resp.Status != http.StatusOK || (i == 1) != (resp.Header.Get("Idempotent-Replayed") == "true") {
				t.Fatalf("retry %d: %d %s", i, resp.Status, resp.Body)
			}
			if docs := resp.JSON(t); docs["tax_document_status"] != "pending" || docs["failure"] != nil || len(docs["items"].([]any)) != 0 {
				t.Errorf("retry %d answered %v", i, docs)
			}
		}
		docs := waitForTaxDocuments(t, env, token, id, 1)
		doc := taxDocumentItem(docs, 0)
		if docs["tax_document_status"] != "issued" || docs["failure"] != nil || doc["kind"] != "standard_tax_invoice" || doc["payable_amount"] != invoice["total"] {
			t.Errorf("after the retry: %v", docs)
		}
		checkDocumentValidates(t, env, token, doc["id"].(string))

		// Issued: a second retry is refused and changes nothing.
		assertProblem(t, "retry of an issued document", retryTaxDocuments(env, token, id, "retry-2"), http.StatusConflict, "invalid_state_transition")
		wantTaxDocumentStatus(t, env, id, "issued")
		// One job per issue and retry, one document, each step announced and audited once.
		if n := env.Count(`SELECT count(*) FROM river_job WHERE kind = 'issue_tax_documents' AND args->>'invoice_id' = $1`, id); n != 2 {
			t.Errorf("%d jobs for the invoice, want 2 (the issue and the retry)", n)
		}
		if n := env.Count(`SELECT count(*) FROM tax_invoices WHERE organization_id = $1`, org); n != 1 {
			t.Errorf("%d documents, want 1", n)
		}
		checkTaxDocumentEvents(t, env, org, "invoice.tax_document_failed", 1)
		checkTaxDocumentEvents(t, env, org, "invoice.tax_document_retried", 1)
		checkTaxDocumentEvents(t, env, org, "invoice.tax_document_issued", 1)
		if n := env.Count(`SELECT count(*) FROM audit_events WHERE organization_id = $1 AND action = 'billing_invoice.tax_document_retried'
			AND resource_id = $2 AND after->>'reason' LIKE 'retry of a failed tax document: %'`, org, id); n != 1 {
			t.Errorf("%d audit entries of the retry", n)
		}
	})

	t.Run("OperatorRetriesAndTheEngineRefusesAgain", func(t *testing.T) {
		t.Parallel()
		org, token, invoice := billedOrganization(t, env, buyerWithBadVAT)
		id := invoice["id"].(string)
		waitForTaxDocuments(t, env, token, id, 0)
		resp := retryTaxDocuments(env, apitest.OperatorToken, id, "")
		if resp.Status != http.StatusOK {
			t.Fatalf("the operator's retry: %d %s", resp.Status, resp.Body)
		}
		// Nothing was fixed: refused again, with its reasons.
		if docs := waitForTaxDocuments(t, env, token, id, 0); docs["tax_document_status"] != "failed" || docs["failure"] == nil {
			t.Errorf("after the retry: %v", docs)
		}
		checkTaxDocumentEvents(t, env, org, "invoice.tax_document_failed", 2)
	})

	t.Run("OnlyAFailedDocumentIsRetried", func(t *testing.T) {
		t.Parallel()
		_, token, invoice := billedOrganization(t, env, buyerWithoutVAT)
		id := invoice["id"].(string)
		waitForTaxDocuments(t, env, token, id, 1)
		assertProblem(t, "issued", retryTaxDocuments(env, token, id, ""), http.StatusConflict, "invalid_state_transition")
		wantTaxDocumentStatus(t, env, id, "issued")
		if n := env.Count(`SELECT count(*) FROM webhook_events WHERE type = 'invoice.tax_document_retried' AND data->>'invoice_id' = $1`, id); n != 0 {
			t.Errorf("%d retried events for a refused retry", n)
		}
	})
}
