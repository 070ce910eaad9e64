package core_test

import (
	"net/netip"
	"testing"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/core"
)

func TestParseAllowedIP(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want string // the prefix; "" when refused
	}{
		{"203.0.113.7", "203.0.113.7/32"},
		{"203.0.113.0/24", "203.0.113.0/24"},
		{"203.0.113.9/24", "203.0.113.0/24"}, // host bits masked
		{"2001:db8::1", "2001:db8::1/128"},
		{"2001:db8::/32", "2001:db8::/32"},
		{"::ffff:203.0.113.7", "203.0.113.7/32"}, // a mapped address is the IPv4 one
		{"", ""},
		{"localhost", ""},
		{"203.0.113.0/33", ""},
		{"203.0.113", ""},
		{"203.0.113.7:443", ""},
	}
	for _, tc := range cases {
		got, err := core.ParseAllowedIP(tc.in)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("ParseAllowedIP(%q) = %v, want an error", tc.in, got)
		case tc.want != "" && (err != nil || got.String() != tc.want):
			t.Errorf("ParseAllowedIP(%q) = %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

func TestAPIKey_Restrictions(t *testing.T) {
	t.Parallel()
	strict := "strict"
	t.Run("Defaults", func(t *testing.T) {
		t.Parallel()
		r, err := (&core.APIKey{Environment: "sandbox"}).Restrictions()
		if err != nil {
			t.Fatal(err)
		}
		if r.Environment != "sandbox" || r.RateLimitPolicy != core.DefaultRateLimitPolicy || len(r.AllowedIPs) != 0 || len(r.AllowedOrigins) != 0 {
			t.Errorf("restrictions = %+v", r)
		}
	})
	t.Run("Stored", func(t *testing.T) {
		t.Parallel()
		k := &core.APIKey{Environment: "production", RateLimitPolicy: &strict,
			AllowedIPs: []string{"203.0.113.7", "2001:db8::/32"}, AllowedOrigins: []string{"https://app.example.com"}}
		r, err := k.Restrictions()
		if err != nil {
			t.Fatal(err)
		}
		want := []netip.Prefix{netip.MustParsePrefix("203.0.113.7/32"), netip.MustParsePrefix("2001:db8::/32")}
		if r.Environment != "production" || r.RateLimitPolicy != "strict" || len(r.AllowedIPs) != 2 ||
			r.AllowedIPs[0] != want[0] || r.AllowedIPs[1] != want[1] || r.AllowedOrigins[0] != "https://app.example.com" {
			t.Errorf("restrictions = %+v", r)
		}
	})
	t.Run("ErrStoredAddressUnreadable", func(t *testing.T) {
		t.Parallel()
		_, err := (&core.APIKey{ID: uuid.New(), AllowedIPs: []string{"not an address"}}).Restrictions()
		if err == nil || core.ErrorCode(err) != core.EInternal {
			t.Errorf("err = %v, want an internal error", err)
		}
	})
}

func TestRestrictions_Admit(t *testing.T) {
	t.Parallel()
	sandbox := &core.Restrictions{Environment: "sandbox"}
	production := &core.Restrictions{Environment: "production"}
	addresses := &core.Restrictions{Environment: "sandbox", AllowedIPs: []netip.Prefix{
		netip.MustParsePrefix("203.0.113.0/24"), netip.MustParsePrefix("2001:db8::/32")}}
	origins := &core.Restrictions{Environment: "sandbox", AllowedOrigins: []string{"https://app.example.com/", "http://localhost:3000"}}
	addr := netip.MustParseAddr
	cases := []struct {
		name       string
		r          *core.Restrictions
		production bool // production traffic enabled
		addr       netip.Addr
		origin     string
		want       string // error code; "" admits
	}{
		{"Sandbox", sandbox, false, addr("198.51.100.1"), "", ""},
		{"ErrProductionGated", production, false, addr("198.51.100.1"), "", core.EProductionGated},
		{"ProductionEnabled", production, true, addr("198.51.100.1"), "", ""},
		{"AddressInRange", addresses, false, addr("203.0.113.200"), "", ""},
		{"MappedAddressInRange", addresses, false, addr("::ffff:203.0.113.200"), "", ""},
		{"IPv6InRange", addresses, false, addr("2001:db8::42"), "", ""},
		{"ErrAddressOutOfRange", addresses, false, addr("198.51.100.1"), "", core.EIPNotAllowed},
		{"ErrAddressUnknown", addresses, false, netip.Addr{}, "", core.EIPNotAllowed},
		{"AnyAddressWithoutList", sandbox, false, netip.Addr{}, "", ""},
		{"OriginListed", origins, false, addr("198.51.100.1"), "https://app.example.com", ""},
		{"OriginListedOtherCase", origins, false, addr("198.51.100.1"), "HTTPS://APP.EXAMPLE.COM", ""},
		{"OriginWithPort", origins, false, addr("198.51.100.1"), "http://localhost:3000", ""},
		{"ErrOriginNotListed", origins, false, addr("198.51.100.1"), "https://evil.example.com", core.EOriginNotAllowed},
		{"ErrOriginOtherPort", origins, false, addr("198.51.100.1"), "http://localhost:3001", core.EOriginNotAllowed},
		{"NoOriginSent", origins, false, addr("198.51.100.1"), "", ""},
		{"AnyOriginWithoutList", sandbox, false, addr("198.51.100.1"), "https://evil.example.com", ""},
	}
	for _, tc := range cases {
		err := tc.r.Admit(tc.production, tc.addr, tc.origin)
		if got := codeOf(err); got != tc.want {
			t.Errorf("%s: %v, want code %q", tc.name, err, tc.want)
		}
	}
}

func TestRateLimitPolicyNamed(t *testing.T) {
	t.Parallel()
	if got := core.RateLimitPolicyNamed("strict"); got != core.RateLimitPolicies["strict"] {
		t.Errorf("strict = %+v", got)
	}
	if got := core.RateLimitPolicyNamed("unheard-of"); got != core.RateLimitPolicies[core.DefaultRateLimitPolicy] {
		t.Errorf("unknown name = %+v, want the default policy", got)
	}
}

// codeOf is the error code of err, "" for nil.
func codeOf(err error) string {
	if err == nil {
		return ""
	}
	return core.ErrorCode(err)
}
