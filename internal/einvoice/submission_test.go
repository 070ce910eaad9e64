package einvoice_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/provider/coreapi/internal/einvoice"
)

func kind(t testing.TB, typ string) einvoice.Kind {
	t.Helper()
	k, ok := einvoice.KindOf(typ)
	if !ok {
		t.Fatalf("no kind %q", typ)
	}
	return k
}

func TestLateReporting(t *testing.T) {
	issued := time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC)
	for _, c := range []struct {
		name  string
		typ   string
		after time.Duration
		late  bool
	}{
		{"at once", einvoice.TypeSimplified, 0, false},
		{"exactly 24 hours", einvoice.TypeSimplified, 24 * time.Hour, false},
		{"a second later", einvoice.TypeSimplified, 24*time.Hour + time.Second, true},
		{"a note, 30 hours", einvoice.TypeSimplifiedCreditNote, 30 * time.Hour, true},
		{"standard documents are cleared, never late", einvoice.TypeStandard, 30 * time.Hour, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, late := einvoice.LateReporting(kind(t, c.typ), issued, issued.Add(c.after))
			if late != c.late {
				t.Fatalf("late %v, want %v", late, c.late)
			}
			if late && (r.Type != einvoice.ResultWarning || r.Code != einvoice.RuleLateReporting || r.Category != einvoice.CategoryReporting ||
				!strings.Contains(r.Message, "2025-03-01T09:30:00Z")) {
				t.Errorf("the warning: %+v", r)
			}
		})
	}
}

func TestSubmissionOutcome(t *testing.T) {
	warning := einvoice.Report{Results: []einvoice.Result{{Type: einvoice.ResultWarning, Code: "W"}}}
	failing := einvoice.Report{Results: []einvoice.Result{{Type: einvoice.ResultWarning, Code: "W"}, {Type: einvoice.ResultError, Code: "E"}}}
	for _, c := range []struct {
		typ    string
		report einvoice.Report
		want   string
	}{
		{einvoice.TypeSimplified, einvoice.Report{}, einvoice.SubmissionReported},
		{einvoice.TypeSimplifiedDebitNote, warning, einvoice.SubmissionReported},
		{einvoice.TypeSimplified, failing, einvoice.SubmissionNotReported},
		{einvoice.TypeStandard, warning, einvoice.SubmissionCleared},
		{einvoice.TypeStandardCreditNote, failing, einvoice.SubmissionNotCleared},
	} {
		if got := einvoice.SubmissionOutcome(kind(t, c.typ), c.report); got != c.want {
			t.Errorf("%s with %+v: %s, want %s", c.typ, c.report.Results, got, c.want)
		}
	}
}

// TestRestamp: the cleared document is stamped by the sandbox authority (the CA's own key and
// certificate, a fresh XAdES signature signed at clearance) and passes validation against
// the CA; the invoice hash and everything it covers are unchanged. A stamp of the layout
// before XAdES is replaced by a complete one.
func TestRestamp(t *testing.T) {
	inv, _ := generate(t, requestOf(kind(t, einvoice.TypeStandard), sampleRequest()))
	ca, err := einvoice.NewSandboxCA(certificatesIssuedAt)
	if err != nil {
		t.Fatal(err)
	}
	clearedAt := time.Date(2026, 11, 25, 1, 2, 3, 0, time.UTC)
	withoutXAdES := regexp.MustCompile(`(?s)<ds:Object>.*</ds:Object>`).ReplaceAllString(inv.XML, "")
	for name, doc := range map[string]string{"XAdES": inv.XML, "before XAdES": withoutXAdES} {
		xml, qr, err := einvoice.Restamp(doc, ca.StampingKey(), clearedAt)
		if err != nil {
			t.Fatal(err)
		}
		if xml == doc || qr == inv.QR || !strings.Contains(xml, qr) || !strings.Contains(xml, inv.Hash) ||
			!strings.Contains(xml, "<xades:SigningTime>2026-11-25T01:02:03</xades:SigningTime>") {
			t.Fatalf("%s: the document was not stamped again at clearance, or its hash changed", name)
		}
		rep, err := testValidator(t).ValidateXML([]byte(xml), einvoice.Trust{SandboxCA: ca.Certificate})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Verdict() != einvoice.VerdictPass || !slices.Contains(codes(rep, einvoice.ResultInfo), "SBX-CERT-05") {
			t.Errorf("%s: the restamped document: %+v", name, rep.Results)
		}
	}
	if _, _, err := einvoice.Restamp("<Invoice/>", ca.StampingKey(), clearedAt); err == nil {
		t.Error("a document without a stamp was restamped")
	}
}
