package httpapi

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/provider/coreapi/internal/core"
)

// The failure window of a source ends a minute after its first failure: then it starts
// afresh. IPv6 clients count by /64, IPv4 by address.
func TestAuthFailuresWindow(t *testing.T) {
	now := time.Now()
	f := newAuthFailures()
	f.now = func() time.Time { return now }
	a, k := addressSource("[2001:db8:1:2::7]:443"), keySource("sk_sandbox_Abc123_wrong")
	if a != addressSource("[2001:db8:1:2:ffff::1]:80") || a == addressSource("[2001:db8:1:3::7]:443") {
		t.Errorf("IPv6 addresses are not counted by /64: %v", a)
	}
	if k.key != "sk_sandbox_Abc123" {
		t.Errorf("key source %q", k.key)
	}
	for range authFailureLimit {
		f.failed(a, k)
	}
	if err := f.throttled(a, k); err != nil {
		t.Fatalf("throttled after %d failures: %v", authFailureLimit, err)
	}
	f.failed(a, k)
	now = now.Add(20 * time.Second)
	err := f.throttled(failureSource{}, k)
	var ce *core.Error
	if core.ErrorCode(err) != core.ERateLimited || !asError(err, &ce) || ce.RetryAfter != 40*time.Second {
		t.Fatalf("after %d failures: %v", authFailureLimit+1, err)
	}
	if err := f.throttled(addressSource("192.0.2.1:1"), failureSource{}); err != nil {
		t.Errorf("another source throttled: %v", err)
	}
	now = now.Add(40 * time.Second)
	if err := f.throttled(a, k); err != nil {
		t.Errorf("throttled after the window ended: %v", err)
	}
	if len(f.sources) != 0 {
		t.Errorf("%d counters kept after their window ended", len(f.sources))
	}
}

// The counters' memory is bounded: a flood of failures from ever new sources keeps at most
// maxAuthFailureSources of them.
func TestAuthFailuresBounded(t *testing.T) {
	f := newAuthFailures()
	for i := range 3 * maxAuthFailureSources {
		addr := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		f.failed(failureSource{addr: addr}, failureSource{key: fmt.Sprintf("sk_sandbox_%d", i)})
		if len(f.sources) > maxAuthFailureSources {
			t.Fatalf("%d counters after %d failures", len(f.sources), i+1)
		}
	}
	// A name too long to be a key's is not kept.
	if s := keySource("sk_sandbox_" + strings.Repeat("a", 100) + "_x"); s.valid() {
		t.Errorf("a %d-byte prefix is counted", len(s.key))
	}
}

func asError(err error, target **core.Error) bool {
	ce, ok := err.(*core.Error)
	*target = ce
	return ok
}
