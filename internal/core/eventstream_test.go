package core_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/core"
)

// idAt is a UUIDv7 taken at t.
func idAt(t time.Time, n byte) uuid.UUID {
	id := core.UUIDv7Floor(t)
	id[15] = n
	return id
}

func TestEventCursor(t *testing.T) {
	start := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	org := uuid.New()
	c := core.NewEventCursor(start)

	f := c.Next(org, []string{"api_key.created"}, start)
	if f.After != core.UUIDv7Floor(start) || len(f.Except) != 0 || f.OrganizationID != org || f.Limit != core.EventStreamBatch {
		t.Fatalf("first look: %+v", f)
	}
	if before := idAt(start.Add(-time.Millisecond), 1); before.String() > f.After.String() {
		t.Errorf("an id taken before the stream opened is above its floor")
	}

	// Sent ids are skipped while they are within the settle window, not below the floor.
	a, b := idAt(start.Add(time.Second), 1), idAt(start.Add(2*time.Second), 1)
	c.Sent(b)
	c.Sent(a)
	c.Sent(a)
	f = c.Next(org, nil, start.Add(3*time.Second))
	if f.After != core.UUIDv7Floor(start) || len(f.Except) != 2 || f.Except[0] != a || f.Except[1] != b {
		t.Fatalf("within the window: %+v", f)
	}
	// Past the window the floor rises and the ids below it are forgotten.
	f = c.Next(org, nil, start.Add(core.EventStreamSettle+1500*time.Millisecond))
	if f.After != core.UUIDv7Floor(start.Add(1500*time.Millisecond)) || len(f.Except) != 1 || f.Except[0] != b {
		t.Fatalf("after the window: %+v", f)
	}

	// Memory is bounded: past EventStreamMaxSeen ids the oldest are forgotten and the floor
	// rises to the newest of them.
	c = core.NewEventCursor(start)
	var last uuid.UUID
	for i := range core.EventStreamMaxSeen + 3 {
		last = idAt(start.Add(time.Duration(i)*time.Microsecond*100), byte(i))
		c.Sent(last)
	}
	f = c.Next(org, nil, start)
	if len(f.Except) != core.EventStreamMaxSeen || f.Except[len(f.Except)-1] != last || f.After.String() >= f.Except[0].String() {
		t.Fatalf("bounded: %d ids, floor %s, first %s", len(f.Except), f.After, f.Except[0])
	}
}
