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
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/provider/coreapi/internal/telemetry"
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
	// MaxRetryAfter bounds how long a receiver's Retry-After (on a 429 or 503) may delay the
	// next attempt.
	MaxRetryAfter time.Duration
	// Tracing, when set, makes each attempt a span with the HTTP request as its child
	// (internal/telemetry); nil: no spans.
	Tracing trace.TracerProvider
}

// DefaultPolicy is the production schedule: a 15 s timeout and 12 attempts whose delays
// (1, 2, 4, … 256 minutes, then 8 h twice, each ±25 %) span about a day (≈ 24.5 h); a
// Retry-After delays an attempt by up to 8 h.
func DefaultPolicy(development bool) Policy {
	return Policy{Development: development, Timeout: 15 * time.Second, MaxAttempts: 12, RetryBase: time.Minute, RetryCap: 8 * time.Hour,
		MaxRetryAfter: 8 * time.Hour}
}

// RetryDelay is the delay before the attempt that follows failed attempt number attempt whose
// outcome was r: the schedule's backoff, or the receiver's Retry-After when that is longer,
// up to MaxRetryAfter.
func (p Policy) RetryDelay(attempt int, r Attempt) time.Duration {
	return max(p.Backoff(attempt), min(r.RetryAfter, p.MaxRetryAfter))
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
	netip.MustParsePrefix("64:ff9b::/96"),   // NAT64 can embed any IPv4 address
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64 (RFC 8215): never a public destination
	netip.MustParsePrefix("fc00::/7"),
	netip.MustParsePrefix("fe80::/10"),
	netip.MustParsePrefix("fec0::/10"), // site-local, deprecated but still routed by some stacks
	netip.MustParsePrefix("ff00::/8"),
}

// Transition ranges of IPv6 that carry an IPv4 address inside them: a packet to one of them
// may end up at that IPv4 address, so the IPv4 address must be allowed too.
var (
	ipv4Compatible = netip.MustParsePrefix("::/96")           // ::a.b.c.d (deprecated, RFC 4291)
	ipv4Translated = netip.MustParsePrefix("::ffff:0:0:0/96") // SIIT ::ffff:0:a.b.c.d (RFC 2765)
	sixToFour      = netip.MustParsePrefix("2002::/16")       // 2002:AABB:CCDD::/48 (RFC 3056)
	teredo         = netip.MustParsePrefix("2001::/32")       // server in bits 32-63, client inverted in 96-127 (RFC 4380)
)

// embeddedIPv4 returns the IPv4 addresses a transition address carries: the one of an
// IPv4-compatible, IPv4-translated or 6to4 address, the server and client of a Teredo one.
// (IPv4-mapped addresses are unmapped before this; NAT64 prefixes are blocked whole.)
func embeddedIPv4(addr netip.Addr) []netip.Addr {
	if !addr.Is6() {
		return nil
	}
	b := addr.As16()
	v4 := func(p []byte) netip.Addr { return netip.AddrFrom4([4]byte(p)) }
	switch {
	case ipv4Compatible.Contains(addr), ipv4Translated.Contains(addr):
		return []netip.Addr{v4(b[12:16])}
	case sixToFour.Contains(addr):
		return []netip.Addr{v4(b[2:6])}
	case teredo.Contains(addr):
		client := [4]byte{^b[12], ^b[13], ^b[14], ^b[15]}
		return []netip.Addr{v4(b[4:8]), netip.AddrFrom4(client)}
	}
	return nil
}

// PublicAddress reports whether a production delivery may connect to addr: it is in no
// blocked range, and neither is any IPv4 address it embeds.
func PublicAddress(addr netip.Addr) bool {
	addr = addr.Unmap().WithZone("") // a zoned address matches no prefix; its zone is not the point
	if !addr.IsValid() {
		return false
	}
	for _, p := range blocked {
		if p.Contains(addr) {
			return false
		}
	}
	for _, v4 := range embeddedIPv4(addr) {
		if !PublicAddress(v4) {
			return false
		}
	}
	return true
}

// CheckURL says why the policy refuses raw as an endpoint URL, or returns nil. In every mode
// the URL must be absolute, without credentials, with a port (if any) from 1 to 65535, and a
// host that is not an IPv4 address in any form but the canonical dotted quad: C resolvers
// read 2130706433, 0x7f000001, 0177.0.0.1 and 127.1 as 127.0.0.1, so such a host would be
// checked as a name and connected to as an address; nor a non-ASCII name (see dialHost).
// Outside development the URL must be https, and its host must not be an address with a zone,
// nor be or resolve to an address PublicAddress refuses. A name that does not resolve (yet) is
// accepted: every delivery checks the addresses it connects to anyway.
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
	if err := checkPort(u.Port()); err != nil {
		return err
	}
	host, err := dialHost(u)
	if err != nil {
		return err
	}
	addr, err := netip.ParseAddr(host)
	literal := err == nil
	if !literal && endsInNumber(host) {
		return fmt.Errorf("%w: %s is a numeric host that is not a dotted-quad IPv4 address; write the address as a.b.c.d", ErrRefusedTarget, u.Hostname())
	}
	if p.Development {
		return nil
	}
	if literal && addr.Zone() != "" {
		return fmt.Errorf("%w: an address with a zone (%s) names no host on the internet", ErrRefusedTarget, addr)
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") { // RFC 6761: always loopback
		return fmt.Errorf("%w: %s is a loopback host", ErrRefusedTarget, host)
	}
	if literal {
		if !PublicAddress(addr) {
			return fmt.Errorf("%w: %s is a private, loopback, link-local, unspecified or multicast address, or embeds one", ErrRefusedTarget, addr)
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

// checkPort refuses a port that is not a decimal number from 1 to 65535 (written without
// leading zeros); "" (no port: the scheme's) is allowed.
func checkPort(port string) error {
	if port == "" {
		return nil
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
		return fmt.Errorf("%w: the port must be a number from 1 to 65535, not %q", ErrRefusedTarget, port)
	}
	return nil
}

// dialHost is the host of u as the HTTP client will dial it: lower case, without a trailing
// dot. A host that is not ASCII is refused: net/http would map it with IDNA first (UTS 46 maps
// fullwidth digits and ideographic full stops to ASCII, so "１２７。０。０。１" is dialled as
// 127.0.0.1), and an internationalised name can always be written in its ASCII (xn--) form.
func dialHost(u *url.URL) (string, error) {
	host := u.Hostname()
	for i := range len(host) {
		if host[i] >= utf8.RuneSelf {
			return "", fmt.Errorf("%w: write the host name %q in its ASCII (xn--) form", ErrRefusedTarget, host)
		}
	}
	return strings.ToLower(strings.TrimSuffix(host, ".")), nil
}

// endsInNumber reports whether host is, by the WHATWG URL standard, an IPv4 address rather
// than a name: its last label is decimal digits or 0x followed by hex digits. netip accepts
// only the canonical dotted quad, so a host that ends in a number and does not parse there is
// one of the forms (integer, hex, octal, fewer than four parts, too many) that resolvers read
// differently from one another.
func endsInNumber(host string) bool {
	last := host[strings.LastIndexByte(host, '.')+1:]
	if hex, ok := strings.CutPrefix(last, "0x"); ok {
		return strings.Trim(hex, "0123456789abcdef") == ""
	}
	return last != "" && strings.Trim(last, "0123456789") == ""
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
		Transport:     telemetry.Transport(transport, p.Tracing),
		Timeout:       p.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Policy returns the sender's policy.
func (s *Sender) Policy() Policy { return s.policy }

// Delivery is one attempt to send.
type Delivery struct {
	URL    string
	Secret string // whsec_…
	// PreviousSecret is the secret Secret replaced, during its grace period ("" otherwise):
	// the delivery carries a signature with each, so receivers verify with either.
	PreviousSecret string
	EventID        string // the webhook-id
	Body           []byte
}

// Attempt is the outcome of one attempt.
type Attempt struct {
	At         time.Time
	Succeeded  bool // a 2xx answer
	StatusCode int  // 0 when there was no answer
	Latency    time.Duration
	Error      string // why it failed; "" on success
	// ResponseBody is the first bytes (at most MaxResponseBody) of the answer, as valid
	// UTF-8 text without NUL bytes; "" when there was no answer.
	ResponseBody string
	// RetryAfter is how long a 429 or 503 answer asked the sender to wait (its Retry-After, in
	// seconds or as an HTTP date); 0 otherwise.
	RetryAfter time.Duration
}

// Gone reports whether the receiver answered 410 Gone: it wants no more deliveries.
func (a Attempt) Gone() bool { return a.StatusCode == http.StatusGone }

// MaxResponseBody bounds how much of an answer an attempt keeps, and maxErrorBody how much of
// a failed one is repeated in its error.
const (
	MaxResponseBody = 1024
	maxErrorBody    = 200
)

// Send makes one signed attempt of d and reports its outcome; it never returns an error, a
// failure is an Attempt that did not succeed.
func (s *Sender) Send(ctx context.Context, d Delivery) Attempt {
	if s.policy.Tracing == nil {
		return s.send(ctx, d)
	}
	// The attempt's span: the event and the outcome, never the URL's query, the secret or
	// what the receiver answered (its HTTP request is the child span, internal/telemetry).
	ctx, span := s.policy.Tracing.Tracer("github.com/provider/coreapi/internal/webhook").Start(ctx, "webhook delivery",
		trace.WithAttributes(attribute.String("webhook.event_id", d.EventID)))
	defer span.End()
	a := s.send(ctx, d)
	if a.StatusCode != 0 {
		span.SetAttributes(attribute.Int("http.response.status_code", a.StatusCode))
	}
	if !a.Succeeded {
		span.SetStatus(codes.Error, "the attempt failed")
	}
	return a
}

func (s *Sender) send(ctx context.Context, d Delivery) Attempt {
	a := Attempt{At: time.Now()}
	fail := func(format string, args ...any) Attempt {
		a.Latency = time.Since(a.At)
		a.Error = fmt.Sprintf(format, args...)
		return a
	}
	if err := s.policy.CheckURL(ctx, d.URL); err != nil {
		return fail("%v", err)
	}
	header, err := signedHeaders(d, a.At)
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
	prefix, _ := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBody))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // lets the connection be reused
	a.StatusCode = resp.StatusCode
	a.Latency = time.Since(a.At)
	a.ResponseBody = storableText(prefix)
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		a.Succeeded = true
		return a
	}
	a.Error = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, storableText(prefix[:min(len(prefix), maxErrorBody)]))
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		a.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	return a
}

// signedHeaders are the Standard Webhooks headers of d sent at t: webhook-signature carries the
// signature with the current secret, then (during a rotation's grace period) the one with the
// previous secret, space-separated.
func signedHeaders(d Delivery, t time.Time) (http.Header, error) {
	header, err := signature.Headers(d.Secret, d.EventID, t, d.Body)
	if err != nil || d.PreviousSecret == "" {
		return header, err
	}
	previous, err := signature.Sign(d.PreviousSecret, d.EventID, t, d.Body)
	if err != nil {
		return nil, err
	}
	header.Set(signature.HeaderSignature, header.Get(signature.HeaderSignature)+" "+previous)
	return header, nil
}

// retryAfter reads a Retry-After value (RFC 9110 §10.2.3): a number of seconds or an HTTP date,
// as a delay from now; 0 when it is absent, malformed or in the past.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseUint(v, 10, 64); err == nil {
		return time.Duration(min(secs, 1<<32)) * time.Second // a century is as good as forever
	}
	if at, err := http.ParseTime(v); err == nil && at.After(now) {
		return at.Sub(now)
	}
	return 0
}

// storableText is b as text PostgreSQL stores: invalid UTF-8 (a rune cut at the bound, too)
// and NUL bytes become "?", so it is never longer than b.
func storableText(b []byte) string {
	return strings.ReplaceAll(strings.ToValidUTF8(string(b), "?"), "\x00", "?")
}
