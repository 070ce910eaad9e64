package httpapi

import (
	"context"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/core"
)

// Failed authentications are throttled per source: the client address (an IPv6 client by
// its /64, which one host commonly holds whole) and the API key named (by prefix in a
// bearer key, by client_id at the token endpoint). A source that has failed more than
// authFailureLimit times within authFailureWindow is answered 429 rate_limited, with
// Retry-After, before its credential is looked at, until that window ends. Loopback is not
// exempt. The counters live in this process only (like the rate limiter's buckets): with
// several processes, each allows authFailureLimit failures per window.
const (
	authFailureLimit  = 100
	authFailureWindow = time.Minute
	// maxAuthFailureSources bounds the memory of the counters: past it, counters whose
	// window has ended are dropped, then (a flood from that many sources) arbitrary ones.
	maxAuthFailureSources = 65_536
	// maxSourceKeyLength is the longest key name counted: real prefixes are far shorter, and
	// a longer name is throttled by its address alone rather than kept in memory.
	maxSourceKeyLength = 64
)

// failureSource is one throttled source: an address, or a key named by the credential.
type failureSource struct {
	addr netip.Addr
	key  string
}

func (s failureSource) valid() bool { return s.addr.IsValid() || s.key != "" }

// failureCount counts the failures of a source in the window that started at since.
type failureCount struct {
	since time.Time
	n     int
}

// authFailures holds the failure counters of one process.
type authFailures struct {
	mu      sync.Mutex
	sources map[failureSource]*failureCount
	now     func() time.Time
}

func newAuthFailures() *authFailures {
	return &authFailures{sources: map[failureSource]*failureCount{}, now: time.Now}
}

// addressSource is the source of the peer address remote (a RemoteAddr). Forwarded-for
// headers are not trusted, as for allowed_ips.
func addressSource(remote string) failureSource {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		return failureSource{}
	}
	addr := ap.Addr().Unmap().WithZone("")
	if addr.Is6() {
		addr = netip.PrefixFrom(addr, 64).Masked().Addr()
	}
	return failureSource{addr: addr}
}

// keySource is the source of the API key a bearer credential names: its prefix. Access
// tokens name no key and are throttled by address alone.
func keySource(token string) failureSource {
	if prefix, _, ok := core.SplitAPIKey(token); ok && len(prefix) <= maxSourceKeyLength {
		return failureSource{key: prefix}
	}
	return failureSource{}
}

// clientSource is the source of the key a token request's client_id names (its prefix or,
// lower-cased, its id).
func clientSource(clientID string) failureSource {
	if id, err := uuid.Parse(clientID); err == nil {
		return failureSource{key: id.String()}
	}
	if clientID == "" || len(clientID) > maxSourceKeyLength {
		return failureSource{}
	}
	return failureSource{key: clientID}
}

// throttled answers rate_limited when either source has failed more than the limit in its
// current window.
func (f *authFailures) throttled(a, b failureSource) error {
	now := f.now()
	var wait time.Duration
	f.mu.Lock()
	if len(f.sources) > 0 {
		for _, s := range [2]failureSource{a, b} {
			c := f.sources[s]
			if c == nil {
				continue
			}
			if end := c.since.Add(authFailureWindow); !now.Before(end) {
				delete(f.sources, s)
			} else if c.n > authFailureLimit {
				wait = max(wait, end.Sub(now))
			}
		}
	}
	f.mu.Unlock()
	if wait == 0 {
		return nil
	}
	return &core.Error{Code: core.ERateLimited, RetryAfter: wait,
		Message: "Too many failed authentications from this client address or for this credential; retry after the Retry-After seconds."}
}

// failed counts one failed authentication against both sources.
func (f *authFailures) failed(a, b failureSource) {
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range [2]failureSource{a, b} {
		if !s.valid() {
			continue
		}
		c := f.sources[s]
		if c == nil || !now.Before(c.since.Add(authFailureWindow)) {
			if c == nil && len(f.sources) >= maxAuthFailureSources {
				f.shrink(now)
			}
			c = &failureCount{since: now}
			s.key = strings.Clone(s.key) // not the request's memory
			f.sources[s] = c
		}
		c.n++
	}
}

// shrink makes room: it drops the counters whose window has ended and, when that is not
// enough, arbitrary ones down to three quarters of the bound, so it runs once per quarter
// of the bound of new sources at most.
func (f *authFailures) shrink(now time.Time) {
	for s, c := range f.sources {
		if !now.Before(c.since.Add(authFailureWindow)) {
			delete(f.sources, s)
		}
	}
	for s := range f.sources {
		if len(f.sources) <= maxAuthFailureSources*3/4 {
			break
		}
		delete(f.sources, s)
	}
}

// throttledAuthenticator throttles failed bearer authentications (every kind: keys, access
// tokens, operator and development tokens). A request without a credential is refused
// without counting: there is nothing to guess.
type throttledAuthenticator struct {
	Authenticator
	failures *authFailures
}

func (a *throttledAuthenticator) Authenticate(ctx context.Context, r *http.Request) (*core.Principal, error) {
	token, ok := bearer(r)
	if !ok {
		return a.Authenticator.Authenticate(ctx, r)
	}
	addr, key := addressSource(r.RemoteAddr), keySource(token)
	if err := a.failures.throttled(addr, key); err != nil {
		return nil, err
	}
	p, err := a.Authenticator.Authenticate(ctx, r)
	if core.ErrorCode(err) == core.EUnauthenticated {
		a.failures.failed(addr, key)
	}
	return p, err
}

// throttledTokens throttles failed client authentications at the token endpoint.
type throttledTokens struct {
	core.CredentialService
	failures *authFailures
}

func (c *throttledTokens) IssueToken(ctx context.Context, in core.TokenRequest) (*core.AccessToken, error) {
	addr, key := addressSource(remoteAddr(ctx)), clientSource(in.ClientID)
	if err := c.failures.throttled(addr, key); err != nil {
		return nil, err
	}
	token, err := c.CredentialService.IssueToken(ctx, in)
	if core.ErrorCode(err) == core.EInvalidClient {
		c.failures.failed(addr, key)
	}
	return token, err
}
