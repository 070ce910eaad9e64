package core_test

import (
	"testing"

	"github.com/provider/coreapi/internal/core"
)

func TestPlan_CheckPlanMove(t *testing.T) {
	t.Parallel()
	statuses := []string{core.PlanStatusDraft, core.PlanStatusActive, core.PlanStatusDeprecated, core.PlanStatusRetired}
	allowed := map[[2]string]bool{
		{core.PlanStatusDraft, core.PlanStatusActive}:          true,
		{core.PlanStatusActive, core.PlanStatusDeprecated}:     true,
		{core.PlanStatusDeprecated, core.PlanStatusRetired}:    true,
		{core.PlanStatusDraft, core.PlanStatusDraft}:           true, // no move
		{core.PlanStatusActive, core.PlanStatusActive}:         true,
		{core.PlanStatusDeprecated, core.PlanStatusDeprecated}: true,
		{core.PlanStatusRetired, core.PlanStatusRetired}:       true,
	}
	for _, from := range statuses {
		for _, to := range statuses {
			err := (&core.Plan{Code: "p", Status: from}).CheckPlanMove(to)
			if allowed[[2]string{from, to}] != (err == nil) {
				t.Errorf("%s → %s: %v", from, to, err)
			}
			if err != nil && core.ErrorCode(err) != core.EInvalidTransition {
				t.Errorf("%s → %s: code %s", from, to, core.ErrorCode(err))
			}
		}
	}
}

func TestPlan_CheckTermsEditable(t *testing.T) {
	t.Parallel()
	for _, status := range []string{core.PlanStatusDraft, core.PlanStatusActive, core.PlanStatusDeprecated, core.PlanStatusRetired} {
		err := (&core.Plan{Status: status}).CheckTermsEditable()
		if (status == core.PlanStatusDraft) != (err == nil) || (err != nil && core.ErrorCode(err) != core.EInvalidTransition) {
			t.Errorf("%s: %v", status, err)
		}
	}
}

func TestCatalogueAudience(t *testing.T) {
	t.Parallel()
	operator := core.AudienceOf(&core.Principal{Kind: core.PrincipalOperator}, "")
	internal := core.AudienceOf(&core.Principal{Kind: core.PrincipalOrganization}, core.OrganizationTypeInternal)
	standard := core.AudienceOf(&core.Principal{Kind: core.PrincipalOrganization}, "standard_customer")
	for _, tc := range []struct {
		name                 string
		a                    core.CatalogueAudience
		internalOnly, drafts bool
	}{{"operator", operator, true, true}, {"internal", internal, true, false}, {"standard", standard, false, false}} {
		if got := tc.a.SeesProduct(core.ProductInternalOnly); got != tc.internalOnly {
			t.Errorf("%s sees internal_only: %v", tc.name, got)
		}
		if got := tc.a.SeesPlan(core.PlanStatusDraft); got != tc.drafts {
			t.Errorf("%s sees drafts: %v", tc.name, got)
		}
		for _, v := range []string{core.ProductGA, core.ProductBeta, core.ProductDeprecated} {
			if !tc.a.SeesProduct(v) {
				t.Errorf("%s does not see a %s product", tc.name, v)
			}
		}
	}
}

func TestCheckOffered(t *testing.T) {
	t.Parallel()
	fee := func(v int64) *int64 { return &v }
	price := func(kind string, amount int64, status string) *core.Price {
		return &core.Price{ComponentType: kind, Amount: &amount, Status: status}
	}
	for _, tc := range []struct {
		name string
		plan core.Plan
		want string // the first field error's code; "" for none
	}{
		{"Whole", core.Plan{BillingPeriod: "monthly", RecurringFee: fee(100), SetupFee: fee(5),
			Prices: []*core.Price{price(core.PriceRecurringFee, 100, core.PriceActive), price(core.PriceSetupFee, 5, core.PriceActive)}}, ""},
		{"NoActivePrice", core.Plan{BillingPeriod: "monthly", Prices: []*core.Price{price(core.PriceRecurringFee, 100, core.PriceInactive)}}, "no_active_price"},
		{"FeeWithoutPrice", core.Plan{BillingPeriod: "monthly", SetupFee: fee(5), Prices: []*core.Price{price(core.PriceDiscount, -1, core.PriceActive)}}, "fee_without_price"},
		{"FeeDiffers", core.Plan{BillingPeriod: "monthly", RecurringFee: fee(1), Prices: []*core.Price{price(core.PriceRecurringFee, 2, core.PriceActive)}}, "fee_differs_from_price"},
		{"PriceWithoutFee", core.Plan{BillingPeriod: "monthly", Prices: []*core.Price{price(core.PriceRecurringFee, 2, core.PriceActive)}}, "fee_differs_from_price"},
		{"TwoRecurringPrices", core.Plan{BillingPeriod: "monthly", RecurringFee: fee(2),
			Prices: []*core.Price{price(core.PriceRecurringFee, 2, core.PriceActive), price(core.PriceRecurringFee, 2, core.PriceActive)}}, "duplicate_recurring_fee"},
		{"CommitmentAlone", core.Plan{BillingPeriod: "annual", RecurringFee: fee(2), MinimumCommitment: fee(2),
			Prices: []*core.Price{price(core.PriceRecurringFee, 2, core.PriceActive)}}, ""},
		{"RecurringFeeOfUsageOnly", core.Plan{BillingPeriod: "usage_only", RecurringFee: fee(2),
			Prices: []*core.Price{price(core.PriceRecurringFee, 2, core.PriceActive)}}, "no_recurring_period"},
	} {
		err := core.CheckOffered(&tc.plan)
		got := ""
		if e, ok := err.(*core.Error); ok {
			got = e.Fields[0].Code
			if e.Code != core.EUnprocessable {
				t.Errorf("%s: code %s", tc.name, e.Code)
			}
		}
		if got != tc.want {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
