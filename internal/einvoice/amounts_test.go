package einvoice_test

import (
	"errors"
	"testing"

	"github.com/provider/coreapi/internal/einvoice"
)

func ptr[T any](v T) *T { return &v }

func TestCompute_Lines(t *testing.T) {
	t.Parallel()
	vatex := map[string]*string{"S": nil, "Z": ptr("VATEX-SA-32"), "E": ptr("VATEX-SA-29"), "O": ptr("VATEX-SA-OOS")}
	cases := []struct {
		name                   string
		quantity               float64
		price                  int64
		discounts, charges     []int64
		category               string
		rate                   float64
		gross, net, vat, total int64
	}{
		{"Standard", 2, 4500, []int64{500}, nil, "S", 15, 9000, 8500, 1275, 9775},
		{"StandardWithCharge", 1, 1000, nil, []int64{250}, "S", 15, 1000, 1250, 188, 1438}, // 187.5 -> 188
		{"HalfUpExactlyHalf", 1, 10, nil, nil, "S", 15, 10, 10, 2, 12},                     // 1.5 -> 2
		{"BelowHalfRoundsDown", 1, 3, nil, nil, "S", 15, 3, 3, 0, 3},                       // 0.45 -> 0
		{"JustBelowHalf", 1, 33, nil, nil, "S", 15, 33, 33, 5, 38},                         // 4.95 -> 5
		{"FractionalQuantity", 2.5, 333, nil, nil, "S", 15, 833, 833, 125, 958},            // 832.5 -> 833; 124.95 -> 125
		{"DecimalQuantityIsExact", 0.1, 5, nil, nil, "S", 15, 1, 1, 0, 1},                  // 0.5 -> 1, not 0.49999
		{"ThreeDecimalsQuantity", 1.005, 100, nil, nil, "S", 15, 101, 101, 15, 116},        // 100.5 -> 101; 15.15 -> 15
		{"ZeroRated", 3, 1999, nil, nil, "Z", 0, 5997, 5997, 0, 5997},
		{"Exempt", 1, 120000, []int64{20000}, nil, "E", 0, 120000, 100000, 0, 100000},
		{"OutOfScope", 4, 250, nil, []int64{100}, "O", 0, 1000, 1100, 0, 1100},
		{"NegativeNet", 1, 100, []int64{150}, nil, "S", 15, 100, -50, -8, -58}, // -7.5 -> -8 (away from zero)
		{"DecimalRate", 1, 1000, nil, nil, "S", 5.5, 1000, 1000, 55, 1055},
		{"ZeroPrice", 7, 0, nil, nil, "S", 15, 0, 0, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := einvoice.Line{ID: "1", Quantity: tc.quantity, UnitPrice: tc.price, TaxCategory: tc.category, TaxRate: tc.rate,
				TaxExemptionReason: vatex[tc.category]}
			for _, d := range tc.discounts {
				l.Discounts = append(l.Discounts, einvoice.AllowanceCharge{Amount: d})
			}
			for _, c := range tc.charges {
				l.Charges = append(l.Charges, einvoice.AllowanceCharge{Amount: c})
			}
			got, err := einvoice.Compute([]einvoice.Line{l})
			if err != nil {
				t.Fatal(err)
			}
			lt := got.Lines[0]
			if lt.Gross != tc.gross || lt.Net != tc.net || lt.VAT != tc.vat || lt.WithVAT != tc.total {
				t.Errorf("line = gross %d net %d vat %d total %d, want %d %d %d %d", lt.Gross, lt.Net, lt.VAT, lt.WithVAT, tc.gross, tc.net, tc.vat, tc.total)
			}
			if got.LineExtension != tc.net || got.TaxExclusive != tc.net || got.VAT != tc.vat ||
				got.TaxInclusive != tc.net+tc.vat || got.Payable != got.TaxInclusive {
				t.Errorf("totals = %+v", got)
			}
			if len(got.Subtotals) != 1 || got.Subtotals[0].Category != tc.category || got.Subtotals[0].Taxable != tc.net {
				t.Errorf("subtotals = %+v", got.Subtotals)
			}
			if tc.category != "S" && (got.Subtotals[0].ExemptionCode == nil || got.Subtotals[0].ExemptionText == nil) {
				t.Errorf("category %s subtotal lacks its exemption reason: %+v", tc.category, got.Subtotals[0])
			}
		})
	}
}

func TestCompute_Document(t *testing.T) {
	t.Parallel()
	t.Run("CategoryTaxFromTaxableNotFromLines", func(t *testing.T) {
		t.Parallel()
		// Three lines of 0.10 SAR at 15 %: each line VAT is 0.015 -> 0.02 (6 in total), but
		// the category tax is 0.30 x 15 % = 0.045 -> 0.05 (BR-CO-17).
		line := einvoice.Line{Quantity: 1, UnitPrice: 10, TaxCategory: "S", TaxRate: 15}
		a, b, c := line, line, line
		a.ID, b.ID, c.ID = "1", "2", "3"
		got, err := einvoice.Compute([]einvoice.Line{a, b, c})
		if err != nil {
			t.Fatal(err)
		}
		if got.Lines[0].VAT != 2 || got.VAT != 5 || got.TaxInclusive != 35 {
			t.Errorf("line VAT %d, document VAT %d, inclusive %d; want 2, 5, 35", got.Lines[0].VAT, got.VAT, got.TaxInclusive)
		}
	})
	t.Run("EveryCategoryInOneInvoice", func(t *testing.T) {
		t.Parallel()
		lines := []einvoice.Line{
			{ID: "o", Quantity: 1, UnitPrice: 400, TaxCategory: "O", TaxExemptionReason: ptr("VATEX-SA-OOS")},
			{ID: "s1", Quantity: 2, UnitPrice: 1000, TaxCategory: "S", TaxRate: 15},
			{ID: "z", Quantity: 1, UnitPrice: 300, TaxCategory: "Z", TaxExemptionReason: ptr("VATEX-SA-35")},
			{ID: "e", Quantity: 1, UnitPrice: 200, TaxCategory: "E", TaxExemptionReason: ptr("VATEX-SA-30")},
			{ID: "s2", Quantity: 1, UnitPrice: 1001, TaxCategory: "S", TaxRate: 15},
			{ID: "z2", Quantity: 1, UnitPrice: 50, TaxCategory: "Z", TaxExemptionReason: ptr("VATEX-SA-32")},
		}
		got, err := einvoice.Compute(lines)
		if err != nil {
			t.Fatal(err)
		}
		want := []struct {
			cat          string
			taxable, tax int64
		}{{"S", 3001, 450}, {"Z", 300, 0}, {"Z", 50, 0}, {"E", 200, 0}, {"O", 400, 0}} // 450.15 -> 450
		if len(got.Subtotals) != len(want) {
			t.Fatalf("subtotals = %+v", got.Subtotals)
		}
		for i, w := range want {
			s := got.Subtotals[i]
			if s.Category != w.cat || s.Taxable != w.taxable || s.Tax != w.tax {
				t.Errorf("subtotal %d = %s %d %d, want %s %d %d", i, s.Category, s.Taxable, s.Tax, w.cat, w.taxable, w.tax)
			}
		}
		if got.LineExtension != 3951 || got.VAT != 450 || got.TaxInclusive != 4401 || got.Payable != 4401 {
			t.Errorf("totals = %+v", got)
		}
	})
	t.Run("ErrAmountOutOfRange", func(t *testing.T) {
		t.Parallel()
		_, err := einvoice.Compute([]einvoice.Line{{ID: "1", Quantity: 1e9, UnitPrice: 1e12, TaxCategory: "S", TaxRate: 15}})
		if !errors.Is(err, einvoice.ErrAmountOutOfRange) {
			t.Fatalf("err = %v, want ErrAmountOutOfRange", err)
		}
	})
}

func TestFormat(t *testing.T) {
	t.Parallel()
	for in, want := range map[int64]string{0: "0.00", 5: "0.05", 9775: "97.75", 100: "1.00", -58: "-0.58", -1234: "-12.34"} {
		if got := einvoice.FormatAmount(in); got != want {
			t.Errorf("FormatAmount(%d) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[float64]string{15: "15.00", 0: "0.00", 5.5: "5.50", 12.125: "12.125"} {
		if got := einvoice.FormatRate(in); got != want {
			t.Errorf("FormatRate(%v) = %q, want %q", in, got, want)
		}
	}
}
