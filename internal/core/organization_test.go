package core_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/core"
)

// organizationMoveAllowed is docs/design.md, "Organization administration", written out
// independently of the implementation's tables.
func organizationMoveAllowed(field, from, to string) bool {
	if from == to {
		return true
	}
	switch field {
	case "lifecycle_status":
		return from == "pending" && (to == "active" || to == "terminated") ||
			from == "active" && (to == "suspended" || to == "terminated") ||
			from == "suspended" && (to == "active" || to == "terminated") ||
			from == "terminated" && to == "archived"
	case "verification_status":
		return from == "unverified" && to == "pending_review" ||
			from == "pending_review" && (to == "verified" || to == "rejected") ||
			from == "rejected" && to == "pending_review"
	case "risk_status", "data_residency_policy":
		return true
	}
	panic(field)
}

var organizationStatusValues = map[string][]string{
	"lifecycle_status":      {"pending", "active", "suspended", "terminated", "archived"},
	"verification_status":   {"unverified", "pending_review", "verified", "rejected"},
	"risk_status":           {"normal", "watch", "restricted", "suspended_risk"},
	"data_residency_policy": {"sa_only", "sa_primary_intl_backup", "unrestricted"},
}

func newOrganization() *core.Organization {
	vat := "310123456700003"
	return &core.Organization{
		ID: uuid.New(), LegalNameAr: "شركة", LegalNameEn: "Example Co", DisplayName: "Example",
		OrganizationType: "standard_customer", Country: "SA", VatReference: &vat,
		VerificationStatus: "unverified", RiskStatus: "normal", DataResidencyPolicy: "sa_only", LifecycleStatus: "pending",
	}
}

// statusUpdate is an update setting one operator-only field, and a pointer to that field of o.
func statusUpdate(o *core.Organization, field, to string) (core.OrganizationUpdate, *string) {
	var in core.OrganizationUpdate
	set := core.Field[string]{Set: true, Value: &to}
	switch field {
	case "lifecycle_status":
		in.LifecycleStatus = set
		return in, &o.LifecycleStatus
	case "verification_status":
		in.VerificationStatus = set
		return in, &o.VerificationStatus
	case "risk_status":
		in.RiskStatus = set
		return in, &o.RiskStatus
	case "data_residency_policy":
		in.DataResidencyPolicy = set
		return in, &o.DataResidencyPolicy
	}
	panic(field)
}

// TestOrganization_Apply_Transitions walks every field × from × to for the operator.
func TestOrganization_Apply_Transitions(t *testing.T) {
	t.Parallel()
	for field, values := range organizationStatusValues {
		for _, from := range values {
			for _, to := range values {
				name := fmt.Sprintf("%s/%s->%s", field, from, to)
				o := newOrganization()
				in, current := statusUpdate(o, field, to)
				*current = from
				before := *o
				changed, err := o.Apply(in, core.ActorOperator)
				if !organizationMoveAllowed(field, from, to) {
					if core.ErrorCode(err) != core.EInvalidTransition {
						t.Errorf("%s: err %v, want invalid_state_transition", name, err)
						continue
					}
					if msg := err.Error(); !strings.Contains(msg, field) || !strings.Contains(msg, "from "+from+" to "+to) {
						t.Errorf("%s: the message does not name the field, from and to: %s", name, msg)
					}
					if *o != before || changed {
						t.Errorf("%s: a refused update changed the organization", name)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: %v", name, err)
					continue
				}
				if *current != to || changed != (from != to) {
					t.Errorf("%s: now %s, changed %v", name, *current, changed)
				}
			}
		}
	}
}

// TestOrganization_Apply_Actors: the statuses are the operator's; an organization sending
// any of them, even with its current value, is refused and nothing changes.
func TestOrganization_Apply_Actors(t *testing.T) {
	t.Parallel()
	for field, values := range organizationStatusValues {
		for _, actor := range []string{"organization", "connected_business"} {
			o := newOrganization()
			name := "NewName"
			in, current := statusUpdate(o, field, values[0])
			*current = values[0]
			in.DisplayName = core.Field[string]{Set: true, Value: &name}
			before := *o
			changed, err := o.Apply(in, actor)
			var e *core.Error
			if core.ErrorCode(err) != core.EForbidden || !errors.As(err, &e) || len(e.Fields) != 1 || e.Fields[0].Pointer != "/"+field {
				t.Errorf("%s by %s: err %v, want forbidden naming /%s", field, actor, err, field)
			}
			if changed || *o != before {
				t.Errorf("%s by %s: a refused update changed the organization", field, actor)
			}
		}
	}
}

// TestOrganization_Apply_Fields: names and references are the organization's; null clears a
// reference; a value equal to the current one is no change.
func TestOrganization_Apply_Fields(t *testing.T) {
	t.Parallel()
	str := func(s string) core.Field[string] { return core.Field[string]{Set: true, Value: &s} }
	null := core.Field[string]{Set: true}
	tests := []struct {
		name    string
		in      core.OrganizationUpdate
		changed bool
		check   func(o *core.Organization) bool
	}{
		{"Empty", core.OrganizationUpdate{}, false, func(o *core.Organization) bool { return true }},
		{"SameName", core.OrganizationUpdate{DisplayName: str("Example")}, false, func(o *core.Organization) bool { return o.DisplayName == "Example" }},
		{"SameVat", core.OrganizationUpdate{VatReference: str("310123456700003")}, false, func(o *core.Organization) bool { return *o.VatReference == "310123456700003" }},
		{"ClearAbsentReference", core.OrganizationUpdate{NationalAddressReference: null}, false, func(o *core.Organization) bool { return o.NationalAddressReference == nil }},
		{"ClearVat", core.OrganizationUpdate{VatReference: null}, true, func(o *core.Organization) bool { return o.VatReference == nil }},
		{"Names", core.OrganizationUpdate{LegalNameAr: str("شركة جديدة"), LegalNameEn: str("New Co"), DisplayName: str("New")}, true,
			func(o *core.Organization) bool {
				return o.LegalNameAr == "شركة جديدة" && o.LegalNameEn == "New Co" && o.DisplayName == "New"
			}},
		{"References", core.OrganizationUpdate{CommercialRegistrationReference: str("1010"), NationalAddressReference: str("RRRD2929")}, true,
			func(o *core.Organization) bool {
				return *o.CommercialRegistrationReference == "1010" && *o.NationalAddressReference == "RRRD2929"
			}},
	}
	for _, tc := range tests {
		o := newOrganization()
		changed, err := o.Apply(tc.in, "organization")
		if err != nil || changed != tc.changed || !tc.check(o) {
			t.Errorf("%s: changed %v, err %v, organization %+v", tc.name, changed, err, o)
		}
	}
}

// TestConnectedBusiness_Apply: any status to any other, the operator's decision stands, and a
// body with lifecycle_status is always a write.
func TestConnectedBusiness_Apply(t *testing.T) {
	t.Parallel()
	statuses := []string{core.BusinessActive, core.BusinessSuspended, core.BusinessClosed}
	for _, from := range statuses {
		for _, decidedBy := range []string{"organization", core.ActorOperator} {
			for _, to := range statuses {
				for _, actor := range []string{"organization", core.ActorOperator} {
					if from == core.BusinessActive && decidedBy == core.ActorOperator {
						continue // an active business has no decision standing
					}
					name := fmt.Sprintf("%s(by %s)->%s by %s", from, decidedBy, to, actor)
					cb := &core.ConnectedBusiness{ID: uuid.New(), DisplayName: "M", LegalNameEn: "M LLC", LifecycleStatus: from}
					if from != core.BusinessActive {
						cb.LifecycleDecidedBy = decidedBy
					}
					before := *cb
					write, err := cb.Apply(core.ConnectedBusinessUpdate{LifecycleStatus: core.Field[string]{Set: true, Value: &to}}, actor)
					if from != core.BusinessActive && decidedBy == core.ActorOperator && actor != core.ActorOperator {
						if core.ErrorCode(err) != core.EForbidden || write || !sameBusiness(*cb, before) {
							t.Errorf("%s: err %v, write %v, want forbidden and no change", name, err, write)
						}
						continue
					}
					if err != nil || !write || cb.LifecycleStatus != to {
						t.Errorf("%s: err %v, write %v, status %s", name, err, write, cb.LifecycleStatus)
					}
					if wantBy := map[bool]string{true: "", false: actor}[to == core.BusinessActive]; cb.LifecycleDecidedBy != wantBy {
						t.Errorf("%s: decided by %q, want %q", name, cb.LifecycleDecidedBy, wantBy)
					}
				}
			}
		}
	}
	cb := &core.ConnectedBusiness{DisplayName: "M", LegalNameEn: "M LLC", LifecycleStatus: core.BusinessActive}
	same := "M"
	if write, err := cb.Apply(core.ConnectedBusinessUpdate{DisplayName: core.Field[string]{Set: true, Value: &same}}, "organization"); write || err != nil {
		t.Errorf("a patch that changes nothing and carries no lifecycle_status: write %v, err %v", write, err)
	}
}

func sameBusiness(a, b core.ConnectedBusiness) bool {
	return a.LifecycleStatus == b.LifecycleStatus && a.LifecycleDecidedBy == b.LifecycleDecidedBy && a.DisplayName == b.DisplayName
}

// TestOrganization_EndsSubscriptions: only the move into terminated ends the organization's
// subscriptions; every other lifecycle move, and none, leaves them alone.
func TestOrganization_EndsSubscriptions(t *testing.T) {
	t.Parallel()
	values := organizationStatusValues["lifecycle_status"]
	for _, from := range values {
		for _, to := range values {
			before, after := newOrganization(), newOrganization()
			before.LifecycleStatus, after.LifecycleStatus = from, to
			want := to == "terminated" && from != "terminated"
			if got := after.EndsSubscriptions(before); got != want {
				t.Errorf("%s -> %s: EndsSubscriptions %v, want %v", from, to, got, want)
			}
		}
	}
}
