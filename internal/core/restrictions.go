package core

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// Restrictions are the rules of the API key behind a principal, enforced per request.
type Restrictions struct {
	Environment     string         // sandbox or production
	AllowedIPs      []netip.Prefix // empty: any address
	AllowedOrigins  []string       // empty: any Origin
	RateLimitPolicy string         // a key of RateLimitPolicies
}

// RateLimitPolicy is a token bucket: Rate requests per second, bursts up to Burst.
type RateLimitPolicy struct {
	Rate  float64
	Burst int
}

// DefaultRateLimitPolicy applies to keys created without a policy.
const DefaultRateLimitPolicy = "standard"

// RateLimitPolicies are the named policies a key may carry.
var RateLimitPolicies = map[string]RateLimitPolicy{
	"standard": {Rate: 100, Burst: 200},
	"strict":   {Rate: 10, Burst: 20},
}

// RateLimitPolicyNamed returns the policy called name, or the default policy for a name
// that is none (a key carries only names Validate accepted).
func RateLimitPolicyNamed(name string) RateLimitPolicy {
	if policy, ok := RateLimitPolicies[name]; ok {
		return policy
	}
	return RateLimitPolicies[DefaultRateLimitPolicy]
}

// Restrictions returns the rules k imposes on every request it authenticates. A stored
// allowed_ips entry that does not parse is an internal error: Validate refused it at creation.
func (k *APIKey) Restrictions() (*Restrictions, error) {
	r := &Restrictions{
		Environment:     k.Environment,
		AllowedOrigins:  k.AllowedOrigins,
		RateLimitPolicy: DefaultRateLimitPolicy,
	}
	if k.RateLimitPolicy != nil {
		r.RateLimitPolicy = *k.RateLimitPolicy
	}
	for _, ip := range k.AllowedIPs {
		p, err := ParseAllowedIP(ip)
		if err != nil {
			return nil, fmt.Errorf("api key %s: stored allowed_ips entry %q: %w", k.ID, ip, err)
		}
		r.AllowedIPs = append(r.AllowedIPs, p)
	}
	return r, nil
}

// Admit applies the rules of a key that do not depend on its traffic to a request from
// address addr (the connection's peer; the zero Addr when it is unknown) with Origin header
// origin (empty when none was sent): production gating (EProductionGated while production
// traffic is not enabled), allowed addresses (EIPNotAllowed) and allowed origins
// (EOriginNotAllowed). A request without an Origin is no browser's and passes the origin
// rule.
func (r *Restrictions) Admit(productionEnabled bool, addr netip.Addr, origin string) error {
	if r.Environment == "production" && !productionEnabled {
		return Errorf(EProductionGated, "Production traffic is gated; use a sandbox key until production access is enabled.")
	}
	if len(r.AllowedIPs) > 0 && !r.allowsAddress(addr) {
		return Errorf(EIPNotAllowed, "The API key may not be used from this address.")
	}
	if origin != "" && len(r.AllowedOrigins) > 0 && !r.allowsOrigin(origin) {
		return Errorf(EOriginNotAllowed, "The API key may not be used from origin %q.", origin)
	}
	return nil
}

func (r *Restrictions) allowsAddress(addr netip.Addr) bool {
	addr = addr.Unmap()
	for _, p := range r.AllowedIPs {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

func (r *Restrictions) allowsOrigin(origin string) bool {
	for _, a := range r.AllowedOrigins {
		if strings.EqualFold(strings.TrimSuffix(a, "/"), origin) {
			return true
		}
	}
	return false
}

// ParseAllowedIP reads an allowed_ips entry: an address (a single-host range) or a CIDR
// range.
func ParseAllowedIP(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		return p.Masked(), err
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), nil
}

// validOrigin accepts scheme://host[:port] with no path, as browsers send in Origin.
func validOrigin(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" &&
		u.Path == "" && u.RawQuery == "" && u.Fragment == "" && u.User == nil
}
