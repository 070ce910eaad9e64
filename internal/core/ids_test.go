package core_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/core"
)

func TestProductAndPlanNamed(t *testing.T) {
	t.Parallel()
	id := uuid.New()
	for name, parse := range map[string]struct {
		named   func(string) (uuid.UUID, error)
		unknown func(string) error
	}{"Product": {core.ProductNamed, core.UnknownProduct}, "Plan": {core.PlanNamed, core.UnknownPlan}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got, err := parse.named(strings.ToUpper(id.String())); err != nil || got != id {
				t.Errorf("a UUID in any spelling: %v, %v", got, err)
			}
			// Text that is not a UUID names nothing: the answer of an unknown id, naming the text.
			_, err := parse.named("growth")
			if want := parse.unknown("growth"); !reflect.DeepEqual(err, want) || codeOf(err) != core.EUnprocessable {
				t.Errorf("not a UUID: %v, want %v", err, want)
			}
		})
	}
}

func TestGrowthOrganizationIn(t *testing.T) {
	t.Parallel()
	own := uuid.New()
	tenant := core.WithPrincipal(context.Background(), &core.Principal{Kind: core.PrincipalOrganization, OrganizationID: own})
	operator := core.WithPrincipal(context.Background(), &core.Principal{Kind: core.PrincipalOperator})
	for _, tc := range []struct {
		name     string
		ctx      context.Context
		raw, key string
		code     string
	}{
		{"OwnIdCanonical", tenant, strings.ToUpper(own.String()), own.String(), ""},
		{"AnotherOrganization", tenant, uuid.NewString(), "", core.EForbidden},
		{"TenantFreeText", tenant, "public-site", "", core.EForbidden},
		{"OperatorFreeText", operator, "public-site", "public-site", ""},
		{"OperatorUUIDCanonical", operator, "{" + own.String() + "}", own.String(), ""},
		{"NoPrincipal", context.Background(), own.String(), "", core.EUnauthenticated},
	} {
		key, err := core.GrowthOrganizationIn(tc.ctx, tc.raw, "organization_id")
		if codeOf(err) != tc.code || (err == nil && key != tc.key) {
			t.Errorf("%s: %q, %v; want %q, %s", tc.name, key, err, tc.key, tc.code)
		}
	}
}
