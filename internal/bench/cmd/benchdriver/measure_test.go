package main

import (
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Slow requests are grouped into bursts by when they were sent, whatever order their
// results arrive in; a gap of burstGap or more starts a new burst.
func TestSlowRequestsTail(t *testing.T) {
	start := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	s := &slowRequests{over: 5 * time.Millisecond}
	for _, r := range []struct {
		sentMs    int
		latencyMs int
	}{
		{1000, 9}, {0, 1}, {1010, 7}, {5000, 6}, {1025, 12}, {3000, 2}, {1050, 8}, {5015, 5}, {9000, 30},
	} {
		s.add(&vegeta.Result{Timestamp: at(r.sentMs), Latency: time.Duration(r.latencyMs) * time.Millisecond})
	}
	got := s.tail()
	// Slow: 1000, 1010, 1025 (one burst: gaps under 20 ms), 1050 (25 ms later: a burst of
	// its own), 5000 (alone; 5015 took exactly 5 ms, not over), 9000.
	want := tail{over: 5 * time.Millisecond, slow: 6, burst: 3, burstAt: time.Second}
	if got != want {
		t.Fatalf("tail %+v, want %+v", got, want)
	}
	if s := got.String(); s != "6 over 5ms, the largest burst 3 at 1.00s" {
		t.Errorf("String() = %q", s)
	}
	if s := (&slowRequests{over: time.Millisecond}).tail().String(); s != "none over 1ms" {
		t.Errorf("no slow requests: %q", s)
	}
}
