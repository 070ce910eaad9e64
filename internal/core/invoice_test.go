package core_test

import (
	"testing"
	"time"

	"github.com/provider/coreapi/internal/core"
)

func TestAllocateTax(t *testing.T) {
	t.Parallel()
	// Each charge alone would round 4.5 up (5 + 5 + 5 - 3 = 12); the VAT of the net 70 is
	// 10.5 → 11. The running allocation gives 5 + 4 + 5 - 3 = 11.
	lines := []core.InvoiceLine{{Amount: 30}, {Amount: 30}, {Amount: 30}, {Amount: -20}}
	core.AllocateTax(lines, 15)
	var tax int64
	for _, l := range lines {
		tax += l.Tax
	}
	if want := core.PercentHalfUp(70, 15); tax != want || lines[0].Tax != 5 || lines[1].Tax != 4 || lines[3].Tax != -3 {
		t.Errorf("taxes %+v sum to %d, want %d", lines, tax, want)
	}
	untaxed := []core.InvoiceLine{{Amount: 999}}
	if core.AllocateTax(untaxed, 0); untaxed[0].Tax != 0 {
		t.Errorf("untaxed line %+v", untaxed[0])
	}
}

func TestBillingInvoice_Payments(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 3, 2, 10, 0, 0, 0, time.UTC)
	issued := func(total int64) *core.BillingInvoice {
		return &core.BillingInvoice{Total: total, Currency: "SAR", Status: core.InvoiceIssued}
	}
	code := func(err error) string {
		if err == nil {
			return ""
		}
		e := err.(*core.Error)
		if len(e.Fields) > 0 {
			return e.Fields[0].Code
		}
		return e.Code
	}

	inv := issued(1000)
	for amount, want := range map[int64]string{1001: "amount_exceeds_amount_due", 0: "amount_zero", 1: "", 1000: ""} {
		if got := code(inv.CheckPayment(amount)); got != want {
			t.Errorf("CheckPayment(%d) = %q, want %q", amount, got, want)
		}
	}
	inv.ApplyPayment(400, at)
	if inv.Status != core.InvoicePartiallyPaid || inv.PaidAt != nil || inv.AmountDue() != 600 {
		t.Errorf("after 400: %+v", inv)
	}
	if got := code(inv.Void(at)); got != core.EInvalidTransition {
		t.Errorf("void a partially paid invoice: %q", got)
	}
	if got := code(inv.CheckPayment(601)); got != "amount_exceeds_amount_due" {
		t.Errorf("overpay the rest: %q", got)
	}
	inv.ApplyPayment(600, at)
	if inv.Status != core.InvoicePaid || inv.PaidAt == nil || !inv.PaidAt.Equal(at) || inv.AmountDue() != 0 {
		t.Errorf("after the rest: %+v", inv)
	}
	for name, err := range map[string]error{"pay": inv.CheckPayment(1), "void": inv.Void(at), "write off": inv.MarkUncollectible(at)} {
		if code(err) != core.EInvalidTransition {
			t.Errorf("%s a paid invoice: %v", name, err)
		}
	}

	zero := issued(0)
	if err := zero.CheckPayment(0); err != nil {
		t.Fatalf("a zero-total invoice is paid with 0: %v", err)
	}
	if zero.ApplyPayment(0, at); zero.Status != core.InvoicePaid {
		t.Errorf("zero-total invoice after paying 0: %s", zero.Status)
	}

	written := issued(1000)
	if err := written.MarkUncollectible(at); err != nil || written.Status != core.InvoiceUncollectible {
		t.Errorf("write off: %v %s", err, written.Status)
	}
	voided := issued(1000)
	if err := voided.Void(at); err != nil || voided.Status != core.InvoiceVoid {
		t.Errorf("void: %v %s", err, voided.Status)
	}
}

func TestChargeSandbox(t *testing.T) {
	t.Parallel()
	inv := &core.BillingInvoice{Currency: "SAR"}
	for method, want := range map[string]string{
		core.PaymentMethodSuccess: "", core.PaymentMethodDeclined: "card_declined", core.PaymentMethodInsufficientFunds: "insufficient_funds",
	} {
		p := core.ChargeSandbox(inv, 10, method)
		got := ""
		if p.FailureCode != nil {
			got = *p.FailureCode
		}
		if got != want || (p.Status == core.PaymentFailed) != (want != "") || (p.FailureMessage == nil) != (want == "") {
			t.Errorf("%s: %+v", method, p)
		}
	}
}
