package core_test

import (
	"testing"

	"github.com/provider/coreapi/internal/core"
)

func TestEntitle(t *testing.T) {
	t.Parallel()
	// good is an organization that may do everything: active, verified, normal risk, with an
	// active subscription to the product.
	good := core.Standing{Lifecycle: "active", Verification: "verified", Risk: "normal", SubscriptionService: "active"}
	with := func(change func(*core.Standing)) core.Standing {
		s := good
		change(&s)
		return s
	}
	use := func(env string) core.Access {
		return core.Access{Act: core.ActUseProduct, Environment: env, Product: "einvoice"}
	}
	issue := func(env string) core.Access { return core.Access{Act: core.ActIssueCredential, Environment: env} }
	subscribe := core.Access{Act: core.ActSubscribe}
	business := func(status string) core.Access {
		return core.Access{Act: core.ActIssueCredential, Environment: "sandbox", Business: &status}
	}
	const sandbox, production = "sandbox", "production"
	cases := []struct {
		name     string
		standing core.Standing
		access   core.Access
		want     string // the refusal code; "" when allowed
	}{
		{"Allowed/Sandbox", good, use(sandbox), ""},
		{"Allowed/Production", good, use(production), ""},
		{"Allowed/NewProductionKey", good, issue(production), ""},
		{"Allowed/Subscribe", good, subscribe, ""},
		{"Allowed/DegradedSubscription", with(func(s *core.Standing) { s.SubscriptionService = "degraded" }), use(production), ""},
		{"Allowed/WatchedRisk", with(func(s *core.Standing) { s.Risk = "watch" }), use(production), ""},

		// An organization suspended, terminated, archived or suspended_risk does nothing.
		{"ErrSuspended/Use", with(func(s *core.Standing) { s.Lifecycle = "suspended" }), use(sandbox), core.EOrganizationSuspended},
		{"ErrSuspended/Key", with(func(s *core.Standing) { s.Lifecycle = "suspended" }), issue(sandbox), core.EOrganizationSuspended},
		{"ErrSuspended/Subscribe", with(func(s *core.Standing) { s.Lifecycle = "suspended" }), subscribe, core.EOrganizationSuspended},
		{"ErrTerminated", with(func(s *core.Standing) { s.Lifecycle = "terminated" }), use(sandbox), core.EOrganizationTerminated},
		{"ErrTerminated/Subscribe", with(func(s *core.Standing) { s.Lifecycle = "terminated" }), subscribe, core.EOrganizationTerminated},
		{"ErrArchived", with(func(s *core.Standing) { s.Lifecycle = "archived" }), issue(sandbox), core.EOrganizationArchived},
		{"ErrRiskSuspended/Use", with(func(s *core.Standing) { s.Risk = "suspended_risk" }), use(sandbox), core.ERiskSuspended},
		{"ErrRiskSuspended/Subscribe", with(func(s *core.Standing) { s.Risk = "suspended_risk" }), subscribe, core.ERiskSuspended},
		// The lifecycle answers before the risk status, and before a business's state.
		{"ErrSuspendedBeforeRisk", with(func(s *core.Standing) { s.Lifecycle = "suspended"; s.Risk = "suspended_risk" }), use(sandbox), core.EOrganizationSuspended},
		{"ErrSuspendedBeforeBusiness", with(func(s *core.Standing) { s.Lifecycle = "suspended" }), business("closed"), core.EOrganizationSuspended},

		// Restricted risk refuses production traffic only.
		{"Restricted/Sandbox", with(func(s *core.Standing) { s.Risk = "restricted" }), use(sandbox), ""},
		{"ErrRestricted/Production", with(func(s *core.Standing) { s.Risk = "restricted" }), use(production), core.ERiskRestricted},
		{"Restricted/NewProductionKey", with(func(s *core.Standing) { s.Risk = "restricted" }), issue(production), ""},

		// Production needs a verified, active organization; the sandbox does not.
		{"Unverified/Sandbox", with(func(s *core.Standing) { s.Verification = "unverified" }), use(sandbox), ""},
		{"Unverified/SandboxKey", with(func(s *core.Standing) { s.Verification = "pending_review" }), issue(sandbox), ""},
		{"ErrUnverified/Production", with(func(s *core.Standing) { s.Verification = "unverified" }), use(production), core.EOrganizationNotVerified},
		{"ErrRejected/NewProductionKey", with(func(s *core.Standing) { s.Verification = "rejected" }), issue(production), core.EOrganizationNotVerified},
		{"ErrPendingReview/Production", with(func(s *core.Standing) { s.Verification = "pending_review" }), use(production), core.EOrganizationNotVerified},
		{"Pending/Sandbox", with(func(s *core.Standing) {
			s.Lifecycle = "pending"
			s.Verification = "unverified"
			s.SubscriptionService = ""
		}), use(sandbox), ""},
		{"Pending/SandboxKey", with(func(s *core.Standing) { s.Lifecycle = "pending" }), issue(sandbox), ""},
		{"Pending/Subscribe", with(func(s *core.Standing) { s.Lifecycle = "pending" }), subscribe, ""},
		{"ErrPending/Production", with(func(s *core.Standing) { s.Lifecycle = "pending" }), use(production), core.EOrganizationNotActive},
		{"ErrPending/NewProductionKey", with(func(s *core.Standing) { s.Lifecycle = "pending" }), issue(production), core.EOrganizationNotActive},

		// The subscription to the product governs its operations.
		{"NoSubscription/Sandbox", with(func(s *core.Standing) { s.SubscriptionService = "" }), use(sandbox), ""},
		{"ErrNoSubscription/Production", with(func(s *core.Standing) { s.SubscriptionService = "" }), use(production), core.ESubscriptionRequired},
		{"ErrProvisioning", with(func(s *core.Standing) { s.SubscriptionService = "provisioning" }), use(sandbox), core.ESubscriptionInactive},
		{"ErrSuspendedSubscription", with(func(s *core.Standing) { s.SubscriptionService = "suspended" }), use(sandbox), core.ESubscriptionInactive},
		{"ErrTerminatedSubscription", with(func(s *core.Standing) { s.SubscriptionService = "terminated" }), use(production), core.ESubscriptionInactive},
		// A subscription governs its product's operations, not credentials or subscriptions.
		{"SuspendedSubscription/Key", with(func(s *core.Standing) { s.SubscriptionService = "suspended" }), issue(sandbox), ""},
		{"TerminatedSubscription/Subscribe", with(func(s *core.Standing) { s.SubscriptionService = "terminated" }), subscribe, ""},

		// Only an active connected business gets credentials.
		{"Business/Active", good, business("active"), ""},
		{"ErrBusiness/Suspended", good, business("suspended"), core.EInvalidTransition},
		{"ErrBusiness/Closed", good, business("closed"), core.EInvalidTransition},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := core.Entitle(tc.standing, tc.access)
			if got := code(err); got != tc.want {
				t.Fatalf("Entitle(%+v, %+v) = %v; want code %q", tc.standing, tc.access, err, tc.want)
			}
			if err != nil && err.(*core.Error).Message == "" {
				t.Errorf("refusal %s has no message", tc.want)
			}
		})
	}
}

func TestTrafficEnvironment(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		p    core.Principal
		want string
	}{
		{"DevelopmentToken", core.Principal{Kind: core.PrincipalOrganization}, "sandbox"},
		{"Operator", core.Principal{Kind: core.PrincipalOperator}, "sandbox"},
		{"SandboxKey", core.Principal{Kind: core.PrincipalOrganization, Restrictions: &core.Restrictions{Environment: "sandbox"}}, "sandbox"},
		{"ProductionKey", core.Principal{Kind: core.PrincipalOrganization, Restrictions: &core.Restrictions{Environment: "production"}}, "production"},
	} {
		if got := tc.p.TrafficEnvironment(); got != tc.want {
			t.Errorf("%s: TrafficEnvironment() = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// code is the error code of err, "" for nil.
func code(err error) string {
	if err == nil {
		return ""
	}
	return core.ErrorCode(err)
}
