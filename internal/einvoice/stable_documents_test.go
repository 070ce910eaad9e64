package einvoice_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/beevik/etree"

	"github.com/provider/coreapi/internal/einvoice"
)

var updateDocuments = flag.Bool("update-documents", false, "rewrite testdata/stable-documents.sha256 from the documents generated now")

// TestGenerate_StableDocuments checks that the generator writes the same bytes as when the
// digests in testdata/stable-documents.sha256 were taken (first from the etree renderer the
// streaming one replaced): every kind, and text that needs escaping or replacing. The key is
// fixed (testdata/stable-documents.key, a test key) and the signature deterministic (RFC 6979),
// so a changed digest is a changed document: when the change is meant, run the test with
// -update-documents and say why in the commit.
func TestGenerate_StableDocuments(t *testing.T) {
	t.Parallel()
	key := stableDocumentsKey(t)
	var got []string
	for _, c := range stableDocumentCases() {
		d, err := einvoice.Prepare(c.req)
		if err != nil {
			t.Fatal(err)
		}
		inv, err := d.Generate(stableIdentity, key)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(inv.XML))
		got = append(got, fmt.Sprintf("%x  %s", sum, c.name))
		// The hash is of the text a reader parses, whatever the request's texts held.
		doc := etree.NewDocument()
		if err := doc.ReadFromString(inv.XML); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if _, hash, err := einvoice.InvoiceHash(doc); err != nil || hash != inv.Hash {
			t.Errorf("%s: the parsed document hashes to %s (%v), the generated one to %s", c.name, hash, err, inv.Hash)
		}
	}
	const path = "testdata/stable-documents.sha256"
	if *updateDocuments {
		if err := os.WriteFile(path, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSpace(string(b)), "\n")
	for _, line := range got {
		if !slices.Contains(want, line) {
			t.Errorf("generated document %s: not the document of %s", line, path)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d cases, %s has %d", len(got), path, len(want))
	}
}

var stableIdentity = einvoice.Identity{Number: "SINV-&<1>", UUID: "6f0b8a3e-2c1d-4e5f-9a8b-7c6d5e4f3a2b", ICV: 7, PIH: einvoice.FirstPIH,
	IssuedAt: time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC)}

func stableDocumentsKey(t *testing.T) *einvoice.SandboxKey {
	t.Helper()
	b, err := os.ReadFile("testdata/stable-documents.key")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(b))
	private, err := hex.DecodeString(lines[0])
	if err != nil {
		t.Fatal(err)
	}
	certificate, err := base64.StdEncoding.DecodeString(lines[1])
	if err != nil {
		t.Fatal(err)
	}
	key, err := einvoice.LoadSandboxKey(private, certificate)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

type stableDocumentCase struct {
	name string
	req  einvoice.Request
}

// stableDocumentCases are every kind of the sample request, and requests with what the
// renderer must escape, replace or leave out.
func stableDocumentCases() []stableDocumentCase {
	var cases []stableDocumentCase
	for _, k := range einvoice.Kinds {
		cases = append(cases, stableDocumentCase{k.Type, requestOf(k, sampleRequest())})
	}
	odd := sampleRequest()
	odd.Seller.LegalName = "A & B <c> 'q' \"d\" \r\n\t tab \x01 ctl \xff bad \uFFFE nonchar \U0001F600 " + strings.Repeat("long ", 60)
	odd.Notes = map[string]string{"en": "", "ar": "   ", "fr/x~y": "a]]>b"}
	odd.Lines[0].Description = ptr("")
	odd.Lines[1].NameEn = "  "
	odd.Buyer = nil
	bare := sampleRequest()
	bare.Supply, bare.Notes, bare.Buyer = nil, nil, nil
	bare.Seller.Address, bare.Seller.CommercialRegistration, bare.Seller.Identifiers = nil, nil, nil
	many := sampleRequest()
	for i := range 40 {
		l := many.Lines[i%5]
		l.ID = strings.Repeat("x", i%3+1)
		many.Lines = append(many.Lines, l)
	}
	return append(cases, stableDocumentCase{"odd", odd}, stableDocumentCase{"bare", bare}, stableDocumentCase{"many", many})
}
