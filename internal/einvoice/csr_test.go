package einvoice_test

import (
	"encoding/asn1"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/provider/coreapi/internal/einvoice"
	"github.com/provider/coreapi/internal/einvoice/egstest"
)

func TestParseCSR_Fields(t *testing.T) {
	t.Parallel()
	key, _ := egstest.NewKey()
	csr, problems := einvoice.ParseCSR(egstest.CSR(key, egstest.Example))
	if problems != nil {
		t.Fatalf("problems: %v", problems)
	}
	want := einvoice.EGSFields{
		CommonName: "TST-886431145-399999999900003", SerialNumber: "1-TST|2-TST|3-ed22f1d8-e6a2-1118-9b58-d9a8f11e445f",
		VATNumber: "399999999900003", OrganizationUnit: "Riyadh Branch", OrganizationName: "Maximum Speed Tech Supply LTD",
		Country: "SA", InvoiceTypes: "1100", Location: "RRRD2929", Industry: "Supply activities",
	}
	if csr.Fields != want {
		t.Errorf("fields = %+v, want %+v", csr.Fields, want)
	}
	if !csr.PublicKey.IsEqual(key.PubKey()) {
		t.Error("the public key is not the CSR's")
	}
	if !csr.Fields.Standard() || !csr.Fields.Simplified() {
		t.Error("1100 declares both families")
	}
}

// TestParseCSR_Problems changes one field at a time and expects exactly that field named.
func TestParseCSR_Problems(t *testing.T) {
	t.Parallel()
	key, _ := egstest.NewKey()
	for _, tc := range []struct {
		name  string
		edit  func(*egstest.Fields)
		field string
	}{
		{"no common name", func(f *egstest.Fields) { f.CommonName = "" }, "common_name"},
		{"serial without parts", func(f *egstest.Fields) { f.SerialNumber = "ABC-123" }, "serial_number"},
		{"serial missing part 3", func(f *egstest.Fields) { f.SerialNumber = "1-TST|2-TST" }, "serial_number"},
		{"no serial", func(f *egstest.Fields) { f.SerialNumber = "" }, "serial_number"},
		{"VAT of 14 digits", func(f *egstest.Fields) { f.VATNumber = "39999999990003" }, "vat_number"},
		{"VAT not starting with 3", func(f *egstest.Fields) { f.VATNumber = "199999999900003" }, "vat_number"},
		{"VAT group without TIN", func(f *egstest.Fields) { f.VATNumber = "399999999910003" }, "organization_unit_name"},
		{"no organization", func(f *egstest.Fields) { f.OrganizationName = "" }, "organization_name"},
		{"country of 3 letters", func(f *egstest.Fields) { f.Country = "SAU" }, "country"},
		{"invoice types 0000", func(f *egstest.Fields) { f.InvoiceTypes = "0000" }, "invoice_types"},
		{"invoice types reserved", func(f *egstest.Fields) { f.InvoiceTypes = "1111" }, "invoice_types"},
		{"invoice types text", func(f *egstest.Fields) { f.InvoiceTypes = "TSCZ" }, "invoice_types"},
		{"no location", func(f *egstest.Fields) { f.Location = "" }, "location"},
		{"no industry", func(f *egstest.Fields) { f.Industry = "" }, "industry"},
		{"industry too long", func(f *egstest.Fields) { f.Industry = strings.Repeat("x", 201) }, "industry"},
	} {
		f := egstest.Example
		tc.edit(&f)
		csr, problems := einvoice.ParseCSR(egstest.CSR(key, f))
		if csr != nil || len(problems) != 1 || problems[0].Field != tc.field || problems[0].Message == "" {
			t.Errorf("%s: problems = %+v, want one at %s", tc.name, problems, tc.field)
		}
	}
	group := egstest.Example
	group.VATNumber, group.OrganizationUnit = "399999999910003", "3999999999"
	if _, problems := einvoice.ParseCSR(egstest.CSR(key, group)); problems != nil {
		t.Errorf("a VAT group member's TIN: %v", problems)
	}
}

func TestParseCSR_NotACSR(t *testing.T) {
	t.Parallel()
	key, _ := egstest.NewKey()
	good := egstest.CSR(key, egstest.Example)
	other, _ := egstest.NewKey()
	forged := egstest.CSR(other, egstest.Example)
	for name, tc := range map[string]struct{ text, field string }{
		"empty":           {"", "csr"},
		"not PEM":         {"hello", "csr"},
		"a key":           {"-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n", "csr"},
		"garbage DER":     {"-----BEGIN CERTIFICATE REQUEST-----\nMAMCAQE=\n-----END CERTIFICATE REQUEST-----\n", "csr"},
		"truncated":       {good[:len(good)/2] + "\n-----END CERTIFICATE REQUEST-----\n", "csr"},
		"too long":        {strings.Repeat("A", 20000), "csr"},
		"other signature": {swapSignature(t, good, forged), "signature"},
	} {
		csr, problems := einvoice.ParseCSR(tc.text)
		if csr != nil || len(problems) == 0 || problems[0].Field != tc.field {
			t.Errorf("%s: problems = %+v, want %s", name, problems, tc.field)
		}
	}
}

// TestParseCSR_OpenSSL reads a CSR made by openssl from the authority's CSR config (the
// fields of its English example), and its key, as an integrator makes them.
func TestParseCSR_OpenSSL(t *testing.T) {
	t.Parallel()
	keyPEM, csrPEM := opensslCSR(t)
	csr, problems := einvoice.ParseCSR(csrPEM)
	if problems != nil {
		t.Fatalf("problems: %v", problems)
	}
	if csr.Fields.SerialNumber != egstest.Example.SerialNumber || csr.Fields.VATNumber != egstest.Example.VATNumber ||
		csr.Fields.InvoiceTypes != "1100" || csr.Fields.Industry != "Supply activities" || csr.Fields.CommonName != egstest.Example.CommonName {
		t.Errorf("fields = %+v", csr.Fields)
	}
	key, err := einvoice.ParsePrivateKey(keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	if !key.PubKey().IsEqual(csr.PublicKey) {
		t.Error("the openssl key is not the CSR's")
	}
}

// opensslCSR makes a secp256k1 key and a CSR of egstest.Example with openssl.
func opensslCSR(t *testing.T) (keyPEM, csrPEM string) {
	t.Helper()
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Fatal("openssl is required to make CSRs as integrators do")
	}
	dir := t.TempDir()
	f := egstest.Example
	config := `[req]
prompt = no
utf8 = yes
distinguished_name = dn
req_extensions = v3_req
[dn]
C=` + f.Country + `
OU=` + f.OrganizationUnit + `
O=` + f.OrganizationName + `
CN=` + f.CommonName + `
[v3_req]
1.3.6.1.4.1.311.20.2 = ASN1:PRINTABLESTRING:TSTZATCA-Code-Signing
subjectAltName = dirName:alt_names
[alt_names]
SN=` + f.SerialNumber + `
UID=` + f.VATNumber + `
title=` + f.InvoiceTypes + `
registeredAddress=` + f.Location + `
businessCategory=` + f.Industry + `
`
	cnf := writeTemp(t, "csr.cnf", []byte(config))
	key, csr := filepath.Join(dir, "key.pem"), filepath.Join(dir, "csr.pem")
	run(t, "openssl", "ecparam", "-name", "secp256k1", "-genkey", "-noout", "-out", key)
	run(t, "openssl", "req", "-new", "-sha256", "-key", key, "-config", cnf, "-out", csr)
	return readFile(t, key), readFile(t, csr)
}

func TestParsePrivateKey(t *testing.T) {
	t.Parallel()
	key, keyPEM := egstest.NewKey()
	got, err := einvoice.ParsePrivateKey(keyPEM)
	if err != nil || !got.PubKey().IsEqual(key.PubKey()) {
		t.Fatalf("SEC 1 key: %v", err)
	}
	for name, text := range map[string]string{
		"empty":   "",
		"CSR":     egstest.CSR(key, egstest.Example),
		"garbage": "-----BEGIN EC PRIVATE KEY-----\nMAMCAQE=\n-----END EC PRIVATE KEY-----\n",
		"P-256":   string(run(t, "openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout")),
	} {
		if _, err := einvoice.ParsePrivateKey(text); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestSandboxCA_Issue checks a unit certificate with openssl: it chains to the sandbox CA
// and carries the CSR's subject and onboarding fields.
func TestSandboxCA_Issue(t *testing.T) {
	t.Parallel()
	ca, err := einvoice.NewSandboxCA(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	key, _ := egstest.NewKey()
	csr, _ := einvoice.ParseCSR(egstest.CSR(key, egstest.Example))
	cert, err := ca.Issue(csr, time.Now(), 1)
	if err != nil {
		t.Fatal(err)
	}
	caFile, certFile := writeTemp(t, "ca.der", ca.Certificate), writeTemp(t, "cert.der", cert)
	caPEM := writeTemp(t, "ca.pem", run(t, "openssl", "x509", "-inform", "DER", "-in", caFile))
	certPEM := writeTemp(t, "cert.pem", run(t, "openssl", "x509", "-inform", "DER", "-in", certFile))
	if out := string(run(t, "openssl", "verify", "-CAfile", caPEM, certPEM)); !strings.Contains(out, ": OK") {
		t.Errorf("openssl verify: %s", out)
	}
	text := string(run(t, "openssl", "x509", "-in", certPEM, "-noout", "-text"))
	for _, want := range []string{"CN = TST-886431145-399999999900003", "SANDBOX-EINVOICE-CA", "1-TST|2-TST|3-ed22f1d8", "399999999900003", "1100", "Supply activities", "secp256k1", einvoice.SandboxTemplate} {
		if !strings.Contains(text, want) {
			t.Errorf("the certificate does not show %q:\n%s", want, text)
		}
	}
}

// FuzzParseCSR: any text gives a CSR or problems, never a panic, and problems always name a
// field and say why.
func FuzzParseCSR(f *testing.F) {
	key, _ := egstest.NewKey()
	good := egstest.CSR(key, egstest.Example)
	f.Add(good)
	f.Add("")
	f.Add("-----BEGIN CERTIFICATE REQUEST-----\nMAMCAQE=\n-----END CERTIFICATE REQUEST-----\n")
	f.Add(good[:200])
	f.Fuzz(func(t *testing.T, text string) {
		csr, problems := einvoice.ParseCSR(text)
		if (csr == nil) == (problems == nil) {
			t.Fatalf("csr %v with problems %v", csr, problems)
		}
		for _, p := range problems {
			if p.Field == "" || p.Message == "" || len(p.Message) > 400 {
				t.Fatalf("problem %+v", p)
			}
		}
	})
}

// swapSignature is good's request with other's signature: its key does not verify it.
func swapSignature(t *testing.T, good, other string) string {
	t.Helper()
	type request struct {
		Info, Algorithm asn1.RawValue
		Signature       asn1.BitString
	}
	var a, b request
	blockA, _ := pem.Decode([]byte(good))
	blockB, _ := pem.Decode([]byte(other))
	if _, err := asn1.Unmarshal(blockA.Bytes, &a); err != nil {
		t.Fatal(err)
	}
	if _, err := asn1.Unmarshal(blockB.Bytes, &b); err != nil {
		t.Fatal(err)
	}
	a.Signature = b.Signature
	der, err := asn1.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
}

// run runs a tool the test depends on and returns its output; a failure fails the test.
func run(t testing.TB, name string, args ...string) []byte {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		var stderr []byte
		if exit, ok := err.(*exec.ExitError); ok {
			stderr = exit.Stderr
		}
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr)
	}
	return out
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
