package core_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/core"
)

// allowed is docs/design.md, "Subscriptions", written out independently of the implementation's table.
func allowed(action core.SubscriptionAction, commercial, service string) bool {
	if service == core.ServiceTerminated {
		return false
	}
	switch action {
	case core.ActionSelectPlan, core.ActionChangePlan:
		return commercial == "active" || commercial == "past_due"
	case core.ActionCancel:
		return commercial == "active" || commercial == "past_due" || commercial == "paused"
	case core.ActionReactivate:
		return commercial == "cancelled"
	case core.ActionSuspend:
		return service == "provisioning" || service == "active" || service == "degraded"
	case core.ActionResume:
		return service == "suspended"
	case core.ActionTerminate:
		return true
	}
	panic(action)
}

var (
	commercialStatuses = []string{"active", "past_due", "cancelled", "paused"}
	serviceStatuses    = []string{"provisioning", "active", "degraded", "suspended", "terminated"}
	actions            = []core.SubscriptionAction{core.ActionSelectPlan, core.ActionChangePlan, core.ActionCancel,
		core.ActionReactivate, core.ActionSuspend, core.ActionResume, core.ActionTerminate}
)

func TestSubscription_Apply(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 10, 8, 0, 0, 0, time.UTC)
	anchor := time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC)
	current := &core.Plan{ID: uuid.New(), BillingPeriod: core.BillingPeriodMonthly}
	next := &core.Plan{ID: uuid.New(), BillingPeriod: core.BillingPeriodAnnual}
	for _, action := range actions {
		for _, commercial := range commercialStatuses {
			for _, service := range serviceStatuses {
				if service == core.ServiceTerminated && commercial != core.CommercialCancelled {
					continue // a state the table forbids
				}
				name := string(action) + "/" + commercial + "/" + service
				s := subscriptionIn(commercial, service, current.ID, anchor)
				plan := current
				if action == core.ActionSelectPlan || action == core.ActionChangePlan {
					plan = next
				}
				err := s.Apply(action, "organization", plan, now)
				if !allowed(action, commercial, service) {
					if core.ErrorCode(err) != core.EInvalidTransition {
						t.Errorf("%s: err %v, want invalid_state_transition", name, err)
						continue
					}
					msg := err.Error()
					if !strings.Contains(msg, string(action)) || !(strings.Contains(msg, "status is "+commercial) || strings.Contains(msg, "status is "+service)) {
						t.Errorf("%s: message does not name the action and current state: %s", name, msg)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: %v", name, err)
					continue
				}
				checkInvariants(t, name, s)
				checkEffect(t, name, action, commercial, service, s, plan, now)
			}
		}
	}
}

func subscriptionIn(commercial, service string, planID uuid.UUID, anchor time.Time) *core.Subscription {
	s := &core.Subscription{ID: uuid.New(), PlanID: planID, CommercialStatus: commercial, ServiceStatus: service, BillingAnchorAt: anchor}
	renews := anchor.AddDate(0, 1, 0)
	if commercial != core.CommercialCancelled {
		s.RenewsAt = &renews
	}
	if service == core.ServiceSuspended {
		s.SuspendedAt, s.SuspendedBy = &anchor, "organization"
	}
	if commercial == core.CommercialCancelled {
		s.CancelledBy = "organization"
	}
	if service == core.ServiceTerminated {
		s.TerminatedAt = &anchor
	}
	if service != core.ServiceProvisioning {
		s.ProvisionedAt = &anchor // provisioned; TestSubscription_Resume covers the rest
	}
	return s
}

// checkInvariants are the CHECK constraints of the subscriptions table.
func checkInvariants(t *testing.T, name string, s *core.Subscription) {
	t.Helper()
	if (s.ServiceStatus == core.ServiceTerminated) != (s.TerminatedAt != nil) {
		t.Errorf("%s: terminated_at %v with service %s", name, s.TerminatedAt, s.ServiceStatus)
	}
	if s.ServiceStatus == core.ServiceTerminated && s.CommercialStatus != core.CommercialCancelled {
		t.Errorf("%s: terminated but commercial %s", name, s.CommercialStatus)
	}
	if (s.ServiceStatus == core.ServiceSuspended) != (s.SuspendedAt != nil) {
		t.Errorf("%s: suspended_at %v with service %s", name, s.SuspendedAt, s.ServiceStatus)
	}
	if s.CommercialStatus == core.CommercialCancelled && s.RenewsAt != nil {
		t.Errorf("%s: cancelled but renews at %v", name, s.RenewsAt)
	}
	if (s.ServiceStatus == core.ServiceSuspended) != (s.SuspendedBy != "") {
		t.Errorf("%s: suspended_by %q with service %s", name, s.SuspendedBy, s.ServiceStatus)
	}
	if (s.CommercialStatus == core.CommercialCancelled) != (s.CancelledBy != "") {
		t.Errorf("%s: cancelled_by %q with commercial %s", name, s.CancelledBy, s.CommercialStatus)
	}
	if (s.ServiceStatus == core.ServiceActive || s.ServiceStatus == core.ServiceDegraded) && s.ProvisionedAt == nil {
		t.Errorf("%s: service %s but never provisioned", name, s.ServiceStatus)
	}
}

// TestSubscription_Apply_Actors is who may do what (DESIGN.md §3, issue 21 item 6): an
// organization may not undo or escape the operator's suspension (resume, terminate) or
// cancellation (reactivate); everything else is open to both, and the operator may undo
// anything.
func TestSubscription_Apply_Actors(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 10, 8, 0, 0, 0, time.UTC)
	anchor := time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC)
	plan := &core.Plan{ID: uuid.New(), BillingPeriod: core.BillingPeriodMonthly}
	tests := []struct {
		name                     string
		commercial, service      string
		suspendedBy, cancelledBy string
		action                   core.SubscriptionAction
		actor                    string
		forbidden                bool
	}{
		{"ResumeOperatorSuspensionAsOrganization", "active", "suspended", "operator", "", core.ActionResume, "organization", true},
		{"ResumeOperatorSuspensionAsConnectedBusiness", "active", "suspended", "operator", "", core.ActionResume, "connected_business", true},
		{"ResumeOperatorSuspensionAsOperator", "active", "suspended", "operator", "", core.ActionResume, "operator", false},
		{"ResumeOwnSuspension", "active", "suspended", "organization", "", core.ActionResume, "organization", false},
		{"OperatorResumesOrganizationSuspension", "active", "suspended", "organization", "", core.ActionResume, "operator", false},
		{"TerminateOperatorSuspensionAsOrganization", "active", "suspended", "operator", "", core.ActionTerminate, "organization", true},
		{"TerminateOperatorSuspensionAsOperator", "active", "suspended", "operator", "", core.ActionTerminate, "operator", false},
		{"TerminateOwnSuspension", "active", "suspended", "organization", "", core.ActionTerminate, "organization", false},
		{"ReactivateOperatorCancellationAsOrganization", "cancelled", "active", "", "operator", core.ActionReactivate, "organization", true},
		{"ReactivateOperatorCancellationAsOperator", "cancelled", "active", "", "operator", core.ActionReactivate, "operator", false},
		{"ReactivateOwnCancellation", "cancelled", "active", "", "organization", core.ActionReactivate, "organization", false},
		{"CancelDuringOperatorSuspension", "active", "suspended", "operator", "", core.ActionCancel, "organization", false},
		{"ChangePlanDuringOperatorSuspension", "active", "suspended", "operator", "", core.ActionChangePlan, "organization", false},
		{"TerminateOperatorCancellationAsOrganization", "cancelled", "active", "", "operator", core.ActionTerminate, "organization", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := subscriptionIn(tc.commercial, tc.service, plan.ID, anchor)
			if s.SuspendedBy != "" {
				s.SuspendedBy = tc.suspendedBy
			}
			if s.CancelledBy != "" {
				s.CancelledBy = tc.cancelledBy
			}
			before := *s
			err := s.Apply(tc.action, tc.actor, plan, now)
			if tc.forbidden {
				if core.ErrorCode(err) != core.EForbidden || !strings.Contains(err.Error(), "by the operator") {
					t.Fatalf("err %v, want forbidden naming the operator", err)
				}
				if s.ServiceStatus != before.ServiceStatus || s.CommercialStatus != before.CommercialStatus || s.SuspendedBy != before.SuspendedBy {
					t.Errorf("a refused action changed the subscription: %+v", s)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, tc.name, s)
		})
	}
	t.Run("RecordsWhoSuspendedAndCancelled", func(t *testing.T) {
		t.Parallel()
		s := subscriptionIn("active", "active", plan.ID, anchor)
		if err := s.Apply(core.ActionSuspend, "operator", plan, now); err != nil || s.SuspendedBy != "operator" {
			t.Fatalf("suspend by the operator: %v, suspended_by %q", err, s.SuspendedBy)
		}
		if err := s.Apply(core.ActionCancel, "organization", plan, now); err != nil || s.CancelledBy != "organization" {
			t.Fatalf("cancel by the organization: %v, cancelled_by %q", err, s.CancelledBy)
		}
		if err := s.Apply(core.ActionResume, "operator", plan, now); err != nil || s.SuspendedBy != "" {
			t.Fatalf("resume by the operator: %v, suspended_by %q", err, s.SuspendedBy)
		}
		if err := s.Apply(core.ActionTerminate, "operator", plan, now); err != nil || s.CancelledBy != "organization" {
			t.Fatalf("terminate keeps who cancelled: %v, cancelled_by %q", err, s.CancelledBy)
		}
	})
}

func checkEffect(t *testing.T, name string, action core.SubscriptionAction, commercial, service string, s *core.Subscription, plan *core.Plan, now time.Time) {
	t.Helper()
	wantCommercial, wantService := commercial, service
	switch action {
	case core.ActionCancel:
		wantCommercial = core.CommercialCancelled
	case core.ActionReactivate:
		wantCommercial = core.CommercialActive
	case core.ActionSuspend:
		wantService = core.ServiceSuspended
	case core.ActionResume:
		wantService = core.ServiceActive
	case core.ActionTerminate:
		wantCommercial, wantService = core.CommercialCancelled, core.ServiceTerminated
	}
	if s.CommercialStatus != wantCommercial || s.ServiceStatus != wantService {
		t.Errorf("%s: now %s/%s, want %s/%s", name, s.CommercialStatus, s.ServiceStatus, wantCommercial, wantService)
	}
	if s.PlanID != plan.ID {
		t.Errorf("%s: plan %s, want %s", name, s.PlanID, plan.ID)
	}
	switch action {
	case core.ActionSuspend:
		if s.SuspendedAt == nil || !s.SuspendedAt.Equal(now) {
			t.Errorf("%s: suspended_at %v, want %v", name, s.SuspendedAt, now)
		}
	case core.ActionTerminate:
		if s.TerminatedAt == nil || !s.TerminatedAt.Equal(now) {
			t.Errorf("%s: terminated_at %v, want %v", name, s.TerminatedAt, now)
		}
	case core.ActionReactivate, core.ActionChangePlan, core.ActionSelectPlan:
		if s.RenewsAt == nil || !s.RenewsAt.After(now) {
			t.Errorf("%s: renews_at %v, want set after %v", name, s.RenewsAt, now)
		}
	}
}

// TestSubscription_Resume: a resumed service starts where its history and its product put it
// (docs/design.md, "Incidents and degraded service"): provisioning when it was suspended
// before it was ever provisioned, else degraded while the product has an open incident, else
// active.
func TestSubscription_Resume(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 10, 8, 0, 0, 0, time.UTC)
	anchor := time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC)
	plan := &core.Plan{ID: uuid.New(), BillingPeriod: core.BillingPeriodMonthly}
	for _, tc := range []struct {
		provisioned, incident bool
		want                  string
	}{
		{provisioned: true, incident: false, want: core.ServiceActive},
		{provisioned: true, incident: true, want: core.ServiceDegraded},
		{provisioned: false, incident: false, want: core.ServiceProvisioning},
		{provisioned: false, incident: true, want: core.ServiceProvisioning},
	} {
		name := fmt.Sprintf("Provisioned%v/IncidentOpen%v", tc.provisioned, tc.incident)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := subscriptionIn(core.CommercialActive, core.ServiceSuspended, plan.ID, anchor)
			if !tc.provisioned {
				s.ProvisionedAt = nil
			}
			s.ProductIncidentOpen = tc.incident
			if err := s.Apply(core.ActionResume, "organization", plan, now); err != nil {
				t.Fatal(err)
			}
			if s.ServiceStatus != tc.want || s.SuspendedAt != nil || s.SuspendedBy != "" {
				t.Errorf("service %s, suspended_at %v, suspended_by %q; want %s, not suspended", s.ServiceStatus, s.SuspendedAt, s.SuspendedBy, tc.want)
			}
			checkInvariants(t, name, s)
		})
	}
}

// TestSubscription_CompleteProvisioning: the end of provisioning starts only a provisioning
// service, degraded during an incident; anything else is left exactly as it is.
func TestSubscription_CompleteProvisioning(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 10, 8, 0, 0, 0, time.UTC)
	anchor := time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC)
	for _, service := range serviceStatuses {
		for _, incident := range []bool{false, true} {
			name := fmt.Sprintf("%s/IncidentOpen%v", service, incident)
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				commercial := core.CommercialActive
				if service == core.ServiceTerminated {
					commercial = core.CommercialCancelled
				}
				s := subscriptionIn(commercial, service, uuid.New(), anchor)
				s.ProductIncidentOpen = incident
				before := *s
				changed := s.CompleteProvisioning(now)
				if service != core.ServiceProvisioning {
					if changed || !reflect.DeepEqual(*s, before) {
						t.Errorf("changed %v a %s subscription: %+v", changed, service, s)
					}
					return
				}
				want := core.ServiceActive
				if incident {
					want = core.ServiceDegraded
				}
				if !changed || s.ServiceStatus != want || s.ProvisionedAt == nil || !s.ProvisionedAt.Equal(now) {
					t.Errorf("changed %v, service %s, provisioned_at %v; want %s at %v", changed, s.ServiceStatus, s.ProvisionedAt, want, now)
				}
				checkInvariants(t, name, s)
			})
		}
	}
}

// TestIncidentMoves: an incident moves running services between active and degraded only.
func TestIncidentMoves(t *testing.T) {
	t.Parallel()
	if got := core.IncidentMoves(true); got != (core.IncidentMove{From: "active", To: "degraded"}) {
		t.Errorf("opening an incident: %+v", got)
	}
	if got := core.IncidentMoves(false); got != (core.IncidentMove{From: "degraded", To: "active"}) {
		t.Errorf("resolving the last incident: %+v", got)
	}
}
