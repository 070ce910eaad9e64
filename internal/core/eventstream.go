package core

import (
	"encoding/binary"
	"encoding/json"
	"slices"
	"time"

	"github.com/google/uuid"
)

// DeliveryBody is the body every delivery of e carries, byte for byte: the document's
// WebhookEvent, its data as rendered when the event was published. Registered endpoints and
// the event stream send the same bytes, so one receiver verifies both.
func (e *WebhookEventRecord) DeliveryBody() ([]byte, error) {
	return json.Marshal(struct {
		ID             uuid.UUID       `json:"id"`
		Type           EventType       `json:"type"`
		CreatedAt      time.Time       `json:"created_at"`
		OrganizationID uuid.UUID       `json:"organization_id"`
		Data           json.RawMessage `json:"data"`
	}{e.ID, e.Type, e.CreatedAt, e.OrganizationID, e.Data})
}

// An event's id (a UUIDv7) is taken when it is published, in its change's transaction, and
// the event becomes visible when that transaction commits: ids do not become visible in
// order. A stream therefore looks again at the last EventStreamSettle of ids, skipping those
// it has sent; an event committed later than that after its id was taken is missed (the
// events list is the record).
const (
	EventStreamSettle = time.Minute
	// EventStreamMaxSeen bounds the ids a stream remembers: past it the oldest are forgotten
	// and the stream no longer looks below them.
	EventStreamMaxSeen = 10_000
	// EventStreamBatch is the most events one look reads.
	EventStreamBatch = 100
)

// EventStreamFilter selects the events of one look of a stream.
type EventStreamFilter struct {
	OrganizationID uuid.UUID
	Types          []string    // empty: every type
	After          uuid.UUID   // only ids above it
	Except         []uuid.UUID // ids already sent
	Limit          int
}

// EventCursor is where a stream of events stands: it sends every event once, and remembers
// at most EventStreamMaxSeen ids of the last EventStreamSettle.
type EventCursor struct {
	floor uuid.UUID   // ids at or below it are never looked at again
	seen  []uuid.UUID // ids above floor already sent, ascending
}

// NewEventCursor starts a stream at start: only events whose id was taken after it are sent.
func NewEventCursor(start time.Time) *EventCursor {
	return &EventCursor{floor: UUIDv7Floor(start)}
}

// Next is the filter of the next look at now for the organization's events of types.
func (c *EventCursor) Next(org uuid.UUID, types []string, now time.Time) EventStreamFilter {
	if settled := UUIDv7Floor(now.Add(-EventStreamSettle)); compareUUID(settled, c.floor) > 0 {
		c.raiseFloor(settled)
	}
	return EventStreamFilter{OrganizationID: org, Types: types, After: c.floor, Except: slices.Clone(c.seen), Limit: EventStreamBatch}
}

// Sent records that the event id was sent.
func (c *EventCursor) Sent(id uuid.UUID) {
	i, found := slices.BinarySearchFunc(c.seen, id, compareUUID)
	if !found {
		c.seen = slices.Insert(c.seen, i, id)
	}
	if over := len(c.seen) - EventStreamMaxSeen; over > 0 {
		c.raiseFloor(c.seen[over-1])
	}
}

// raiseFloor forgets the ids at or below floor.
func (c *EventCursor) raiseFloor(floor uuid.UUID) {
	c.floor = floor
	i, found := slices.BinarySearchFunc(c.seen, floor, compareUUID)
	if found {
		i++
	}
	c.seen = slices.Delete(c.seen, 0, i)
}

func compareUUID(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) }

// UUIDv7Floor is the least UUIDv7 of the millisecond of t: every id taken at or after t is
// above it.
func UUIDv7Floor(t time.Time) uuid.UUID {
	var id uuid.UUID
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(t.UnixMilli()))
	copy(id[:6], ms[2:])
	id[6] = 0x70 // version 7
	id[8] = 0x80 // RFC 9562 variant
	return id
}
