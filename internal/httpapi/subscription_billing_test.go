package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
)

func TestSelectSubscriptionPlan(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)

	type want struct {
		activation                     string
		invoice                        bool
		subtotal, discount, tax, total int64
		periodDays                     int // days the invoice covers; 0: up to the renewal
	}
	cases := []struct {
		name, product, startPlan, plan string
		want                           want
	}{
		{"SetupAndMonthlyFee", productEinvoice, planEinvoiceSandbox, planEinvoiceGrowthMonthly,
			want{"awaiting_payment", true, 79900, 0, 11985, 91885, 0}},
		{"AnnualWithSetupWaived", productEinvoice, planEinvoiceSandbox, planEinvoiceGrowthAnnual,
			want{"awaiting_payment", true, 349000, 50000, 44850, 343850, 0}},
		{"TrialWithPaymentMethodBillsSetup", productEinvoice, planEinvoiceSandbox, planEinvoiceBusinessTrial,
			want{"awaiting_payment", true, 100000, 0, 15000, 115000, 14}},
		{"OneTimePackage", productPlatform, planPlatformDeveloper, planPlatformOnboarding,
			want{"awaiting_payment", true, 150000, 0, 22500, 172500, 1}},
		{"FreePlan", productEinvoice, planEinvoiceGrowthMonthly, planEinvoiceSandbox, want{activation: "active"}},
		{"UsageOnly", productEinvoice, planEinvoiceSandbox, planEinvoicePayAsYouGo, want{activation: "active"}},
		{"TrialWithoutPaymentMethod", productAddress, planAddressPreview, planAddressStandardTrial, want{activation: "active"}},
		{"SamePlanAsCreated", productEinvoice, planEinvoiceGrowthMonthly, planEinvoiceGrowthMonthly,
			want{"awaiting_payment", true, 79900, 0, 11985, 91885, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			org, token := newOrganization(t, env)
			sub := createSubscription(t, env, token, org, tc.product, tc.startPlan)
			before := time.Now().UTC()
			resp := subscriptionAction(env, token, sub.ID, "select-plan", `{"plan_id":"`+tc.plan+`"}`)
			if resp.Status != http.StatusOK {
				t.Fatalf("status %d: %s", resp.Status, resp.Body)
			}
			sel := decode[planSelection](t, resp)
			if sel.Activation != tc.want.activation || sel.Subscription.PlanID != tc.plan || sel.Subscription.ID != sub.ID {
				t.Errorf("activation %s plan %s, want %s on %s", sel.Activation, sel.Subscription.PlanID, tc.want.activation, tc.plan)
			}
			if n := auditCount(env, sub.ID, "subscription.plan_selected"); n != 1 {
				t.Errorf("%d plan_selected audit events", n)
			}
			if !tc.want.invoice {
				if sel.Invoice != nil || resp.JSON(t)["invoice"] != nil {
					t.Errorf("want invoice null: %s", resp.Body)
				}
				if n := env.Count("SELECT count(*) FROM billing_invoices WHERE subscription_id = $1", sub.ID); n != 0 {
					t.Errorf("%d invoices stored for a plan that costs nothing now", n)
				}
				return
			}
			inv := sel.Invoice
			if inv == nil {
				t.Fatalf("no invoice: %s", resp.Body)
			}
			if inv.Subtotal != tc.want.subtotal || inv.Discount != tc.want.discount || inv.Tax != tc.want.tax || inv.Total != tc.want.total {
				t.Errorf("subtotal/discount/tax/total %d/%d/%d/%d, want %d/%d/%d/%d", inv.Subtotal, inv.Discount, inv.Tax, inv.Total,
					tc.want.subtotal, tc.want.discount, tc.want.tax, tc.want.total)
			}
			if inv.OrganizationID != org || inv.Currency != "SAR" || inv.Status != "issued" || inv.TaxDocumentStatus != "pending" || inv.PaidAt != nil {
				t.Errorf("invoice fields: %s", resp.Body)
			}
			if inv.IssuedAt == nil || inv.IssuedAt.Before(before.Add(-time.Second)) || inv.DueAt == nil || !inv.DueAt.Equal(inv.IssuedAt.Add(14*24*time.Hour)) {
				t.Errorf("issued_at %v due_at %v, want now and 14 days later", inv.IssuedAt, inv.DueAt)
			}
			start := inv.IssuedAt.UTC().Format(time.DateOnly)
			end := start
			switch {
			case tc.want.periodDays > 0:
				end = inv.IssuedAt.UTC().AddDate(0, 0, tc.want.periodDays-1).Format(time.DateOnly)
			case sel.Subscription.RenewsAt != nil:
				end = sel.Subscription.RenewsAt.UTC().AddDate(0, 0, -1).Format(time.DateOnly)
			}
			if inv.BillingPeriod.Start != start || inv.BillingPeriod.End != end {
				t.Errorf("billing period %s..%s, want %s..%s", inv.BillingPeriod.Start, inv.BillingPeriod.End, start, end)
			}
			var subtotal, discount, tax, total int64
			var status, subscriptionID string
			if err := env.Pool.QueryRow(context.Background(), `SELECT subtotal, discount, tax, total, status, subscription_id::text
				FROM billing_invoices WHERE id = $1 AND organization_id = $2`, inv.ID, org).Scan(&subtotal, &discount, &tax, &total, &status, &subscriptionID); err != nil {
				t.Fatalf("stored invoice: %v", err)
			}
			if subtotal != inv.Subtotal || discount != inv.Discount || tax != inv.Tax || total != inv.Total || status != "issued" || subscriptionID != sub.ID {
				t.Errorf("stored invoice %d/%d/%d/%d %s for %s differs from the response", subtotal, discount, tax, total, status, subscriptionID)
			}
			if n := auditCount(env, inv.ID, "billing_invoice.issued"); n != 1 {
				t.Errorf("%d billing_invoice.issued audit events", n)
			}
		})
	}

	t.Run("TrialDefersRenewal", func(t *testing.T) {
		t.Parallel()
		org, token := newOrganization(t, env)
		sub := createSubscription(t, env, token, org, productAddress, planAddressPreview)
		sel := decode[planSelection](t, subscriptionAction(env, token, sub.ID, "select-plan", `{"plan_id":"`+planAddressStandardTrial+`"}`))
		if sel.Subscription.RenewsAt == nil || sel.Subscription.RenewsAt.Sub(sel.Subscription.UpdatedAt).Round(time.Hour) != 30*24*time.Hour {
			t.Errorf("renews_at %v, want the end of the 30-day trial", sel.Subscription.RenewsAt)
		}
	})

	t.Run("OneTimeNeverRenews", func(t *testing.T) {
		t.Parallel()
		org, token := newOrganization(t, env)
		sub := createSubscription(t, env, token, org, productPlatform, planPlatformDeveloper)
		sel := decode[planSelection](t, subscriptionAction(env, token, sub.ID, "select-plan", `{"plan_id":"`+planPlatformOnboarding+`"}`))
		if sel.Subscription.RenewsAt != nil {
			t.Errorf("renews_at %v, want null for a one-time plan", sel.Subscription.RenewsAt)
		}
	})

	t.Run("SelectingAgainVoidsTheUnpaidInvoice", func(t *testing.T) {
		t.Parallel()
		org, token := newOrganization(t, env)
		sub := createSubscription(t, env, token, org, productEinvoice, planEinvoiceSandbox)
		first := decode[planSelection](t, subscriptionAction(env, token, sub.ID, "select-plan", `{"plan_id":"`+planEinvoiceGrowthMonthly+`"}`))
		second := decode[planSelection](t, subscriptionAction(env, token, sub.ID, "select-plan", `{"plan_id":"`+planEinvoiceGrowthAnnual+`"}`))
		if first.Invoice == nil || second.Invoice == nil || first.Invoice.ID == second.Invoice.ID {
			t.Fatalf("two selections, invoices %v and %v", first.Invoice, second.Invoice)
		}
		if n := env.Count("SELECT count(*) FROM billing_invoices WHERE id = $1 AND status = 'void'", first.Invoice.ID); n != 1 {
			t.Error("the first invoice is not void")
		}
		if n := env.Count("SELECT count(*) FROM billing_invoices WHERE subscription_id = $1 AND status = 'issued'", sub.ID); n != 1 {
			t.Errorf("%d invoices due, want 1", n)
		}
		if n := auditCount(env, first.Invoice.ID, "billing_invoice.voided"); n != 1 {
			t.Errorf("%d billing_invoice.voided audit events", n)
		}
	})

	t.Run("ErrUnprocessable", func(t *testing.T) {
		t.Parallel()
		org, token := newOrganization(t, env)
		sub := createSubscription(t, env, token, org, productEinvoice, planEinvoiceSandbox)
		for _, action := range []string{"select-plan", "change-plan"} {
			for name, tc := range map[string]struct{ plan, detail string }{
				"PlanOfAnotherProduct": {planAddressPreview, "belongs to another product"},
				"DeprecatedPlan":       {planEinvoiceDeprecated, "is deprecated; only active plans"},
				"RetiredPlan":          {planAddressRetired, "belongs to another product"},
				"UnknownPlan":          {uuid.NewString(), "does not exist"},
				"PlanNotAUUID":         {"growth", "does not exist"},
			} {
				resp := subscriptionAction(env, token, sub.ID, action, `{"plan_id":"`+tc.plan+`"}`)
				assertProblem(t, action+" "+name, resp, http.StatusUnprocessableEntity, "unprocessable")
				if !strings.Contains(string(resp.Body), tc.detail) || !hasFieldError(resp, "/plan_id") {
					t.Errorf("%s %s: want %q and /plan_id named: %s", action, name, tc.detail, resp.Body)
				}
			}
		}
		if n := env.Count("SELECT count(*) FROM subscriptions WHERE id = $1 AND plan_id = $2", sub.ID, planEinvoiceSandbox); n != 1 {
			t.Error("a refused plan request changed the plan")
		}
		if n := env.Count("SELECT count(*) FROM billing_invoices WHERE subscription_id = $1", sub.ID); n != 0 {
			t.Errorf("refused selections issued %d invoices", n)
		}
		resp := subscriptionAction(env, token, sub.ID, "select-plan", `{}`)
		assertProblem(t, "missing plan_id", resp, http.StatusBadRequest, "validation_failed")
	})

	t.Run("RetiredPlanOfTheSameProduct", func(t *testing.T) {
		t.Parallel()
		org, token := newOrganization(t, env)
		sub := createSubscription(t, env, token, org, productAddress, planAddressPreview)
		resp := subscriptionAction(env, token, sub.ID, "select-plan", `{"plan_id":"`+planAddressRetired+`"}`)
		assertProblem(t, "retired", resp, http.StatusUnprocessableEntity, "unprocessable")
		if !strings.Contains(string(resp.Body), "is retired") {
			t.Errorf("detail does not say the plan is retired: %s", resp.Body)
		}
	})
}

func TestChangeSubscriptionPlan(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)

	t.Run("KeepsTheCycleAndProrates", func(t *testing.T) {
		t.Parallel()
		org, token := newOrganization(t, env)
		sub := createSubscription(t, env, token, org, productEinvoice, planEinvoiceGrowthMonthly)
		resp := subscriptionAction(env, token, sub.ID, "change-plan", `{"plan_id":"`+planEinvoiceGrowthAnnual+`"}`)
		if resp.Status != http.StatusOK {
			t.Fatalf("status %d: %s", resp.Status, resp.Body)
		}
		got := decode[subscription](t, resp)
		if got.PlanID != planEinvoiceGrowthAnnual || got.RenewsAt == nil || !got.RenewsAt.Equal(sub.StartedAt.AddDate(1, 0, 0)) && sub.StartedAt.Day() <= 28 {
			t.Errorf("plan %s renews %v, want annual renewing a year after %v", got.PlanID, got.RenewsAt, sub.StartedAt)
		}
		// The proration invoice charges the annual fee for the rest of its year; a created
		// subscription's period was never invoiced, so nothing is credited (the arithmetic:
		// TestUsageRating on a test clock).
		if invs := invoicesOf(t, env, sub.ID); len(invs) != 1 || len(invs[0].Lines) != 1 || !invs[0].Lines[0].Proration || invs[0].Lines[0].Amount <= 0 {
			t.Errorf("change-plan issued %+v, want one invoice of a prorated charge", invs)
		}
		if n := auditCount(env, sub.ID, "subscription.plan_changed"); n != 1 {
			t.Errorf("%d plan_changed audit events", n)
		}
	})

	t.Run("ToTheCurrentPlanChangesNothing", func(t *testing.T) {
		t.Parallel()
		org, token := newOrganization(t, env)
		sub := createSubscription(t, env, token, org, productEinvoice, planEinvoiceSandbox)
		resp := subscriptionAction(env, token, sub.ID, "change-plan", `{"plan_id":"`+planEinvoiceSandbox+`"}`)
		if got := decode[subscription](t, resp); resp.Status != http.StatusOK || got.PlanID != planEinvoiceSandbox {
			t.Errorf("status %d: %s", resp.Status, resp.Body)
		}
		if n := auditCount(env, sub.ID, "subscription.plan_changed"); n != 0 {
			t.Errorf("a change to the current plan wrote %d audit events", n)
		}
	})
}
