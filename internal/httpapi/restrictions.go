package httpapi

import (
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"golang.org/x/time/rate"

	"github.com/provider/coreapi/internal/core"
)

// enforceRestrictions applies the rules of the API key behind p to request r: production
// gating, allowed addresses and origins, and the key's rate limit. It sets the RateLimit-*
// headers on w for every key-authenticated request.
func (c *contract) enforceRestrictions(w http.ResponseWriter, r *http.Request, p *core.Principal) error {
	rs := p.Restrictions
	if rs == nil {
		return nil
	}
	if err := admit(rs, c.productionEnabled, r.RemoteAddr, r.Header.Get("Origin")); err != nil {
		return err
	}
	var apiKey uuid.UUID // restrictions come with a key; uuid.Nil would share one bucket
	if p.APIKeyID != nil {
		apiKey = *p.APIKeyID
	}
	if err := c.limits.take(w, apiKey, rs.RateLimitPolicy); err != nil {
		c.metrics.RateLimited(rs.RateLimitPolicy)
		return err
	}
	return nil
}

// admit applies the rules of a key that do not depend on its traffic (core.Restrictions.Admit)
// to a request from remoteAddr with Origin header origin. The token endpoint applies them
// too, before issuing a token to the key. Forwarded-for headers are not trusted: a
// deployment behind a proxy must pass the client address at the connection level; an
// address that does not parse is allowed by no allowed_ips.
func admit(rs *core.Restrictions, productionEnabled bool, remoteAddr, origin string) error {
	ap, _ := netip.ParseAddrPort(remoteAddr)
	return rs.Admit(productionEnabled, ap.Addr(), origin)
}

// rateLimits holds one token bucket per API key. Buckets live in this process only: with
// several processes each enforces the policy on the requests it serves (see README).
//
// A bucket that has filled up again is the same as a new one, so idle buckets are dropped:
// every bucketSweepInterval, take removes the full ones, and the map holds only the keys
// used within about the time a bucket takes to refill (issue 22 §4).
type rateLimits struct {
	mu        sync.Mutex
	buckets   map[bucketKey]*rate.Limiter
	now       func() time.Time
	lastSweep time.Time
}

// bucketSweepInterval is how often full buckets are dropped.
const bucketSweepInterval = time.Minute

// bucketKey names a bucket: a key's bucket starts afresh when its policy changes.
type bucketKey struct {
	apiKey uuid.UUID
	policy string
}

func newRateLimits() *rateLimits {
	return &rateLimits{buckets: map[bucketKey]*rate.Limiter{}, now: time.Now}
}

// take spends one request of key's bucket, or answers rate_limited with Retry-After.
func (l *rateLimits) take(w http.ResponseWriter, apiKey uuid.UUID, policyName string) error {
	policy := core.RateLimitPolicyNamed(policyName)
	key := bucketKey{apiKey, policyName}
	now := l.now()
	l.mu.Lock()
	if now.Sub(l.lastSweep) >= bucketSweepInterval {
		l.sweep(now)
	}
	b := l.buckets[key]
	if b == nil {
		b = rate.NewLimiter(rate.Limit(policy.Rate), policy.Burst)
		l.buckets[key] = b
	}
	l.mu.Unlock()

	allowed := b.AllowN(now, 1)
	tokens := b.TokensAt(now)
	h := w.Header()
	h.Set("RateLimit-Limit", strconv.Itoa(policy.Burst))
	h.Set("RateLimit-Remaining", strconv.Itoa(max(0, int(math.Floor(tokens)))))
	h.Set("RateLimit-Reset", strconv.Itoa(int(math.Ceil(float64(policy.Burst)-tokens)/policy.Rate)))
	if allowed {
		return nil
	}
	wait := int(math.Ceil((1 - tokens) / policy.Rate))
	h.Set("Retry-After", strconv.Itoa(max(1, wait)))
	return core.Errorf(core.ERateLimited, "The API key's rate limit (%s: %g requests/s, burst %d) is exceeded; retry after the Retry-After seconds.",
		policyName, policy.Rate, policy.Burst)
}

// sweep drops the buckets that are full at now: a new bucket would be the same. l.mu is held.
func (l *rateLimits) sweep(now time.Time) {
	for k, b := range l.buckets {
		if b.TokensAt(now) >= float64(b.Burst()) {
			delete(l.buckets, k)
		}
	}
	l.lastSweep = now
}
