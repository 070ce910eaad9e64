package core_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/core"
)

// dunned is a monthly subscription, provisioned and running, and its invoice of 34385 due on
// March 15 at 09:30.
func dunned(t *testing.T) (*core.Subscription, *core.BillingInvoice) {
	t.Helper()
	due := time.Date(2025, 3, 15, 9, 30, 0, 0, time.UTC)
	provisioned, renews := due.AddDate(0, 0, -14), due.AddDate(0, 0, 17)
	sub := &core.Subscription{ID: uuid.New(), CommercialStatus: core.CommercialActive, ServiceStatus: core.ServiceActive,
		BillingStatus: core.BillingCurrent, BillingAnchorAt: provisioned, RenewsAt: &renews, ProvisionedAt: &provisioned}
	inv := &core.BillingInvoice{ID: uuid.New(), Total: 34385, Status: core.InvoiceIssued, DueAt: &due}
	return sub, inv
}

func day(d int) time.Time { return time.Date(2025, 3, 15+d, 9, 30, 0, 0, time.UTC) }

// TestDunningSchedule: overdue at due_at, in dunning and past due at the first failed retry
// (+3 days), still in dunning at the second (+5), written off at the third (+7): paused, the
// running service suspended by billing, which no lifecycle action resumes.
func TestDunningSchedule(t *testing.T) {
	sub, inv := dunned(t)
	if sub.BecomeOverdue(inv); sub.BillingStatus != core.BillingOverdue || *sub.Dunning.InvoiceID != inv.ID || !sub.Dunning.NextAt.Equal(day(3)) {
		t.Fatalf("overdue: %+v", sub)
	}
	steps := []struct {
		at                           time.Time
		writtenOff                   bool
		billing, commercial, service string
		next                         *time.Time
	}{
		{day(3), false, core.BillingInDunning, core.CommercialPastDue, core.ServiceActive, ptr(day(5))},
		{day(5), false, core.BillingInDunning, core.CommercialPastDue, core.ServiceActive, ptr(day(7))},
		{day(7), true, core.BillingWrittenOff, core.CommercialPaused, core.ServiceSuspended, nil},
	}
	for i, s := range steps {
		if sub.DunningRetryDue(s.at.Add(-time.Second)) || !sub.DunningRetryDue(s.at) {
			t.Errorf("retry %d not due exactly at %v", i+1, s.at)
		}
		got := sub.FailRetry(inv, s.at)
		if got != s.writtenOff || sub.BillingStatus != s.billing || sub.CommercialStatus != s.commercial || sub.ServiceStatus != s.service ||
			sub.Dunning.Retries != i+1 || (s.next == nil) != (sub.Dunning.NextAt == nil) || (s.next != nil && !s.next.Equal(*sub.Dunning.NextAt)) {
			t.Errorf("retry %d: written off %v %s/%s/%s next %v, want %+v", i+1, got, sub.BillingStatus, sub.CommercialStatus, sub.ServiceStatus, sub.Dunning.NextAt, s)
		}
	}
	if sub.SuspendedBy != core.SuspendedByBilling || !sub.SuspendedAt.Equal(day(7)) || sub.RenewalDue(day(30)) || sub.DunningRetryDue(day(30)) {
		t.Errorf("written off: suspended by %q at %v; renewal or retry still due", sub.SuspendedBy, sub.SuspendedAt)
	}
	for _, actor := range []string{"organization", core.ActorOperator} {
		if err := sub.CheckTransition(core.ActionResume, actor); core.ErrorCode(err) != core.EInvalidTransition {
			t.Errorf("resume by %s of a write-off's suspension: %v, want invalid_state_transition", actor, err)
		}
	}
}

// TestDunningRecover: the payment at any stage brings billing current, commercial active and
// the service back; a cancelled subscription stays cancelled, and a service the operator
// suspended stays suspended. Periods that began and ended while written off are not billed.
func TestDunningRecover(t *testing.T) {
	plan := &core.Plan{ID: uuid.New(), BillingPeriod: core.BillingPeriodMonthly}
	cases := []struct {
		name       string
		retries    int // failed retries before the payment
		cancelled  bool
		suspended  string // who suspended the service before dunning ("" running)
		at         time.Time
		commercial string
		service    string
	}{
		{"Overdue", 0, false, "", day(1), core.CommercialActive, core.ServiceActive},
		{"InDunning", 1, false, "", day(4), core.CommercialActive, core.ServiceActive},
		{"WrittenOff", 3, false, "", day(8), core.CommercialActive, core.ServiceActive},
		{"WrittenOffCancelled", 3, true, "", day(8), core.CommercialCancelled, core.ServiceActive},
		{"WrittenOffOperatorSuspended", 3, false, core.ActorOperator, day(8), core.CommercialActive, core.ServiceSuspended},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sub, inv := dunned(t)
			if tc.cancelled {
				sub.CommercialStatus, sub.CancelledBy = core.CommercialCancelled, "organization"
			}
			if tc.suspended != "" {
				sub.ServiceStatus, sub.SuspendedBy = core.ServiceSuspended, tc.suspended
			}
			sub.BecomeOverdue(inv)
			for i := range tc.retries {
				sub.FailRetry(inv, day(3+2*i))
			}
			sub.Recover(plan, tc.at)
			if sub.BillingStatus != core.BillingCurrent || sub.Dunning != (core.Dunning{}) || sub.CommercialStatus != tc.commercial || sub.ServiceStatus != tc.service {
				t.Errorf("recovered: %s/%s/%s %+v, want current/%s/%s", sub.BillingStatus, sub.CommercialStatus, sub.ServiceStatus, sub.Dunning, tc.commercial, tc.service)
			}
			if sub.ServiceStatus == core.ServiceActive && (sub.SuspendedBy != "" || sub.SuspendedAt != nil) {
				t.Errorf("resumed service still suspended by %q at %v", sub.SuspendedBy, sub.SuspendedAt)
			}
		})
	}
	// Written off on March 22 and paid on June 10: April's and May's periods began and ended
	// while written off; renewal resumes with June's, in progress (renews at June 1).
	sub, inv := dunned(t)
	sub.BecomeOverdue(inv)
	for i := range 3 {
		sub.FailRetry(inv, day(3+2*i))
	}
	sub.Recover(plan, time.Date(2025, 6, 10, 0, 0, 0, 0, time.UTC))
	if want := time.Date(2025, 6, 1, 9, 30, 0, 0, time.UTC); !sub.RenewsAt.Equal(want) {
		t.Errorf("renews at %v after a long write-off, want %v", sub.RenewsAt, want)
	}
}

// TestPayUncollectible: a written-off invoice takes payments; it stays uncollectible until
// paid in full, then is paid.
func TestPayUncollectible(t *testing.T) {
	_, inv := dunned(t)
	if err := inv.MarkUncollectible(day(7)); err != nil {
		t.Fatal(err)
	}
	if err := inv.CheckPayment(10000); err != nil {
		t.Fatalf("pay uncollectible: %v", err)
	}
	inv.ApplyPayment(10000, day(8))
	if inv.Status != core.InvoiceUncollectible || inv.PaidAt != nil {
		t.Errorf("after a part: %s paid at %v, want still uncollectible", inv.Status, inv.PaidAt)
	}
	inv.ApplyPayment(24385, day(9))
	if inv.Status != core.InvoicePaid || !inv.PaidAt.Equal(day(9)) {
		t.Errorf("after the rest: %s paid at %v", inv.Status, inv.PaidAt)
	}
}
