package httpapi_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
	"github.com/provider/coreapi/internal/einvoice"
)

// submission is the result of submitTaxInvoice and getTaxInvoiceSubmission.
type submission struct {
	InvoiceID         string  `json:"invoice_id"`
	Kind              string  `json:"kind"`
	Mode              string  `json:"mode"`
	SubmissionStatus  string  `json:"submission_status"`
	ReportingStatus   *string `json:"reporting_status"`
	ClearanceStatus   *string `json:"clearance_status"`
	ValidationResults struct {
		Status          string              `json:"status"`
		InfoMessages    []submissionMessage `json:"info_messages"`
		WarningMessages []submissionMessage `json:"warning_messages"`
		ErrorMessages   []submissionMessage `json:"error_messages"`
	} `json:"validation_results"`
	ClearedInvoice []byte  `json:"cleared_invoice"` // base64 in JSON
	QR             *string `json:"qr"`
	Sandbox        bool    `json:"sandbox"`
	Notice         string  `json:"notice"`
}

type submissionMessage struct {
	Type, Code, Category, Message, Status string
}

func messageCodes(ms []submissionMessage) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Code)
	}
	return out
}

func submitPath(id string) string { return "/v1/taxauth/invoices/" + id + "/submit" }

func submissionPath(id string) string { return "/v1/taxauth/invoices/" + id + "/submission" }

// submit submits document id and decodes the answer, which must be 200.
func submit(t testing.TB, env *apitest.Env, token, id string) (submission, *apitest.Response) {
	t.Helper()
	resp := env.Do(apitest.Request{Method: http.MethodPost, Path: submitPath(id), Token: token})
	if resp.Status != http.StatusOK {
		t.Fatalf("submit %s: %d %s", id, resp.Status, resp.Body)
	}
	var s submission
	if err := json.Unmarshal(resp.Body, &s); err != nil {
		t.Fatal(err)
	}
	return s, resp
}

// outcomeOf is the status a submission's mode reports it under.
func outcomeOf(s submission) string {
	if s.Mode == einvoice.ModeClearance {
		return *s.ClearanceStatus
	}
	return *s.ReportingStatus
}

// TestTaxSubmission is issue 27's submission: every kind submitted, simplified documents
// reported and standard ones cleared with a stamped copy that validates; a late report
// warned; a document failing validation rejected; a document submitted once; the archive
// filtered by the outcome; another organization and the operator refused.
func TestTaxSubmission(t *testing.T) {
	t.Parallel()
	f := newKindsFixture(t)
	env, org, token := f.env, f.org, f.token
	usage := func() int {
		return env.Count("SELECT count(*) FROM usage_events WHERE organization_id = $1 AND product = 'einvoice'", org)
	}
	before := usage()
	stranger := "dev:org:" + createOrganization(t, env, minimalOrganization)["id"].(string)

	// Refusals first: nothing of them may show in what follows.
	first := f.docs[0].Invoice.ID
	assertProblem(t, "another organization submits", env.Do(apitest.Request{Method: http.MethodPost, Path: submitPath(first), Token: stranger}),
		http.StatusNotFound, "not_found")
	assertProblem(t, "an unknown document", env.Do(apitest.Request{Method: http.MethodPost, Path: submitPath(uuid.NewString()), Token: token}),
		http.StatusNotFound, "not_found")
	assertProblem(t, "the operator submits", env.Do(apitest.Request{Method: http.MethodPost, Path: submitPath(first), Token: apitest.OperatorToken}),
		http.StatusForbidden, "forbidden")
	assertProblem(t, "not submitted yet", f.get(token, submissionPath(first)), http.StatusNotFound, "not_found")
	if n := env.Count("SELECT count(*) FROM tax_invoice_submissions"); n != 0 || usage() != before {
		t.Fatalf("a refusal stored %d submissions or counted usage", n)
	}
	if items, _ := f.list(t, token, "&submission_status=NOT_SUBMITTED"); len(items) != len(f.docs) {
		t.Fatalf("not submitted: %d documents, want %d", len(items), len(f.docs))
	}

	for _, d := range f.docs {
		kind := einvoiceKind(t, d.Invoice.Identity.InvoiceType)
		s, resp := submit(t, env, token, d.Invoice.ID)
		want := map[bool]string{false: einvoice.SubmissionReported, true: einvoice.SubmissionCleared}[kind.Standard]
		if s.InvoiceID != d.Invoice.ID || s.Kind != kind.Type || s.Mode != einvoice.SubmissionMode(kind) || s.SubmissionStatus != want ||
			outcomeOf(s) != want || !s.Sandbox || s.Notice != einvoice.Notice {
			t.Errorf("%s: %s", kind.Type, resp.Body)
		}
		if (s.ReportingStatus == nil) != kind.Standard || (s.ClearanceStatus == nil) == kind.Standard {
			t.Errorf("%s: the outcome under the other mode's field: %s", kind.Type, resp.Body)
		}
		v := s.ValidationResults
		if v.Status != einvoice.VerdictPass || len(v.ErrorMessages)+len(v.WarningMessages) > 0 ||
			!slices.Contains(messageCodes(v.InfoMessages), "SBX-SIG-00") || v.InfoMessages[0].Status != "PASS" || v.InfoMessages[0].Type != "INFO" {
			t.Errorf("%s: validation results %+v", kind.Type, v)
		}
		if kind.Standard {
			// The cleared copy: stamped again by the sandbox authority (the sandbox CA) with the
			// same invoice hash, and valid.
			cleared := string(s.ClearedInvoice)
			if !strings.Contains(cleared, d.Invoice.Identity.InvoiceHash) || s.QR == nil || !strings.Contains(cleared, *s.QR) ||
				signatureValue(cleared) == signatureValue(d.XML.Content) {
				t.Errorf("%s: the cleared document is not the document stamped again", kind.Type)
			}
			if r := validateXML(t, env, token, cleared); r.Status != "PASS" || !slices.Contains(r.codesOf("info"), "SBX-CERT-05") {
				t.Errorf("%s: the cleared document validates %s: %+v", kind.Type, r.Status, r.Results)
			}
		} else if s.ClearedInvoice != nil || s.QR != nil {
			t.Errorf("%s: a reported document has a cleared copy", kind.Type)
		}
		// Read back as answered.
		if got := f.get(token, submissionPath(d.Invoice.ID)); got.Status != http.StatusOK || string(got.Body) != string(resp.Body) {
			t.Errorf("%s: read back %d %s\nwant %s", kind.Type, got.Status, got.Body, resp.Body)
		}
		// Stored, audited, published.
		if n := env.Count("SELECT count(*) FROM tax_invoices WHERE id = $1 AND submission_status = $2", d.Invoice.ID, want); n != 1 {
			t.Errorf("%s: submission_status not %s", kind.Type, want)
		}
		if n := env.Count("SELECT count(*) FROM audit_events WHERE action = 'tax_invoice.submitted' AND resource_id = $1", d.Invoice.ID); n != 1 {
			t.Errorf("%s: %d audit events", kind.Type, n)
		}
		if n := env.Count("SELECT count(*) FROM webhook_events WHERE type = 'tax_invoice.submitted' AND data->>'invoice_id' = $1 AND data->>'submission_status' = $2",
			d.Invoice.ID, want); n != 1 {
			t.Errorf("%s: %d tax_invoice.submitted events", kind.Type, n)
		}
	}
	if n := usage() - before; n != len(f.docs) {
		t.Errorf("%d submissions counted, want %d", n, len(f.docs))
	}

	t.Run("SubmittedOnce", func(t *testing.T) {
		counted := usage()
		assertProblem(t, "a second submission", env.Do(apitest.Request{Method: http.MethodPost, Path: submitPath(first), Token: token}),
			http.StatusConflict, "invalid_state_transition")
		if n := env.Count("SELECT count(*) FROM tax_invoice_submissions WHERE tax_invoice_id = $1", first); n != 1 || usage() != counted {
			t.Errorf("the refused second submission stored (%d rows) or counted", n)
		}
	})

	t.Run("LateReport", func(t *testing.T) {
		// A document issued 30 hours ago (its stored issue time moved back; the XML keeps its
		// own, which validation does not compare with the clock).
		late := generateInvoice(t, env, token, invoiceBody(t, org, nil)).Invoice.ID
		env.Exec("UPDATE tax_invoices SET issued_at = issued_at - interval '30 hours' WHERE id = $1", late)
		s, resp := submit(t, env, token, late)
		if s.SubmissionStatus != einvoice.SubmissionReported || s.ValidationResults.Status != einvoice.VerdictWarning ||
			!slices.Equal(messageCodes(s.ValidationResults.WarningMessages), []string{einvoice.RuleLateReporting}) ||
			s.ValidationResults.WarningMessages[0].Category != einvoice.CategoryReporting || s.ValidationResults.WarningMessages[0].Status != "WARNING" {
			t.Errorf("a late report: %s", resp.Body)
		}
	})

	t.Run("FailingValidation", func(t *testing.T) {
		// Documents changed after they were stored (the generator issues only documents that
		// pass): the authority rejects them, and says why.
		simplified := generateInvoice(t, env, token, invoiceBody(t, org, nil)).Invoice.ID
		standard := generateAt(t, env, standardInvoicePath, token, standardBody(t, org, einvoice.TypeStandard, nil)).Invoice.ID
		for id, want := range map[string]string{simplified: einvoice.SubmissionNotReported, standard: einvoice.SubmissionNotCleared} {
			env.Exec(`UPDATE tax_invoices SET xml = regexp_replace(xml, '(<cbc:TaxInclusiveAmount currencyID="SAR">)', '\11') WHERE id = $1`, id)
			s, resp := submit(t, env, token, id)
			if s.SubmissionStatus != want || outcomeOf(s) != want || s.ValidationResults.Status != einvoice.VerdictError || s.ClearedInvoice != nil ||
				!slices.Contains(messageCodes(s.ValidationResults.ErrorMessages), "BR-CO-15") || s.ValidationResults.ErrorMessages[0].Status != "ERROR" {
				t.Errorf("a changed document: %s", resp.Body)
			}
			items, _ := f.list(t, token, "&submission_status="+want)
			if len(items) != 1 || items[0]["id"] != id {
				t.Errorf("the archive under %s: %v", want, items)
			}
		}
	})

	t.Run("Archive", func(t *testing.T) {
		for status, n := range map[string]int{einvoice.SubmissionCleared: 3} {
			if items, _ := f.list(t, token, "&submission_status="+status); len(items) != n {
				t.Errorf("%s: %d documents, want %d", status, len(items), n)
			}
		}
		items, _ := f.list(t, token, "&submission_status=REPORTED&kind="+einvoice.TypeSimplifiedCreditNote)
		if len(items) != 1 || items[0]["id"] != f.docs[2].Invoice.ID {
			t.Errorf("reported credit notes: %v", items)
		}
		assertProblem(t, "an unknown status", f.get(token, archivePath+"?organization_id="+org+"&submission_status=SENT"), http.StatusBadRequest, "validation_failed")
	})

	t.Run("Readers", func(t *testing.T) {
		if r := f.get(apitest.OperatorToken, submissionPath(first)); r.Status != http.StatusOK {
			t.Errorf("the operator reads a submission: %d", r.Status)
		}
		assertProblem(t, "another organization reads", f.get(stranger, submissionPath(first)), http.StatusNotFound, "not_found")
	})
}

// TestTaxSubmissionScopesIdempotencyAndGate: who may submit and read by scope; a replay
// answers the first result and counts once; the einvoice entitlement rules apply, and their
// withdrawal is obeyed by the very next request.
func TestTaxSubmissionScopesIdempotencyAndGate(t *testing.T) {
	t.Parallel()
	f := newKeyFixture(t)
	env, token := f.env, "dev:org:"+f.orgID
	docs := []string{
		generateInvoice(t, env, token, invoiceBody(t, f.orgID, nil)).Invoice.ID,
		generateInvoice(t, env, token, invoiceBody(t, f.orgID, nil)).Invoice.ID,
	}
	generateOnly := f.createKey(t, []string{"invoice:generate"}, nil)["full_key"].(string)
	submitter := f.createKey(t, []string{"invoice:submit"}, nil)["full_key"].(string)
	archivist := f.createKey(t, []string{"invoice:archive"}, nil)["full_key"].(string)
	assertProblem(t, "invoice:generate submits", env.Do(apitest.Request{Method: http.MethodPost, Path: submitPath(docs[0]), Token: generateOnly}),
		http.StatusForbidden, "insufficient_scope")

	usage := env.Count("SELECT count(*) FROM usage_events WHERE organization_id = $1", f.orgID)
	key := http.Header{"Idempotency-Key": {uuid.NewString()}}
	send := func(h http.Header) *apitest.Response {
		return env.Do(apitest.Request{Method: http.MethodPost, Path: submitPath(docs[0]), Token: submitter, Header: h})
	}
	first, replay := send(key), send(key)
	if first.Status != http.StatusOK || replay.Status != http.StatusOK || replay.Header.Get("Idempotent-Replayed") != "true" || string(replay.Body) != string(first.Body) {
		t.Fatalf("replay: %d %d %q", first.Status, replay.Status, replay.Header.Get("Idempotent-Replayed"))
	}
	if n := env.Count("SELECT count(*) FROM usage_events WHERE organization_id = $1", f.orgID); n != usage+1 {
		t.Errorf("a replayed submission counted %d times", n-usage)
	}
	assertProblem(t, "another key, the same document", send(http.Header{"Idempotency-Key": {uuid.NewString()}}), http.StatusConflict, "invalid_state_transition")
	for _, reader := range []string{submitter, archivist} {
		if r := f.get(reader, submissionPath(docs[0])); r.Status != http.StatusOK || string(r.Body) != string(first.Body) {
			t.Errorf("read with another scope: %d", r.Status)
		}
	}
	assertProblem(t, "invoice:generate reads", f.get(generateOnly, submissionPath(docs[0])), http.StatusForbidden, "insufficient_scope")

	patchStanding(t, env, f.orgID, `{"lifecycle_status":"suspended"}`)
	assertProblem(t, "suspended, very next request", env.Do(apitest.Request{Method: http.MethodPost, Path: submitPath(docs[1]), Token: submitter}),
		http.StatusForbidden, "organization_suspended")
	if n := env.Count("SELECT count(*) FROM tax_invoices WHERE id = $1 AND submission_status = 'NOT_SUBMITTED'", docs[1]); n != 1 {
		t.Error("a refused submission changed the document")
	}
}

var (
	_ = reachable("TaxInvoiceSubmissionStatus", "REPORTED", func(t *testing.T, env *apitest.Env) map[string]any {
		return submitFresh(t, env, invoicePath, func(org string) string { return invoiceBody(t, org, nil) })
	})
	_ = reachable("TaxInvoiceSubmissionStatus", "CLEARED", func(t *testing.T, env *apitest.Env) map[string]any {
		return submitFresh(t, env, standardInvoicePath, func(org string) string { return standardBody(t, org, einvoice.TypeStandard, nil) })
	})
)

// submitFresh generates a document for a new organization at path and submits it.
func submitFresh(t *testing.T, env *apitest.Env, path string, body func(org string) string) map[string]any {
	org := createOrganization(t, env, minimalOrganization)["id"].(string)
	token := "dev:org:" + org
	_, resp := submit(t, env, token, generateAt(t, env, path, token, body(org)).Invoice.ID)
	return resp.JSON(t)
}
