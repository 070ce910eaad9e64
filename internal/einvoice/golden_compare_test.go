package einvoice_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/provider/coreapi/internal/einvoice"
)

// TestGenerate_SameAsTree compares the streaming renderer with the etree one it replaces, byte
// for byte, on every kind and on text that needs escaping or replacing.
func TestGenerate_SameAsTree(t *testing.T) {
	key, err := einvoice.NewSandboxKey("0193b5e2-4a1c-7d2e-8f30-5a6b7c8d9e01", certificatesIssuedAt)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]einvoice.Request{}
	for _, k := range einvoice.Kinds {
		cases[k.Type] = requestOf(k, sampleRequest())
	}
	odd := sampleRequest()
	odd.Seller.LegalName = "A & B <c> 'q' \"d\" \r\n\t tab \x01 ctl \xff bad \uFFFE nonchar \U0001F600 " + strings.Repeat("long ", 60)
	odd.Notes = map[string]string{"en": "", "ar": "   ", "fr/x~y": "a]]>b"}
	odd.Lines[0].Description = ptr("")
	odd.Lines[1].NameEn = "  "
	odd.Buyer = nil
	cases["odd"] = odd
	bare := sampleRequest()
	bare.Supply, bare.Notes, bare.Buyer = nil, nil, nil
	bare.Seller.Address, bare.Seller.CommercialRegistration, bare.Seller.Identifiers = nil, nil, nil
	cases["bare"] = bare
	many := sampleRequest()
	for i := 0; i < 40; i++ {
		l := many.Lines[i%5]
		l.ID = strings.Repeat("x", i%3+1)
		many.Lines = append(many.Lines, l)
	}
	cases["many"] = many
	for name, req := range cases {
		d, err := einvoice.Prepare(req)
		if err != nil {
			t.Fatal(err)
		}
		id := einvoice.Identity{Number: "SINV-&<1>", UUID: "6f0b8a3e-2c1d-4e5f-9a8b-7c6d5e4f3a2b", ICV: 7, PIH: einvoice.FirstPIH,
			IssuedAt: time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC)}
		got, err := d.Generate(id, key)
		if err != nil {
			t.Fatal(err)
		}
		want, err := d.GenerateTree(id, key)
		if err != nil {
			t.Fatal(err)
		}
		if got.XML != want.XML {
			i := 0
			for i < len(got.XML) && i < len(want.XML) && got.XML[i] == want.XML[i] {
				i++
			}
			t.Errorf("%s: documents differ at byte %d:\n got …%s\nwant …%s", name, i, got.XML[max(0, i-200):min(len(got.XML), i+200)], want.XML[max(0, i-200):min(len(want.XML), i+200)])
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: invoices differ:\n got %+v\nwant %+v", name, got, want)
		}
	}
}
