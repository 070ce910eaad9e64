package core_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/core"
)

func TestPrincipal_OrganizationFor(t *testing.T) {
	t.Parallel()
	own, other := uuid.New(), uuid.New()
	organization := &core.Principal{Kind: core.PrincipalOrganization, OrganizationID: own}
	operator := &core.Principal{Kind: core.PrincipalOperator}
	cases := []struct {
		name     string
		p        *core.Principal
		raw      string
		field    string
		want     uuid.UUID
		code     string
		location string // of the field error, for EForbidden
	}{
		{"Own", organization, own.String(), "/organization_id", own, "", ""},
		{"OwnUpperCase", organization, strings.ToUpper(own.String()), "organization_id", own, "", ""},
		{"ErrOtherInBody", organization, other.String(), "/organization_id", uuid.Nil, core.EForbidden, "body"},
		{"ErrOtherInQuery", organization, other.String(), "organization_id", uuid.Nil, core.EForbidden, "query"},
		{"ErrNotAnIDForOrganization", organization, "acme", "organization_id", uuid.Nil, core.EForbidden, "query"},
		{"OperatorAny", operator, other.String(), "/organization_id", other, "", ""},
		{"ErrOperatorNotAnID", operator, "acme", "/organization_id", uuid.Nil, core.EUnprocessable, ""},
	}
	for _, tc := range cases {
		got, err := tc.p.OrganizationFor(tc.raw, tc.field)
		if code := codeOf(err); code != tc.code || got != tc.want {
			t.Errorf("%s: %v, %v; want %v, code %q", tc.name, got, err, tc.want, tc.code)
			continue
		}
		if tc.location == "" {
			continue
		}
		var e *core.Error
		if !errors.As(err, &e) || len(e.Fields) != 1 || e.Fields[0].Location != tc.location || e.Fields[0].Pointer != tc.field {
			t.Errorf("%s: %#v, want one field error at %s %s", tc.name, err, tc.location, tc.field)
		}
	}
}
