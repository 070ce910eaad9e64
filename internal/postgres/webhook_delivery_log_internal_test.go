package postgres

import (
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestEventIDWindow: a created_at window becomes the ids of that window widened by the clock
// skew margin, narrowed by the cursor; times before 1970 (no UUIDv7) bound nothing below and
// everything above.
func TestEventIDWindow(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	cursor := partitionBound(at)
	before1970 := time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	after, until := at.Add(-time.Hour), at.Add(time.Hour)
	for _, c := range []struct {
		name         string
		cursor       *uuid.UUID
		after, until *time.Time
		floor, below uuid.UUID
	}{
		{"no filter", nil, nil, nil, uuid.Nil, uuid.Max},
		{"window", nil, &after, &until, partitionBound(at.Add(-2 * time.Hour)), partitionBound(at.Add(2 * time.Hour))},
		{"cursor inside the window", &cursor, &after, &until, partitionBound(at.Add(-2 * time.Hour)), cursor},
		{"before 1970", nil, &before1970, &before1970, uuid.Nil, uuid.Nil},
	} {
		r := eventIDWindow(c.cursor, c.after, c.until)
		if r.floor != c.floor || r.before != c.below {
			t.Errorf("%s: [%s, %s), want [%s, %s)", c.name, r.floor, r.before, c.floor, c.below)
		}
	}
}
