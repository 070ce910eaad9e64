package httpapi

import (
	"sync/atomic"
	"time"
)

// DefaultQuiet is how long after its last request the API still counts as busy. A renewal run
// that took a gap between requests for an idle API would go at full speed, and the next request
// would meet its batches: with a second, traffic of a request every few hundred milliseconds
// keeps the run giving way (at 100 ms, requests 300 ms apart met full-speed batches and their
// median rose 1.2–2.3 times; docs/performance.md, "Sixteenth session").
const DefaultQuiet = time.Second

// InFlight counts the API's requests being served, for the background work that gives way to
// them (the renewal run, postgres.DB.Requests). An event stream counts until its stream
// starts: it lasts as long as its client, and work that waited for it would wait for ever.
type InFlight struct {
	quiet   time.Duration
	serving atomic.Int64
	lastEnd atomic.Int64 // when the last request ended, in Unix nanoseconds
}

// NewInFlight returns a counter that is busy while a request is served and for quiet after
// the last one ended.
func NewInFlight(quiet time.Duration) *InFlight { return &InFlight{quiet: quiet} }

// Busy reports whether a request is being served or one ended less than quiet ago.
func (f *InFlight) Busy() bool {
	if f.serving.Load() > 0 {
		return true
	}
	return f.quiet > 0 && time.Now().UnixNano()-f.lastEnd.Load() < int64(f.quiet)
}

// enter counts a request in (a nil counter counts nothing).
func (f *InFlight) enter() {
	if f != nil {
		f.serving.Add(1)
	}
}

// leave counts a request out.
func (f *InFlight) leave() {
	if f != nil {
		f.lastEnd.Store(time.Now().UnixNano())
		f.serving.Add(-1)
	}
}

// leaveInFlight counts the request of info out of the API's requests in flight: once, however
// often it is called (by an event stream as it starts, and by the request's end; both on the
// request's goroutine).
func (info *requestInfo) leaveInFlight() {
	if info.inFlight != nil {
		info.inFlight.leave()
		info.inFlight = nil
	}
}
