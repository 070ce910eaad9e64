package core_test

import (
	"testing"

	"github.com/provider/coreapi/internal/core"
)

func TestCheckKeyAuthority(t *testing.T) {
	t.Parallel()
	key := func(environment string, scopes ...string) *core.Principal {
		set := map[string]bool{}
		for _, s := range scopes {
			set[s] = true
		}
		return &core.Principal{Kind: core.PrincipalOrganization, Scopes: set, Restrictions: &core.Restrictions{Environment: environment}}
	}
	operator := &core.Principal{Kind: core.PrincipalOperator}
	development := &core.Principal{Kind: core.PrincipalOrganization, Scopes: map[string]bool{"api-keys:write": true, "usage:read": true}}
	cases := []struct {
		name        string
		p           *core.Principal
		environment string
		scopes      []string
		want        string // error code; "" passes
	}{
		{"SameScopes", key("sandbox", "api-keys:write", "usage:read"), "sandbox", []string{"api-keys:write", "usage:read"}, ""},
		{"FewerScopes", key("sandbox", "api-keys:write", "usage:read"), "sandbox", []string{"usage:read"}, ""},
		{"ErrScopeNotHeld", key("sandbox", "api-keys:write"), "sandbox", []string{"api-keys:write", "usage:read"}, core.EInsufficientScope},
		{"ErrSandboxOnProduction", key("sandbox", "api-keys:write", "usage:read"), "production", []string{"usage:read"}, core.EForbidden},
		{"ProductionOnSandbox", key("production", "usage:read"), "sandbox", []string{"usage:read"}, ""},
		{"ProductionOnProduction", key("production", "usage:read"), "production", []string{"usage:read"}, ""},
		{"OperatorAnything", operator, "production", []string{"organizations:write"}, ""},
		{"UnrestrictedOnProduction", development, "production", []string{"usage:read"}, ""},
		{"ErrUnrestrictedScopeNotHeld", development, "sandbox", []string{"organizations:write"}, core.EInsufficientScope},
	}
	for _, tc := range cases {
		for _, action := range []string{"create", "rotate", "revoke"} {
			err := core.CheckKeyAuthority(tc.p, action, tc.environment, tc.scopes)
			got := ""
			if err != nil {
				got = core.ErrorCode(err)
			}
			if got != tc.want {
				t.Errorf("%s %s: %v, want code %q", tc.name, action, err, tc.want)
			}
		}
	}
}
