package httpapi

import (
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/core"
)

// The rate limiter's buckets do not pile up (issue 22 §4): a bucket idle long enough to be
// full again is dropped at the next sweep, while a bucket still refilling is kept with what
// it has spent.
func TestRateLimitBucketsOfIdleKeysAreDropped(t *testing.T) {
	now := time.Now()
	l := newRateLimits()
	l.now = func() time.Time { return now }
	policy := core.RateLimitPolicies[core.DefaultRateLimitPolicy]
	for range 1000 {
		if err := l.take(httptest.NewRecorder(), uuid.New(), core.DefaultRateLimitPolicy); err != nil {
			t.Fatal(err)
		}
	}
	busy := uuid.New()
	for range policy.Burst {
		_ = l.take(httptest.NewRecorder(), busy, core.DefaultRateLimitPolicy)
	}
	if len(l.buckets) != 1001 {
		t.Fatalf("%d buckets", len(l.buckets))
	}
	// A second later the keys used once are full again, the busy one only half: a sweep
	// (forced here; take sweeps once a minute) keeps just the busy key's bucket, as it was.
	now = now.Add(time.Second)
	l.lastSweep = time.Time{}
	w := httptest.NewRecorder()
	if err := l.take(w, busy, core.DefaultRateLimitPolicy); err != nil {
		t.Fatalf("the busy key: %v", err)
	}
	if len(l.buckets) != 1 {
		t.Fatalf("%d buckets after the sweep, want only the busy key's", len(l.buckets))
	}
	if got, want := w.Header().Get("RateLimit-Remaining"), strconv.Itoa(int(policy.Rate)-1); got != want {
		t.Errorf("the busy key's bucket started afresh: RateLimit-Remaining %s, want %s", got, want)
	}
	// A minute on, take sweeps by itself: the busy key, idle since, is gone too.
	now = now.Add(bucketSweepInterval)
	if err := l.take(httptest.NewRecorder(), uuid.New(), core.DefaultRateLimitPolicy); err != nil {
		t.Fatal(err)
	}
	if _, ok := l.buckets[bucketKey{busy, core.DefaultRateLimitPolicy}]; ok || len(l.buckets) != 1 {
		t.Errorf("%d buckets a minute later, the idle busy key's kept: %v", len(l.buckets), ok)
	}
}
