package core_test

import (
	"testing"

	"github.com/provider/coreapi/internal/core"
)

func TestPlanSelectionMilestone(t *testing.T) {
	t.Parallel()
	free := &core.Plan{RecurringFee: ptr(int64(0)), IncludedUsage: []core.IncludedUsage{{Metric: "invoices_generated", Quantity: 100}}}
	cases := []struct {
		name       string
		plan       *core.Plan
		activation string
		want       *core.OnboardingMilestone
	}{
		{"free plan", free, core.ActivationActive, nil},
		{"no plan", nil, core.ActivationActive, nil},
		{"zero overage", &core.Plan{OverageRules: []core.OverageRule{{Metric: "m", UnitPrice: 0}}}, core.ActivationActive, nil},
		{"setup fee active", &core.Plan{SetupFee: ptr(int64(1))}, core.ActivationActive, &core.OnboardingCommercialLive},
		{"recurring fee awaiting payment", &core.Plan{RecurringFee: ptr(int64(29900))}, core.ActivationAwaitingPayment, &core.OnboardingPlanSelected},
		{"minimum commitment", &core.Plan{MinimumCommitment: ptr(int64(10000))}, core.ActivationActive, &core.OnboardingCommercialLive},
		{"priced overage only", &core.Plan{OverageRules: []core.OverageRule{{Metric: "m", UnitPrice: 30}}}, core.ActivationActive, &core.OnboardingCommercialLive},
	}
	for _, c := range cases {
		got, ok := core.PlanSelectionMilestone(c.plan, c.activation)
		switch {
		case c.want == nil && ok:
			t.Errorf("%s: milestone %v, want none", c.name, got)
		case c.want != nil && (!ok || got.Status != c.want.Status || len(got.Steps) != len(c.want.Steps)):
			t.Errorf("%s: milestone %v %v, want %v", c.name, got, ok, *c.want)
		}
	}
}
