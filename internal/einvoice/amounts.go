package einvoice

import (
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strconv"
)

// MaxAmount bounds every computed amount (10^15 minor units, ten trillion riyals), so amounts
// stay exact as int64 and as JSON numbers in any client (below 2^53).
const MaxAmount = 1_000_000_000_000_000

// ErrAmountOutOfRange is returned by Compute when an amount would exceed MaxAmount.
var ErrAmountOutOfRange = errors.New("einvoice: an amount exceeds the supported range")

// LineTotals are the computed amounts of one line, in minor units.
type LineTotals struct {
	LineID     string `json:"line_id"`
	Gross      int64  `json:"gross"`      // quantity x unit price, rounded half-up
	Allowances int64  `json:"allowances"` // sum of the line's discounts
	Charges    int64  `json:"charges"`    // sum of the line's charges
	Net        int64  `json:"net"`        // gross - allowances + charges (BT-131)
	VAT        int64  `json:"vat"`        // net x rate / 100, rounded half-up (KSA-11)
	WithVAT    int64  `json:"with_vat"`   // net + VAT (KSA-12)
}

// Subtotal is the VAT breakdown of one category, rate and exemption reason (BG-23).
type Subtotal struct {
	Category      string  `json:"category"`
	Rate          float64 `json:"rate"`
	Taxable       int64   `json:"taxable"` // sum of the nets (BT-116)
	Tax           int64   `json:"tax"`     // taxable x rate / 100, rounded half-up (BT-117, BR-CO-17)
	ExemptionCode *string `json:"exemption_code"`
	ExemptionText *string `json:"exemption_text"`
}

// Totals are the document amounts in minor units (BG-22).
type Totals struct {
	Currency       string       `json:"currency"`
	LineExtension  int64        `json:"line_extension"`  // sum of line nets (BT-106, BR-CO-10)
	AllowanceTotal int64        `json:"allowance_total"` // document-level allowances (BT-107): none in this request shape
	ChargeTotal    int64        `json:"charge_total"`    // document-level charges (BT-108): none in this request shape
	TaxExclusive   int64        `json:"tax_exclusive"`   // BT-109 = BT-106 - BT-107 + BT-108 (BR-CO-13)
	VAT            int64        `json:"vat"`             // BT-110 = sum of subtotal taxes (BR-CO-14)
	TaxInclusive   int64        `json:"tax_inclusive"`   // BT-112 = BT-109 + BT-110 (BR-CO-15)
	Payable        int64        `json:"payable"`         // BT-115 = BT-112 (no prepayment or rounding)
	Subtotals      []Subtotal   `json:"subtotals"`
	Lines          []LineTotals `json:"lines"`
}

// Compute calculates every line and document amount exactly: quantities and rates are taken
// as the decimals the client wrote, products are rational, and each amount is rounded half-up
// (half away from zero) to a minor unit once, at the end of its own formula. The category tax
// is computed from the category's taxable amount (BR-CO-17), so it may differ by rounding
// from the sum of the rounded line VATs.
func Compute(lines []Line) (Totals, error) {
	t := Totals{Currency: Currency, Lines: make([]LineTotals, 0, len(lines)), Subtotals: []Subtotal{}}
	type key struct {
		category string
		rate     string
		reason   string
	}
	groups := map[key]*Subtotal{}
	var order []key
	var lineExtension int64
	for _, l := range lines {
		lt, err := computeLine(l)
		if err != nil {
			return Totals{}, err
		}
		t.Lines = append(t.Lines, lt)
		if lineExtension, err = add(lineExtension, lt.Net); err != nil {
			return Totals{}, err
		}
		k := key{category: l.TaxCategory, rate: decimalString(l.TaxRate)}
		if l.TaxCategory != "S" && l.TaxExemptionReason != nil {
			k.reason = *l.TaxExemptionReason
		}
		g, ok := groups[k]
		if !ok {
			g = &Subtotal{Category: l.TaxCategory, Rate: l.TaxRate}
			if k.reason != "" {
				code := k.reason
				g.ExemptionCode = &code
				if text, ok := ExemptionReasons[code]; ok {
					g.ExemptionText = &text
				}
			}
			groups[k] = g
			order = append(order, k)
		}
		if g.Taxable, err = add(g.Taxable, lt.Net); err != nil {
			return Totals{}, err
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return categoryRank[order[i].category] < categoryRank[order[j].category] })
	var vat int64
	for _, k := range order {
		g := groups[k]
		tax, err := percentOf(g.Taxable, g.Rate)
		if err != nil {
			return Totals{}, err
		}
		g.Tax = tax
		if vat, err = add(vat, tax); err != nil {
			return Totals{}, err
		}
		t.Subtotals = append(t.Subtotals, *g)
	}
	t.LineExtension = lineExtension
	t.TaxExclusive = lineExtension - t.AllowanceTotal + t.ChargeTotal
	t.VAT = vat
	var err error
	if t.TaxInclusive, err = add(t.TaxExclusive, vat); err != nil {
		return Totals{}, err
	}
	t.Payable = t.TaxInclusive
	return t, nil
}

// categoryRank orders the VAT breakdown S, Z, E, O.
var categoryRank = map[string]int{"S": 0, "Z": 1, "E": 2, "O": 3}

func computeLine(l Line) (LineTotals, error) {
	lt := LineTotals{LineID: l.ID}
	q, err := exactDecimal(l.Quantity)
	if err != nil {
		return lt, err
	}
	gross := new(big.Rat).Mul(q, new(big.Rat).SetInt64(l.UnitPrice))
	if lt.Gross, err = roundHalfUp(gross); err != nil {
		return lt, err
	}
	for _, d := range l.Discounts {
		if lt.Allowances, err = add(lt.Allowances, d.Amount); err != nil {
			return lt, err
		}
	}
	for _, c := range l.Charges {
		if lt.Charges, err = add(lt.Charges, c.Amount); err != nil {
			return lt, err
		}
	}
	if lt.Net, err = add(lt.Gross-lt.Allowances, lt.Charges); err != nil {
		return lt, err
	}
	if lt.VAT, err = percentOf(lt.Net, l.TaxRate); err != nil {
		return lt, err
	}
	lt.WithVAT, err = add(lt.Net, lt.VAT)
	return lt, err
}

// percentOf returns amount x rate / 100 rounded half-up.
func percentOf(amount int64, rate float64) (int64, error) {
	r, err := exactDecimal(rate)
	if err != nil {
		return 0, err
	}
	v := new(big.Rat).Mul(new(big.Rat).SetInt64(amount), r)
	return roundHalfUp(v.Quo(v, big.NewRat(100, 1)))
}

// exactDecimal is the decimal a client wrote for f: the shortest decimal that reads back as
// f, so 0.1 is exactly one tenth rather than the nearest binary fraction.
func exactDecimal(f float64) (*big.Rat, error) {
	r, ok := new(big.Rat).SetString(decimalString(f))
	if !ok {
		return nil, ErrAmountOutOfRange // NaN or infinity: not a decimal
	}
	return r, nil
}

// decimalString writes f as its shortest plain decimal, e.g. "2", "2.5", "0.001".
func decimalString(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// roundHalfUp rounds r to an integer, halves away from zero.
func roundHalfUp(r *big.Rat) (int64, error) {
	n := halfUp(r)
	if !n.IsInt64() || abs(n.Int64()) > MaxAmount {
		return 0, ErrAmountOutOfRange
	}
	return n.Int64(), nil
}

// halfUp is r rounded to an integer, halves away from zero.
func halfUp(r *big.Rat) *big.Int {
	num := new(big.Int).Abs(r.Num())
	den := r.Denom()
	// floor((2|num| + den) / 2den) is |r| rounded half-up.
	n := new(big.Int).Mul(num, big.NewInt(2))
	n.Add(n, den)
	n.Quo(n, new(big.Int).Mul(den, big.NewInt(2)))
	if r.Sign() < 0 {
		n.Neg(n)
	}
	return n
}

func add(a, b int64) (int64, error) {
	s := a + b
	if abs(a) > MaxAmount || abs(b) > MaxAmount || abs(s) > MaxAmount {
		return 0, ErrAmountOutOfRange
	}
	return s, nil
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// FormatAmount writes minor units as a decimal with two fraction digits, e.g. 9775 -> "97.75".
func FormatAmount(minor int64) string {
	sign := ""
	if minor < 0 {
		sign, minor = "-", -minor
	}
	return fmt.Sprintf("%s%d.%02d", sign, minor/100, minor%100)
}

// FormatRate writes a percentage with at least two fraction digits, e.g. 15 -> "15.00".
func FormatRate(rate float64) string {
	s := decimalString(rate)
	r, _ := new(big.Rat).SetString(s)
	if r != nil {
		if f := r.FloatString(2); mustEqual(f, r) {
			return f
		}
	}
	return s
}

// mustEqual reports whether the decimal string s is exactly r.
func mustEqual(s string, r *big.Rat) bool {
	v, ok := new(big.Rat).SetString(s)
	return ok && v.Cmp(r) == 0
}
