package einvoice_test

import (
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
	stamp := func(key *einvoice.SandboxKey) []byte {
		d, err := einvoice.Prepare(requestOf(kind(t, einvoice.TypeStandard), sampleRequest()))
		if err != nil {
			t.Fatal(err)
		}
		inv, err := d.Generate(einvoice.Identity{Number: "U-1", UUID: "6f0b8a3e-2c1d-4e5f-9a8b-7c6d5e4f3a2b", ICV: 1, PIH: einvoice.FirstPIH, IssuedAt: time.Now()}, key)
		if err != nil {
			t.Fatal(err)
		}
		return []byte(inv.XML)
	}
	ours, theirs := stamp(unitKey(t, ca)), stamp(unitKey(t, impostor))
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
