package main

import (
	"strings"
	"testing"
	"time"
)

// A scenario is judged only when both servers did the work: errors of either are a miss, so a
// floor that fails fast cannot make the API look slow, nor an API that fails fast look quick.
func TestVerdictCountsEitherServersErrors(t *testing.T) {
	base := result{scenario: scenario{name: "support-case", write: true}, api: figures{p99: time.Millisecond}}
	if got := verdict(base, 1); got != "met" {
		t.Fatalf("no errors: %q", got)
	}
	for name, r := range map[string]result{
		"api":   func() result { r := base; r.api.errors = 3; return r }(),
		"floor": func() result { r := base; r.floor.errors = 3; return r }(),
	} {
		if got := verdict(r, 1); !strings.HasPrefix(got, "MISSED: ") || !strings.Contains(got, "3 errors") {
			t.Errorf("%s errors: verdict %q", name, got)
		}
	}
}
