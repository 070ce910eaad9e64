package postgres

import (
	"testing"
	"time"

	"github.com/google/uuid"
)

// Entries stored together are trusted for lifetimes spread between half the TTL and the
// TTL, so that they are not all looked up again in the same moment.
func TestCredentialLifetimesAreSpread(t *testing.T) {
	c := &CredentialCache{ttl: 5 * time.Second}
	shortest, longest := c.ttl, time.Duration(0)
	for range 1000 {
		d := c.lifetime()
		if d < c.ttl/2 || d > c.ttl {
			t.Fatalf("lifetime %v outside [%v, %v]", d, c.ttl/2, c.ttl)
		}
		shortest, longest = min(shortest, d), max(longest, d)
	}
	if shortest > 2750*time.Millisecond || longest < 4750*time.Millisecond {
		t.Fatalf("1000 lifetimes between %v and %v: not spread over [2.5s, 5s]", shortest, longest)
	}
}

// last_used_at falls due again after a key's own interval, between 45 and 60 seconds, so
// that keys first used together are written at different moments.
func TestTouchDueSpreadsKeys(t *testing.T) {
	now := time.Now()
	if !touchDue(uuid.New(), nil, now) {
		t.Fatal("a key never used is not due")
	}
	due := map[time.Duration]bool{} // the second from which each key is due
	for range 200 {
		id := uuid.New()
		if early := now.Add(-touchInterval*3/4 + time.Millisecond); touchDue(id, &early, now) {
			t.Fatalf("key %v due before three quarters of the interval", id)
		}
		if late := now.Add(-touchInterval); !touchDue(id, &late, now) {
			t.Fatalf("key %v not due a full interval after its last use", id)
		}
		for s := touchInterval * 3 / 4; s <= touchInterval; s += time.Second {
			if last := now.Add(-s); touchDue(id, &last, now) {
				due[s] = true
				break
			}
		}
	}
	if len(due) < 10 {
		t.Fatalf("200 keys fell due at only %d distinct seconds: not spread", len(due))
	}
}
