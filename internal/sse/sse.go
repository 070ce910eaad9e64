// Package sse reads server-sent events (text/event-stream, the WHATWG HTML standard's
// "Server-sent events" format): the events of GET /v1/events/stream, for coreapi listen and
// the tests.
package sse

import (
	"bufio"
	"io"
	"strings"
)

// maxLine bounds one line of a stream: an event's data is one line of JSON.
const maxLine = 4 << 20

// Event is one dispatched event, or a comment line (a heartbeat): Comment is its text then,
// and the other fields are empty.
type Event struct {
	ID, Type, Data string
	Comment        string
}

// Reader reads the events of a stream.
type Reader struct {
	lines *bufio.Scanner
}

// NewReader reads events from r.
func NewReader(r io.Reader) *Reader {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 64<<10), maxLine)
	return &Reader{lines: s}
}

// Next returns the next event or comment, or io.EOF (or the read's error) when the stream ends.
func (r *Reader) Next() (Event, error) {
	var ev Event
	var data []string
	started := false
	for r.lines.Scan() {
		line := r.lines.Text()
		if line == "" {
			if started {
				ev.Data = strings.Join(data, "\n")
				return ev, nil
			}
			continue
		}
		if comment, ok := strings.CutPrefix(line, ":"); ok && !started {
			return Event{Comment: strings.TrimPrefix(comment, " ")}, nil
		} else if ok {
			continue
		}
		started = true
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			ev.Type = value
		case "id":
			ev.ID = value
		case "data":
			data = append(data, value)
		}
	}
	if err := r.lines.Err(); err != nil {
		return Event{}, err
	}
	return Event{}, io.EOF
}
