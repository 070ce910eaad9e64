package profiler_test

import (
	"strings"
	"testing"

	"github.com/provider/coreapi/internal/profiler"
)

// Only loopback addresses are served; anything else fails at once, listening nowhere.
func TestServeRefusesOtherAddresses(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:6060", ":6060", "10.1.2.3:6060", "localhost:6060", "127.0.0.1"} {
		if err := profiler.Serve(addr); err == nil || !strings.Contains(err.Error(), "not a loopback address") {
			t.Errorf("Serve(%q) = %v, want a refusal", addr, err)
		}
	}
}
