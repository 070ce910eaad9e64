package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/webhook/signature"
)

// EventStreamTiming paces GET /v1/events/stream; zero fields take the defaults.
type EventStreamTiming struct {
	// Poll is how often a stream looks for new events and checks its credential (1 s).
	Poll time.Duration
	// Heartbeat is how long a stream stays silent before it sends a comment line (15 s), so
	// proxies and clients know the connection is alive.
	Heartbeat time.Duration
}

func (t EventStreamTiming) withDefaults() EventStreamTiming {
	if t.Poll <= 0 {
		t.Poll = time.Second
	}
	if t.Heartbeat <= 0 {
		t.Heartbeat = 15 * time.Second
	}
	return t
}

// Reasons a stream gives in its end event.
const (
	streamEndWithdrawn = "credential_withdrawn"
	streamEndShutdown  = "shutting_down"
)

// errWithdrawn ends a stream whose credential no longer authenticates or lacks the scope.
var errWithdrawn = errors.New("the credential was withdrawn")

// lookTimeout bounds one look for new events.
const lookTimeout = 10 * time.Second

// StreamEvents implements GET /v1/events/stream: it checks who may stream which
// organization's events and returns the stream, which runs as its response is written.
func (s *Server) StreamEvents(ctx context.Context, req api.StreamEventsRequestObject) (api.StreamEventsResponseObject, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	org := p.OrganizationID
	switch {
	case req.Params.OrganizationId != nil:
		if org, err = core.OrganizationIn(ctx, *req.Params.OrganizationId, "organization_id"); err != nil {
			return nil, err
		}
	case p.IsOperator():
		return nil, &core.Error{Code: core.EValidation, Message: "The operator streams one organization's events: name it with organization_id.",
			Fields: []core.FieldError{{Location: "query", Pointer: "organization_id", Code: "required", Message: "organization_id is required for the operator."}}}
	}
	types := []string{}
	if req.Params.Type != nil {
		for _, t := range *req.Params.Type {
			types = append(types, string(t))
		}
	}
	info, _ := ctx.Value(requestInfoKey{}).(*requestInfo)
	return &eventStream{
		server: s, info: info, org: org, types: types, secret: signature.NewSecret(),
		cursor: core.NewEventCursor(time.Now()), timing: s.cfg.EventStream.withDefaults(),
		// The request's own context ends at the request timeout; the stream lives on the
		// connection's, keeping the request's values (the principal, the request id).
		ctx: context.WithoutCancel(ctx),
	}, nil
}

// eventStream is one client's stream of events, written as server-sent events.
type eventStream struct {
	server *Server
	info   *requestInfo
	ctx    context.Context
	org    uuid.UUID
	types  []string
	secret string // the session's signing secret, never stored
	cursor *core.EventCursor
	timing EventStreamTiming
}

// streamedEvent is the data of a webhook event of the stream: what a registered endpoint
// would receive, its headers signed with the session's secret.
type streamedEvent struct {
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
}

// VisitStreamEventsResponse writes the stream until the client goes away, the credential is
// withdrawn or the server stops.
func (e *eventStream) VisitStreamEventsResponse(w http.ResponseWriter) error {
	rc := http.NewResponseController(w)
	// The server's read and write timeouts bound ordinary requests; a stream has none.
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // proxies pass each event on at once
	w.WriteHeader(http.StatusOK)
	// A stream lasts as long as its client: the work that gives way to requests must not
	// wait for it.
	e.info.leaveInFlight()
	err := e.send(w, rc, "session", "", map[string]any{"secret": e.secret, "organization_id": e.org, "types": e.types})
	if err != nil {
		return nil // the client is gone
	}
	poll := time.NewTicker(e.timing.Poll)
	defer poll.Stop()
	lastWrite := time.Now()
	for {
		select {
		case <-e.info.connection.Done():
			return nil
		case <-e.server.cfg.Stopping:
			_ = e.send(w, rc, "end", "", map[string]string{"reason": streamEndShutdown})
			return nil
		case <-poll.C:
		}
		sent, err := e.sendNew(w, rc)
		if errors.Is(err, errWithdrawn) {
			_ = e.send(w, rc, "end", "", map[string]string{"reason": streamEndWithdrawn})
			return nil
		}
		if err != nil {
			return nil // the client is gone, or the database failed (logged)
		}
		if sent > 0 {
			lastWrite = time.Now()
		} else if time.Since(lastWrite) >= e.timing.Heartbeat {
			if _, err := fmt.Fprint(w, ": heartbeat\n\n"); err != nil || flush(rc) != nil {
				return nil
			}
			lastWrite = time.Now()
		}
	}
}

// recheckCredential authenticates the request's credential again and checks it still holds
// the operation's scopes: a stream obeys a withdrawal at its next look.
func (e *eventStream) recheckCredential() error {
	ctx, cancel := context.WithTimeout(e.ctx, lookTimeout)
	defer cancel()
	r := (&http.Request{Header: e.info.header, RemoteAddr: e.info.remoteAddr}).WithContext(ctx)
	p, err := e.info.gate.auth.Authenticate(ctx, r)
	if err != nil {
		return err
	}
	return checkScopes(p, e.info.op.security)
}

// sendNew sends the events published since the last look, while the credential is still
// good, and returns how many.
func (e *eventStream) sendNew(w http.ResponseWriter, rc *http.ResponseController) (int, error) {
	ctx, cancel := context.WithTimeout(e.ctx, lookTimeout)
	defer cancel()
	events, err := e.server.cfg.Services.WebhookDeliveries.StreamEvents(ctx, e.cursor.Next(e.org, e.types, time.Now()))
	if err != nil {
		logger(e.ctx).Error("event stream: looking for new events", "error", err)
		return 0, err
	}
	// Checked after the read: an event committed with the credential's withdrawal (its own
	// revocation) is never sent.
	if err := e.recheckCredential(); err != nil {
		return 0, errors.Join(errWithdrawn, err)
	}
	for _, ev := range events {
		body, err := ev.DeliveryBody()
		if err != nil {
			return 0, err
		}
		header, err := signature.Headers(e.secret, ev.ID.String(), time.Now(), body)
		if err != nil {
			return 0, err
		}
		data := streamedEvent{Body: string(body), Headers: map[string]string{
			signature.HeaderID:        header.Get(signature.HeaderID),
			signature.HeaderTimestamp: header.Get(signature.HeaderTimestamp),
			signature.HeaderSignature: header.Get(signature.HeaderSignature),
		}}
		if err := e.send(w, rc, "webhook", ev.ID.String(), data); err != nil {
			return 0, err
		}
		e.cursor.Sent(ev.ID)
	}
	return len(events), nil
}

// send writes one server-sent event and flushes it to the client.
func (e *eventStream) send(w http.ResponseWriter, rc *http.ResponseController, event, id string, data any) error {
	b, err := json.Marshal(data) // one line: JSON escapes every newline
	if err != nil {
		return err
	}
	if id != "" {
		if _, err := fmt.Fprintf(w, "id: %s\n", id); err != nil {
			return err
		}
	}
	if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
		return err
	}
	return flush(rc)
}

// flush sends what was written to the client now.
func flush(rc *http.ResponseController) error {
	if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}
