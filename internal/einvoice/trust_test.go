package einvoice_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/provider/coreapi/internal/einvoice"
	"github.com/provider/coreapi/internal/einvoice/egstest"
)

// unitKey is an EGS unit's stamping key whose certificate ca issued.
func unitKey(t *testing.T, ca *einvoice.SandboxCA) *einvoice.SandboxKey {
	t.Helper()
	private, _ := egstest.NewKey()
	csr, problems := einvoice.ParseCSR(egstest.CSR(private, egstest.Example))
	if problems != nil {
		t.Fatal(problems)
	}
	cert, err := ca.Issue(csr, time.Now(), 1)
	if err != nil {
		t.Fatal(err)
	}
	key, err := einvoice.LoadSandboxKey(private.Serialize(), cert)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// stampedAt is a standard invoice stamped with key, issued and signed at at.
func stampedAt(t *testing.T, key *einvoice.SandboxKey, at time.Time) []byte {
	t.Helper()
	d, err := einvoice.Prepare(requestOf(kind(t, einvoice.TypeStandard), sampleRequest()))
	if err != nil {
		t.Fatal(err)
	}
	inv, err := d.Generate(einvoice.Identity{Number: "U-1", UUID: "6f0b8a3e-2c1d-4e5f-9a8b-7c6d5e4f3a2b", ICV: 1, PIH: einvoice.FirstPIH, IssuedAt: at}, key)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(inv.XML)
}

func newCA(t *testing.T) *einvoice.SandboxCA {
	t.Helper()
	ca, err := einvoice.NewSandboxCA(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// TestValidateXML_SandboxCAChain: a document stamped with a unit certificate of the sandbox
// CA is checked against the CA (SBX-CERT-04, no warning); a unit certificate of another CA,
// even one with the same name, keeps the warning SBX-CERT-02, as does any sandbox
// certificate when the validator is given no CA.
func TestValidateXML_SandboxCAChain(t *testing.T) {
	t.Parallel()
	ca, impostor := newCA(t), newCA(t)
	ours, theirs := stampedAt(t, unitKey(t, ca), time.Now()), stampedAt(t, unitKey(t, impostor), time.Now())
	for _, c := range []struct {
		name          string
		doc           []byte
		trust         einvoice.Trust
		info, warning []string
	}{
		{"unit of the sandbox CA", ours, einvoice.Trust{SandboxCA: ca.Certificate}, []string{"SBX-CERT-04"}, nil},
		{"unit of another CA of the same name", theirs, einvoice.Trust{SandboxCA: ca.Certificate}, nil, []string{"SBX-CERT-02"}},
		{"no CA known", ours, einvoice.Trust{}, nil, []string{"SBX-CERT-02"}},
	} {
		rep, err := testValidator(t).ValidateXML(c.doc, c.trust)
		if err != nil {
			t.Fatal(err)
		}
		if errs := codes(rep, einvoice.ResultError); len(errs) > 0 {
			t.Errorf("%s: errors %v", c.name, errs)
		}
		if got := codes(rep, einvoice.ResultWarning); !slices.Equal(got, c.warning) {
			t.Errorf("%s: warnings %v, want %v", c.name, got, c.warning)
		}
		for _, code := range c.info {
			if !slices.Contains(codes(rep, einvoice.ResultInfo), code) {
				t.Errorf("%s: no %s in %+v", c.name, code, rep.Results)
			}
		}
	}
}

// TestValidateXML_CertificateAtSigning: the certificate is judged at the document's signing
// time. Signed outside the certificate's validity is an error (SBX-CERT-06); an EGS unit's
// certificate revoked after the signing leaves the document valid with a warning
// (SBX-CERT-07), one signed at or after the revocation is an error (SBX-CERT-08); a
// revocation list that cannot be read ends the validation with its error.
func TestValidateXML_CertificateAtSigning(t *testing.T) {
	t.Parallel()
	issued := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	ca, err := einvoice.NewSandboxCA(issued)
	if err != nil {
		t.Fatal(err)
	}
	private, _ := egstest.NewKey()
	csr, problems := einvoice.ParseCSR(egstest.CSR(private, egstest.Example))
	if problems != nil {
		t.Fatal(problems)
	}
	cert, err := ca.Issue(csr, issued, 1) // valid 2025-01-01 to 2026-01-01
	if err != nil {
		t.Fatal(err)
	}
	key, err := einvoice.LoadSandboxKey(private.Serialize(), cert)
	if err != nil {
		t.Fatal(err)
	}
	signed := func(at time.Time) []byte { return stampedAt(t, key, at) }
	revokedAt := func(at time.Time) func([]byte) (time.Time, bool, error) {
		return func(der []byte) (time.Time, bool, error) {
			if !slices.Equal(der, cert) {
				t.Errorf("the revocation list was asked about another certificate")
			}
			return at, true, nil
		}
	}
	revocations := revokedAt(time.Date(2025, 6, 1, 12, 0, 0, 500_000_000, time.UTC))
	notRevoked := func([]byte) (time.Time, bool, error) { return time.Time{}, false, nil }
	for _, c := range []struct {
		name           string
		signedAt       time.Time
		revoked        func([]byte) (time.Time, bool, error)
		errs, warnings []string
	}{
		{"within validity", time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC), notRevoked, nil, nil},
		{"no revocation list", time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC), nil, nil, nil},
		{"before the certificate", time.Date(2024, 12, 31, 23, 59, 59, 0, time.UTC), notRevoked, []string{"SBX-CERT-06"}, nil},
		{"after the certificate", time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC), notRevoked, []string{"SBX-CERT-06"}, nil},
		{"before the revocation", time.Date(2025, 6, 1, 11, 59, 59, 0, time.UTC), revocations, nil, []string{"SBX-CERT-07"}},
		{"in the revocation's second, before its fraction", time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC), revocations, nil, []string{"SBX-CERT-07"}},
		{"at the revocation", time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC), revokedAt(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)), []string{"SBX-CERT-08"}, nil},
		{"a second after the revocation", time.Date(2025, 6, 1, 12, 0, 1, 0, time.UTC), revocations, []string{"SBX-CERT-08"}, nil},
		{"after the revocation", time.Date(2025, 9, 1, 0, 0, 0, 0, time.UTC), revocations, []string{"SBX-CERT-08"}, nil},
	} {
		rep, err := testValidator(t).ValidateXML(signed(c.signedAt), einvoice.Trust{SandboxCA: ca.Certificate, RevokedAt: c.revoked})
		if err != nil {
			t.Fatal(err)
		}
		// BR-KSA-04 (an issue date in the future) does not apply to these past dates.
		if got := codes(rep, einvoice.ResultError); !slices.Equal(got, c.errs) {
			t.Errorf("%s: errors %v, want %v: %+v", c.name, got, c.errs, rep.Results)
		}
		if got := codes(rep, einvoice.ResultWarning); !slices.Equal(got, c.warnings) {
			t.Errorf("%s: warnings %v, want %v", c.name, got, c.warnings)
		}
	}
	failing := errors.New("the list is unreadable")
	_, err = testValidator(t).ValidateXML(signed(time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC)), einvoice.Trust{SandboxCA: ca.Certificate,
		RevokedAt: func([]byte) (time.Time, bool, error) { return time.Time{}, false, failing }})
	if !errors.Is(err, failing) {
		t.Errorf("a failing revocation list: %v, want its error", err)
	}
}
