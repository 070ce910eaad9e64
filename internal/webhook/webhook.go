// Package webhook is how the service reaches the endpoints its customers register: which URLs
// it may call (CheckURL, and the same rule again on every connection it opens), how it sends
// one signed delivery (Sender) and when it retries (Policy). It knows nothing of storage; the
// outbox and the delivery queue live in internal/postgres.
package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/provider/coreapi/internal/webhook/signature"
)

// Policy is how deliveries are made and retried.
type Policy struct {
	// Development allows http URLs and private, loopback and link-local targets.
	Development bool
	// Timeout bounds one attempt: connecting, sending and reading the answer.
	Timeout time.Duration
	// MaxAttempts is how many attempts a delivery gets before it fails for good.
	MaxAttempts int
	// RetryBase is the delay after the first failed attempt; each further one doubles it, up
	// to RetryCap, each with ±25 % jitter.
	RetryBase, RetryCap time.Duration
}

// DefaultPolicy is the production schedule: a 15 s timeout and 12 attempts whose delays
// (1, 2, 4, … 256 minutes, then 8 h twice, each ±25 %) span about a day (≈ 24.5 h).
func DefaultPolicy(development bool) Policy {
	return Policy{Development: development, Timeout: 15 * time.Second, MaxAttempts: 12, RetryBase: time.Minute, RetryCap: 8 * time.Hour}
}

// Backoff is the delay before the attempt after failed attempt number attempt (1-based).
func (p Policy) Backoff(attempt int) time.Duration {
	d := p.RetryBase
	for i := 1; i < attempt && d < p.RetryCap; i++ {
		d *= 2
	}
	d = min(d, p.RetryCap)
	// Jitter spreads the retries of many deliveries that failed together (an endpoint's outage).
	return time.Duration(float64(d) * (0.75 + 0.5*rand.Float64()))
}

// ErrRefusedTarget is the error of a URL or connection the policy does not allow.
var ErrRefusedTarget = errors.New("webhook: target refused")

// blocked are the address ranges no production delivery may reach: this host, private
// networks, link-local (cloud metadata services live there), carrier-grade NAT, and ranges
// that are not ordinary unicast destinations.
var blocked = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("169.254.0.0/16"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("224.0.0.0/3"), // multicast, reserved and broadcast
	netip.MustParsePrefix("::/128"),
	netip.MustParsePrefix("::1/128"),
	netip.MustParsePrefix("64:ff9b::/96"), // NAT64 can embed any IPv4 address
	netip.MustParsePrefix("fc00::/7"),
	netip.MustParsePrefix("fe80::/10"),
	netip.MustParsePrefix("ff00::/8"),
}

// PublicAddress reports whether a production delivery may connect to addr.
func PublicAddress(addr netip.Addr) bool {
	addr = addr.Unmap().WithZone("") // a zoned address matches no prefix; its zone is not the point
	for _, p := range blocked {
		if p.Contains(addr) {
			return false
		}
	}
	return addr.IsValid()
}

// CheckURL says why the policy refuses raw as an endpoint URL, or returns nil. Outside
// development the URL must be https, and its host must not be or resolve to an address
// PublicAddress refuses. A name that does not resolve (yet) is accepted: every delivery
// checks the addresses it connects to anyway.
func (p Policy) CheckURL(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Hostname() == "" {
		return fmt.Errorf("%w: the URL must be absolute, with a host", ErrRefusedTarget)
	}
	if u.User != nil {
		return fmt.Errorf("%w: the URL must not carry credentials", ErrRefusedTarget)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && p.Development:
	case u.Scheme == "http":
		return fmt.Errorf("%w: the URL must be https", ErrRefusedTarget)
	default:
		return fmt.Errorf("%w: the URL must be https (or http in development mode)", ErrRefusedTarget)
	}
	if p.Development {
		return nil
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") { // RFC 6761: always loopback
		return fmt.Errorf("%w: %s is a loopback host", ErrRefusedTarget, host)
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		if !PublicAddress(addr) {
			return fmt.Errorf("%w: %s is a private, loopback or link-local address", ErrRefusedTarget, addr)
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil
	}
	for _, a := range addrs {
		if !PublicAddress(a) {
			return fmt.Errorf("%w: %s resolves to %s, a private, loopback or link-local address", ErrRefusedTarget, host, a.Unmap())
		}
	}
	return nil
}

// Sender sends deliveries over HTTP under a Policy.
type Sender struct {
	policy Policy
	client *http.Client
}

// NewSender returns a sender whose connections are checked against p after DNS resolution:
// the dialer refuses to connect to an address PublicAddress refuses (outside development), so
// a name that resolved to a public address at registration and to a private one now (DNS
// rebinding) is still refused. No proxy is used and redirects are not followed (a 3xx is a
// failed attempt), so neither can lead a delivery elsewhere.
func NewSender(p Policy) *Sender {
	dialer := &net.Dialer{Timeout: p.Timeout, Control: func(network, address string, _ syscall.RawConn) error {
		if p.Development {
			return nil
		}
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%w: %s", ErrRefusedTarget, address)
		}
		if !PublicAddress(ap.Addr()) {
			return fmt.Errorf("%w: %s is a private, loopback or link-local address", ErrRefusedTarget, ap.Addr().Unmap())
		}
		return nil
	}}
	transport := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		TLSHandshakeTimeout:   p.Timeout,
		ResponseHeaderTimeout: p.Timeout,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	return &Sender{policy: p, client: &http.Client{
		Transport:     transport,
		Timeout:       p.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Policy returns the sender's policy.
func (s *Sender) Policy() Policy { return s.policy }

// Delivery is one attempt to send.
type Delivery struct {
	URL     string
	Secret  string // whsec_…
	EventID string // the webhook-id
	Body    []byte
}

// Attempt is the outcome of one attempt.
type Attempt struct {
	At         time.Time
	Succeeded  bool // a 2xx answer
	StatusCode int  // 0 when there was no answer
	Latency    time.Duration
	Error      string // why it failed; "" on success
}

// maxErrorBody bounds how much of a failed answer is kept in the attempt's error.
const maxErrorBody = 200

// Send makes one signed attempt of d and reports its outcome; it never returns an error, a
// failure is an Attempt that did not succeed.
func (s *Sender) Send(ctx context.Context, d Delivery) Attempt {
	a := Attempt{At: time.Now()}
	fail := func(format string, args ...any) Attempt {
		a.Latency = time.Since(a.At)
		a.Error = fmt.Sprintf(format, args...)
		return a
	}
	if err := s.policy.CheckURL(ctx, d.URL); err != nil {
		return fail("%v", err)
	}
	header, err := signature.Headers(d.Secret, d.EventID, a.At, d.Body)
	if err != nil {
		return fail("%v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.policy.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(d.Body))
	if err != nil {
		return fail("%v", err)
	}
	req.Header = header
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "provider-coreapi-webhooks/1")
	resp, err := s.client.Do(req)
	if err != nil {
		return fail("%v", err)
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // lets the connection be reused
	a.StatusCode = resp.StatusCode
	a.Latency = time.Since(a.At)
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		a.Succeeded = true
		return a
	}
	a.Error = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, strings.ToValidUTF8(string(snippet), "?"))
	return a
}
