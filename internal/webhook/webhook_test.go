package webhook

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestPublicAddress(t *testing.T) {
	t.Parallel()
	tests := map[string]bool{
		"93.184.216.34": true, "8.8.8.8": true, "2606:2800:220:1:248:1893:25c8:1946": true,
		"127.0.0.1": false, "127.255.0.9": false, "10.1.2.3": false, "172.16.0.1": false, "172.31.255.255": false,
		"172.32.0.1": true, "192.168.0.1": false, "169.254.169.254": false, "100.64.1.1": false, "0.0.0.0": false,
		"255.255.255.255": false, "224.0.0.1": false, "::1": false, "::": false, "fe80::1": false, "fd12::1": false,
		"::ffff:127.0.0.1": false, "::ffff:10.0.0.1": false, "::ffff:93.184.216.34": true, "64:ff9b::a00:1": false,
		"fe80::1%eth0": false,
		// IPv6 forms that carry an IPv4 address (issue 21, item 11).
		"::127.0.0.1": false, "::10.0.0.1": false, "::169.254.169.254": false, "::93.184.216.34": true,
		"::ffff:0:127.0.0.1": false, "::ffff:0:93.184.216.34": true,
		"2002:7f00:1::": false, "2002:a00:1::1": false, "2002:a9fe:a9fe::": false, "2002:5db8:d822::1": true,
		"2001:0:7f00:1::1": false, "2001:0:5db8:d822:0:0:80ff:fffe": false, "2001:0:5db8:d822:0:0:a247:27dd": true,
		"64:ff9b::5db8:d822": false, "64:ff9b:1::1": false, "fec0::1": false, "ff02::1": false,
	}
	for addr, want := range tests {
		if got := PublicAddress(netip.MustParseAddr(addr)); got != want {
			t.Errorf("PublicAddress(%s) = %v, want %v", addr, got, want)
		}
	}
}

func TestPolicy_CheckURL(t *testing.T) {
	t.Parallel()
	prod, dev := DefaultPolicy(false), DefaultPolicy(true)
	tests := []struct {
		url       string
		prod, dev bool // allowed
	}{
		{"https://93.184.216.34/hooks", true, true},
		{"https://hooks.invalid/never-resolves", true, true},
		{"http://93.184.216.34/hooks", false, true},
		{"https://127.0.0.1/x", false, true},
		{"http://127.0.0.1:8080/x", false, true},
		{"https://localhost/x", false, true},
		{"https://a.b.localhost/x", false, true},
		{"https://[::1]:8443/x", false, true},
		{"https://169.254.169.254/", false, true},
		{"https://[fe80::1%25eth0]/", false, true},
		{"ftp://93.184.216.34/x", false, false},
		{"https://user:pw@93.184.216.34/x", false, false},
		{"/relative", false, false},
		{"https://", false, false},
		// Numeric hosts a C resolver reads as an IPv4 address, refused in every mode (issue 21,
		// item 11): only the canonical dotted quad is an address.
		{"https://2130706433/x", false, false},
		{"https://0x7f000001/x", false, false},
		{"https://0X7F000001/x", false, false},
		{"https://0177.0.0.1/x", false, false},
		{"https://127.1/x", false, false},
		{"https://127.0.1/x", false, false},
		{"https://0/x", false, false},
		{"https://0x/x", false, false},
		{"https://1572395042/x", false, false}, // 93.184.216.34, public, but not canonical
		{"https://93.184.216.034/x", false, false},
		{"https://1.2.3.4.5/x", false, false},
		{"https://hooks.example.123/x", false, false},
		{"https://0x7f.0.0.1/x", false, false},
		{"https://127.0.0.1./x", false, true}, // canonical, with the root's dot
		{"https://hooks.0x7f.example/x", true, true},
		{"https://123.hooks.invalid/x", true, true},
		// IPv6 literals that embed a loopback or private IPv4 address.
		{"https://[::127.0.0.1]/x", false, true},
		{"https://[::7f00:1]/x", false, true},
		{"https://[2002:7f00:1::]/x", false, true},
		{"https://[2001:0:7f00:1::1]/x", false, true},
		{"https://[64:ff9b::7f00:1]/x", false, true},
		{"https://[::ffff:0:10.0.0.1]/x", false, true},
		{"https://[::]/x", false, true},
		{"https://[ff02::1]/x", false, true},
		{"https://224.0.0.1/x", false, true},
		{"https://[2606:2800:220:1:248:1893:25c8:1946]/x", true, true},
		{"https://[2606:2800:220:1:248:1893:25c8:1946%25eth0]/x", false, true}, // a zone names no internet host
		// Ports.
		{"https://93.184.216.34:99999/x", false, false},
		{"https://93.184.216.34:65536/x", false, false},
		{"https://93.184.216.34:0/x", false, false},
		{"https://93.184.216.34:0443/x", false, false},
		{"https://93.184.216.34:65535/x", true, true},
		{"https://93.184.216.34:1/x", true, true},
		{"https://93.184.216.34:/x", true, true}, // empty port: the scheme's
		// A host that is not ASCII: IDNA would map these fullwidth digits to 127.0.0.1.
		{"https://１２７.０.０.１/x", false, false},
		{"https://127。0。0。1/x", false, false},
		{"https://xn--bcher-kva.example/x", true, true},
	}
	for _, tc := range tests {
		for _, c := range []struct {
			p     Policy
			allow bool
		}{{prod, tc.prod}, {dev, tc.dev}} {
			err := c.p.CheckURL(context.Background(), tc.url)
			if (err == nil) != c.allow || (err != nil && !errors.Is(err, ErrRefusedTarget)) {
				t.Errorf("development=%v CheckURL(%q) = %v, want allowed %v", c.p.Development, tc.url, err, c.allow)
			}
		}
	}
}

// TestSender_RefusesPrivateAddressesAtConnect checks the guard that runs after DNS: a name
// that resolves to loopback (as a rebinding name would at delivery time) is refused by the
// dialer itself, whatever the URL check said.
func TestSender_RefusesPrivateAddressesAtConnect(t *testing.T) {
	t.Parallel()
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits++ }))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]

	s := NewSender(Policy{Timeout: 2 * time.Second, MaxAttempts: 1})
	for _, u := range []string{"http://localhost" + port + "/x", srv.URL + "/x"} {
		_, err := s.client.Post(u, "application/json", strings.NewReader("{}"))
		if !errors.Is(err, ErrRefusedTarget) {
			t.Errorf("POST %s in production: %v, want ErrRefusedTarget", u, err)
		}
	}
	a := s.Send(context.Background(), Delivery{URL: srv.URL, Secret: "whsec_AAAA", EventID: "e", Body: []byte("{}")})
	if a.Succeeded || a.StatusCode != 0 || !strings.Contains(a.Error, "refused") {
		t.Errorf("Send to loopback in production: %+v", a)
	}
	if hits != 0 {
		t.Errorf("the loopback server was reached %d times", hits)
	}

	dev := NewSender(Policy{Development: true, Timeout: 2 * time.Second, MaxAttempts: 1})
	if a := dev.Send(context.Background(), Delivery{URL: srv.URL, Secret: "whsec_AAAA", EventID: "e", Body: []byte("{}")}); !a.Succeeded || a.StatusCode != 200 {
		t.Errorf("Send to loopback in development: %+v", a)
	}
}

func TestSender_DoesNotFollowRedirectsAndTimesOut(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	mux.HandleFunc("/ok", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("/slow", func(http.ResponseWriter, *http.Request) { time.Sleep(time.Second) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	s := NewSender(Policy{Development: true, Timeout: 200 * time.Millisecond, MaxAttempts: 1})
	if a := s.Send(context.Background(), Delivery{URL: srv.URL + "/redirect", Secret: "whsec_AAAA", EventID: "e", Body: []byte("{}")}); a.Succeeded || a.StatusCode != http.StatusFound {
		t.Errorf("redirect: %+v", a)
	}
	a := s.Send(context.Background(), Delivery{URL: srv.URL + "/slow", Secret: "whsec_AAAA", EventID: "e", Body: []byte("{}")})
	if a.Succeeded || a.StatusCode != 0 || a.Error == "" || a.Latency > 900*time.Millisecond {
		t.Errorf("slow receiver: %+v", a)
	}
}

func TestPolicy_Backoff(t *testing.T) {
	t.Parallel()
	p := DefaultPolicy(false)
	var total time.Duration
	for attempt := 1; attempt < p.MaxAttempts; attempt++ {
		d := p.Backoff(attempt)
		nominal := min(p.RetryBase<<(attempt-1), p.RetryCap)
		if d < nominal*3/4 || d > nominal*5/4 {
			t.Errorf("Backoff(%d) = %v, want %v ±25%%", attempt, d, nominal)
		}
		total += nominal
	}
	if total < 20*time.Hour || total > 28*time.Hour {
		t.Errorf("the retries span %v, want about a day", total)
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	tests := map[string]time.Duration{
		"":                                0,
		"120":                             2 * time.Minute,
		"0":                               0,
		"-5":                              0,
		"1.5":                             0,
		"soon":                            0,
		"99999999999999999999999":         0, // beyond uint64: malformed, the schedule decides
		"18446744073709551615":            (1 << 32) * time.Second,
		"Tue, 24 Nov 2026 12:10:00 GMT":   10 * time.Minute,
		"Tuesday, 24-Nov-26 12:10:00 GMT": 10 * time.Minute, // RFC 850, which HTTP dates may also be
		"Tue, 24 Nov 2026 11:00:00 GMT":   0,                // in the past
	}
	for v, want := range tests {
		if got := retryAfter(v, now); got != want {
			t.Errorf("retryAfter(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestPolicy_RetryDelay(t *testing.T) {
	t.Parallel()
	p := DefaultPolicy(false)
	if d := p.RetryDelay(1, Attempt{}); d < 45*time.Second || d > 75*time.Second {
		t.Errorf("no Retry-After: %v, want the schedule's minute", d)
	}
	if d := p.RetryDelay(1, Attempt{RetryAfter: time.Hour}); d != time.Hour {
		t.Errorf("Retry-After 1 h: %v", d)
	}
	if d := p.RetryDelay(1, Attempt{RetryAfter: 30 * 24 * time.Hour}); d != p.MaxRetryAfter {
		t.Errorf("Retry-After 30 days: %v, want the bound %v", d, p.MaxRetryAfter)
	}
	if d := p.RetryDelay(10, Attempt{RetryAfter: time.Second}); d < 6*time.Hour {
		t.Errorf("a short Retry-After shortened the schedule: %v", d)
	}
}

func TestSender_AnswersAndRotation(t *testing.T) {
	t.Parallel()
	var (
		mu         sync.Mutex
		signatures []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		signatures = append(signatures, r.Header.Get("webhook-signature"))
		mu.Unlock()
		switch r.URL.Path {
		case "/busy":
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusTooManyRequests)
		case "/broken":
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusInternalServerError)
		case "/gone":
			w.WriteHeader(http.StatusGone)
		}
	}))
	defer srv.Close()
	s := NewSender(Policy{Development: true, Timeout: 2 * time.Second, MaxAttempts: 1})
	send := func(path, previous string) Attempt {
		return s.Send(context.Background(), Delivery{URL: srv.URL + path, Secret: "whsec_AAAA", PreviousSecret: previous, EventID: "e", Body: []byte("{}")})
	}
	if a := send("/busy", ""); a.RetryAfter != 30*time.Second || a.Gone() {
		t.Errorf("429 with Retry-After: %+v", a)
	}
	if a := send("/broken", ""); a.RetryAfter != 0 {
		t.Errorf("500 with Retry-After: %+v, want no delay of its own", a)
	}
	if a := send("/gone", ""); !a.Gone() || a.Succeeded {
		t.Errorf("410: %+v", a)
	}
	if a := send("/ok", "whsec_BBBB"); !a.Succeeded {
		t.Errorf("rotation: %+v", a)
	}
	mu.Lock()
	defer mu.Unlock()
	last := strings.Fields(signatures[len(signatures)-1])
	if len(last) != 2 || last[0] == last[1] || !strings.HasPrefix(last[0], "v1,") || !strings.HasPrefix(last[1], "v1,") {
		t.Errorf("webhook-signature during a rotation: %q", signatures[len(signatures)-1])
	}
	if n := len(strings.Fields(signatures[0])); n != 1 {
		t.Errorf("%d signatures without a previous secret", n)
	}
}

// TestSender_KeepsTheStartOfTheAnswer: an attempt keeps at most MaxResponseBody bytes of the
// answer, as text PostgreSQL stores (NUL bytes and a rune cut at the bound become "?"), and
// repeats its start in the error of a failure.
func TestSender_KeepsTheStartOfTheAnswer(t *testing.T) {
	t.Parallel()
	answer := "a\x00b" + strings.Repeat("é", MaxResponseBody) // the bound falls inside a rune
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte(answer))
	}))
	defer srv.Close()
	s := NewSender(Policy{Development: true, Timeout: 2 * time.Second, MaxAttempts: 1})
	a := s.Send(context.Background(), Delivery{URL: srv.URL, Secret: "whsec_AAAA", EventID: "e", Body: []byte("{}")})
	want := "a?b" + strings.Repeat("é", (MaxResponseBody-3)/2) + "?"
	if a.ResponseBody != want || len(a.ResponseBody) != MaxResponseBody {
		t.Errorf("response body: %d bytes %q", len(a.ResponseBody), a.ResponseBody)
	}
	if !strings.HasPrefix(a.Error, "HTTP 502: a?bé") || len(a.Error) > len("HTTP 502: ")+maxErrorBody || strings.ContainsRune(a.Error, 0) {
		t.Errorf("error: %q", a.Error)
	}
}
