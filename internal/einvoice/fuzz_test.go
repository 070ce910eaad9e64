package einvoice_test

import (
	"encoding/base64"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/beevik/etree"

	"github.com/provider/coreapi/internal/einvoice"
)

// FuzzInvoice feeds arbitrary input of every document kind (text of every sort, quantities,
// prices, rates, discounts, charges, categories, a note's reference and reason) through the
// whole generator. It must never panic: an
// input is either refused (ErrAmountOutOfRange, or issues on the invoice) or yields a
// well-formed document whose QR payload decodes. The HTTP layer answers the first with a 4xx.
// `make test-reliability` runs it with -fuzz for a while; `go test` runs the seeds.
func FuzzInvoice(f *testing.F) {
	f.Add(uint8(0), "Nakhla", "310123456700003", "Coffee", "S", 2.0, int64(4500), 15.0, int64(500), int64(0), "en", "Thanks")
	f.Add(uint8(1), "شركة <&>", "3", "قهوة\x00", "Z", 1.5, int64(3333), 0.0, int64(0), int64(250), "ar", "\xff")
	f.Add(uint8(2), "", "", "", "E", 0.0, int64(-1), -15.0, int64(math.MaxInt64), int64(math.MaxInt64), "", "")
	f.Add(uint8(3), "x", "300000000000003", "y", "O", 1e308, int64(math.MaxInt64), 1e308, int64(1), int64(1), "en", "]]>")
	f.Add(uint8(4), "a", "b", "c", "S", math.SmallestNonzeroFloat64, int64(1), 14.999999, int64(-5), int64(-5), "\u202e", "\t")
	f.Add(uint8(5), "Nakhla", "310123456700003", "Coffee", "S", 1.0, int64(100), 15.0, int64(0), int64(0), "SA", "Price corrected")
	key, err := einvoice.NewSandboxKey("fuzz", time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, kindIndex uint8, seller, vat, item, category string, qty float64, price int64, rate float64, discount, charge int64, lang, note string) {
		kind := einvoice.Kinds[int(kindIndex)%len(einvoice.Kinds)]
		req := einvoice.Request{
			TaxCalculationMode: einvoice.ModeServiceCalculated,
			RequestedType:      kind.Type,
			Seller: einvoice.Seller{LegalName: seller, VATNumber: vat,
				Address: &einvoice.Address{StreetName: &item, City: &seller, CountryCode: lang}},
			Lines: []einvoice.Line{{ID: "1", NameEn: item, NameAr: &note, Quantity: qty, UnitCode: "PCE", UnitPrice: price,
				Discounts:   []einvoice.AllowanceCharge{{Amount: discount, Reason: &note}},
				Charges:     []einvoice.AllowanceCharge{{Amount: charge}},
				TaxCategory: category, TaxRate: rate, TaxExemptionReason: &note}},
			Notes: map[string]string{lang: note},
		}
		if kind.Standard {
			req.Buyer = &einvoice.Buyer{LegalName: &seller, VATNumber: &vat, BuyerType: "business",
				PostalAddress: &einvoice.Address{StreetName: &item, City: &note, PostalCode: &vat, CountryCode: lang}}
		}
		if kind.Note() {
			req.BillingReference = &einvoice.BillingReference{Number: item, IssueDate: &note}
			req.NoteReason = &note
		}
		d, err := einvoice.Prepare(req)
		if err != nil {
			if !errors.Is(err, einvoice.ErrAmountOutOfRange) {
				t.Fatalf("Prepare: unexpected error %v", err)
			}
			return
		}
		inv, err := d.Generate(einvoice.Identity{Number: "SINV-1", UUID: "6f0b8a3e-2c1d-4e5f-9a8b-7c6d5e4f3a2b", ICV: 1,
			PIH: einvoice.FirstPIH, IssuedAt: time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC)}, key)
		if err != nil {
			if !errors.Is(err, einvoice.ErrAmountOutOfRange) {
				t.Fatalf("Generate: unexpected error %v", err)
			}
			return
		}
		doc := etree.NewDocument()
		if err := doc.ReadFromString(inv.XML); err != nil && !strings.ContainsAny(seller+vat+item+category+lang+note, "\x00\ufffe\uffff") {
			t.Fatalf("the generated XML does not parse: %v", err)
		}
		// The hash was computed beside the text as it was written; the text parsed again must
		// give the same, whatever the texts hold (what XML cannot carry is written as U+FFFD,
		// a carriage return as a reference that the parser does not normalize).
		if _, hash, err := einvoice.InvoiceHash(doc); err != nil || hash != inv.Hash {
			t.Fatalf("the parsed document hashes to %s (%v), the generated one to %s", hash, err, inv.Hash)
		}
		if _, err := base64.StdEncoding.DecodeString(inv.QR); err != nil {
			t.Fatalf("QR payload is not base64: %v", err)
		}
		if _, err := einvoice.DecodeQR(inv.QR); err != nil {
			t.Fatalf("QR payload does not decode: %v", err)
		}
	})
}
