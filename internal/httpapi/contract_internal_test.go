package httpapi

import (
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/provider/coreapi/internal/core"
)

func TestCheckScopes(t *testing.T) {
	t.Parallel()
	generateOrArchive := openapi3.SecurityRequirements{
		{"oauth2": {"invoice:generate"}},
		{"oauth2": {"invoice:archive"}},
	}
	both := openapi3.SecurityRequirements{{"oauth2": {"support:read", "support:write"}}}
	cases := []struct {
		name   string
		scopes []string
		reqs   openapi3.SecurityRequirements
		want   string // error code, "" for success
	}{
		{"FirstAlternative", []string{"invoice:generate"}, generateOrArchive, ""},
		{"SecondAlternative", []string{"invoice:archive"}, generateOrArchive, ""},
		{"ErrNoAlternative", []string{"invoice:submit"}, generateOrArchive, core.EInsufficientScope},
		{"AllOfOneRequirement", []string{"support:read", "support:write"}, both, ""},
		{"ErrOnlyPartOfRequirement", []string{"support:read"}, both, core.EInsufficientScope},
		{"ErrNoScopes", nil, both, core.EInsufficientScope},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &core.Principal{Kind: core.PrincipalOrganization, Scopes: map[string]bool{}}
			for _, s := range tc.scopes {
				p.Scopes[s] = true
			}
			err := checkScopes(p, tc.reqs)
			if tc.want == "" && err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if tc.want != "" && core.ErrorCode(err) != tc.want {
				t.Fatalf("err = %v, want %s", err, tc.want)
			}
		})
	}
	t.Run("ErrNamesMissingScope", func(t *testing.T) {
		p := &core.Principal{Kind: core.PrincipalOrganization, Scopes: map[string]bool{"support:read": true}}
		err := checkScopes(p, both)
		if err == nil || !strings.Contains(err.Error(), "support:write") || strings.Contains(err.Error(), "support:read,") {
			t.Fatalf("error must name only the missing scope: %v", err)
		}
	})
}
