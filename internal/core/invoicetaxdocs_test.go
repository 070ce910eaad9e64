package core_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/einvoice"
)

// TestTaxInvoiceRequest: the engine's request for a billing invoice's tax document has the
// invoice's amounts exactly — its taxable amount is subtotal - discount, its VAT the
// invoice's tax and its payable amount the total — whatever the lines and discounts.
func TestTaxInvoiceRequest(t *testing.T) {
	t.Parallel()
	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	line := func(component string, quantity, unit, amount int64) core.InvoiceLine {
		return core.InvoiceLine{ComponentType: component, Description: component, Quantity: quantity, UnitAmount: unit, Amount: amount}
	}
	for _, tc := range []struct {
		name      string
		lines     []core.InvoiceLine
		wantLines []einvoice.Line // ID, quantity, unit price and discounts of each
	}{
		{"Fees", []core.InvoiceLine{line("setup_fee", 1, 50000, 50000), line("recurring_fee", 1, 29900, 29900)},
			[]einvoice.Line{{Quantity: 1, UnitPrice: 50000}, {Quantity: 1, UnitPrice: 29900}}},
		{"QuantityKeptWhenItMakesTheAmount", []core.InvoiceLine{line("per_unit", 7, 333, 2331)},
			[]einvoice.Line{{Quantity: 7, UnitPrice: 333}}},
		{"OneTimesTheAmountOtherwise", []core.InvoiceLine{line("graduated_usage", 150, 10, 1250)},
			[]einvoice.Line{{Quantity: 1, UnitPrice: 1250}}},
		{"DiscountSpreadInOrder", []core.InvoiceLine{line("setup_fee", 1, 300, 300), line("recurring_fee", 1, 29900, 29900), line("discount", 1, -5000, -5000)},
			[]einvoice.Line{{Quantity: 1, UnitPrice: 300, Discounts: []einvoice.AllowanceCharge{{Amount: 300}}},
				{Quantity: 1, UnitPrice: 29900, Discounts: []einvoice.AllowanceCharge{{Amount: 4700}}}}},
		{"DiscountedToZero", []core.InvoiceLine{line("setup_fee", 1, 50000, 50000), line("discount", 1, -50000, -50000)},
			[]einvoice.Line{{Quantity: 1, UnitPrice: 50000, Discounts: []einvoice.AllowanceCharge{{Amount: 50000}}}}},
		{"ZeroLine", []core.InvoiceLine{line("trial", 1, 0, 0)}, []einvoice.Line{{Quantity: 1, UnitPrice: 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			inv := &core.BillingInvoice{ID: uuid.New(), Currency: "SAR", PeriodStart: day("2025-03-01"), PeriodEnd: day("2025-03-31"), Lines: tc.lines}
			for _, l := range tc.lines {
				if l.Amount >= 0 {
					inv.Subtotal += l.Amount
				} else {
					inv.Discount -= l.Amount
				}
			}
			inv.Tax = core.PercentHalfUp(inv.Subtotal-inv.Discount, 15)
			inv.Total = inv.Subtotal - inv.Discount + inv.Tax
			req, err := core.TaxInvoiceRequest(inv, core.TaxDocumentBuyer{Organization: &core.Organization{LegalNameEn: "Buyer"}})
			if err != nil {
				t.Fatal(err)
			}
			if req.RequestedType != einvoice.TypeSimplified || req.Seller.VATNumber != core.PlatformSeller.VATNumber || *req.EGSUnitID != core.PlatformEGSUnit ||
				req.Supply.SupplyDate != "2025-03-01" || *req.Supply.EndDate != "2025-03-31" {
				t.Errorf("request %+v", req)
			}
			if len(req.Lines) != len(tc.wantLines) {
				t.Fatalf("%d lines, want %d", len(req.Lines), len(tc.wantLines))
			}
			for i, l := range req.Lines {
				w := tc.wantLines[i]
				if l.Quantity != w.Quantity || l.UnitPrice != w.UnitPrice || len(l.Discounts) != len(w.Discounts) || l.TaxRate != 15 || l.TaxCategory != "S" {
					t.Errorf("line %d: %+v, want %+v", i, l, w)
				}
				for j := range w.Discounts {
					if j < len(l.Discounts) && l.Discounts[j].Amount != w.Discounts[j].Amount {
						t.Errorf("line %d discount %d: %d, want %d", i, j, l.Discounts[j].Amount, w.Discounts[j].Amount)
					}
				}
			}
			totals, err := einvoice.Compute(req.Lines)
			if err != nil {
				t.Fatal(err)
			}
			if totals.TaxExclusive != inv.Subtotal-inv.Discount || totals.VAT != inv.Tax || totals.Payable != inv.Total {
				t.Errorf("engine totals %d/%d/%d, invoice %d/%d/%d", totals.TaxExclusive, totals.VAT, totals.Payable, inv.Subtotal-inv.Discount, inv.Tax, inv.Total)
			}
		})
	}
}

// TestTaxInvoiceRequestBuyer: an organization giving a VAT number gets a standard invoice
// naming it; one giving none a simplified one; a note credits the original by number.
func TestTaxInvoiceRequestBuyer(t *testing.T) {
	t.Parallel()
	inv := &core.BillingInvoice{ID: uuid.New(), Currency: "SAR", Lines: []core.InvoiceLine{{Description: "Fee", Quantity: 1, UnitAmount: 100, Amount: 100}}}
	vat, crn := "310123456700003", "1010123456"
	street := "Olaya"
	address := &einvoice.Address{StreetName: &street, City: &street, CountryCode: "SA"}
	req, err := core.TaxInvoiceRequest(inv, core.TaxDocumentBuyer{
		Organization:  &core.Organization{LegalNameEn: "Buyer Co", VatReference: &vat, CommercialRegistrationReference: &crn},
		PostalAddress: address,
	})
	if err != nil {
		t.Fatal(err)
	}
	if req.RequestedType != einvoice.TypeStandard || *req.Buyer.VATNumber != vat || *req.Buyer.LegalName != "Buyer Co" ||
		*req.Buyer.CommercialRegistration != crn || req.Buyer.PostalAddress != address || req.Buyer.BuyerType != "business" {
		t.Errorf("standard request %+v buyer %+v", req, req.Buyer)
	}
	note := core.CreditNoteRequest(req, "INV-000007", time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC), inv)
	if note.RequestedType != einvoice.TypeStandardCreditNote || note.BillingReference.Number != "INV-000007" ||
		*note.BillingReference.IssueDate != "2025-03-01" || !strings.Contains(*note.NoteReason, inv.ID.String()) || req.BillingReference != nil {
		t.Errorf("credit note %+v (original %+v)", note, req)
	}

	simplified, err := core.TaxInvoiceRequest(inv, core.TaxDocumentBuyer{Organization: &core.Organization{LegalNameEn: "Person"}})
	if err != nil {
		t.Fatal(err)
	}
	if simplified.RequestedType != einvoice.TypeSimplified || simplified.Buyer.VATNumber != nil || simplified.Buyer.BuyerType != "business" {
		t.Errorf("simplified request %+v buyer %+v", simplified, simplified.Buyer)
	}
	if n := core.CreditNoteRequest(simplified, "SINV-000001", time.Now(), inv); n.RequestedType != einvoice.TypeSimplifiedCreditNote {
		t.Errorf("credit note of a simplified invoice is %s", n.RequestedType)
	}

	// Discounts beyond the charges have no document of this shape.
	inv.Lines = append(inv.Lines, core.InvoiceLine{Description: "Credit", Quantity: 1, UnitAmount: -150, Amount: -150})
	if _, err := core.TaxInvoiceRequest(inv, core.TaxDocumentBuyer{Organization: &core.Organization{}}); err == nil {
		t.Error("an invoice below zero got a request")
	}
}
