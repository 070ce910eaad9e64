// Package listen forwards an organization's webhook events to a receiver the service cannot
// reach (one on a laptop): it follows GET /v1/events/stream and posts each event to the
// receiver with the body and Standard Webhooks headers a registered endpoint would get, signed
// with the stream's session secret. `coreapi listen` runs it.
package listen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/provider/coreapi/internal/sse"
	"github.com/provider/coreapi/internal/webhook/signature"
)

// Options say what to listen to and where to forward it.
type Options struct {
	BaseURL        string   // the API, e.g. https://api.example.com
	APIKey         string   // a key (or token) with webhooks:read
	ForwardTo      string   // the receiver's URL
	Events         []string // only these event types; empty: all
	OrganizationID string   // for the operator: the organization to listen to
	// Client sends the stream's request and the forwards (nil: a default client).
	Client *http.Client
}

// kept is how many events of the session can be resent.
const kept = 100

// forwardTimeout bounds one forward to the receiver.
const forwardTimeout = 10 * time.Second

// event is one event received, as it is forwarded.
type event struct {
	id, typ string
	header  http.Header
	body    []byte
}

// Listener is one running listen session.
type Listener struct {
	opts   Options
	out    io.Writer
	mu     sync.Mutex // guards out, secret and recent: the stream and the commands both use them
	secret string
	recent []*event // the last kept events, oldest first
}

// New returns a listener printing to out.
func New(opts Options, out io.Writer) *Listener {
	if opts.Client == nil {
		opts.Client = &http.Client{}
	}
	return &Listener{opts: opts, out: out}
}

// ErrEnded is returned when the service ends the stream; its reason follows it.
var ErrEnded = errors.New("the service ended the stream")

// Run follows the stream until ctx ends (nil) or the service ends it or fails (an error),
// forwarding each event and printing one line per event. Lines of commands (Commands) are
// read from in, when not nil.
func (l *Listener) Run(ctx context.Context, in io.Reader) error {
	resp, err := l.open(ctx)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if in != nil {
		go l.commands(ctx, in)
	}
	events := sse.NewReader(resp.Body)
	for {
		ev, err := events.Next()
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("the stream broke: %w", err)
		}
		switch ev.Type {
		case "session":
			if err := l.start(ev.Data); err != nil {
				return err
			}
		case "webhook":
			if err := l.receive(ctx, ev.Data); err != nil {
				return err
			}
		case "end":
			return fmt.Errorf("%w: %s", ErrEnded, ev.Data)
		}
	}
}

// open opens the stream, turning a refusal into an error that says why.
func (l *Listener) open(ctx context.Context) (*http.Response, error) {
	q := url.Values{}
	for _, t := range l.opts.Events {
		q.Add("type", t)
	}
	if l.opts.OrganizationID != "" {
		q.Set("organization_id", l.opts.OrganizationID)
	}
	u := strings.TrimSuffix(l.opts.BaseURL, "/") + "/v1/events/stream"
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+l.opts.APIKey)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := l.opts.Client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("GET /v1/events/stream: %s: %s", resp.Status, bytes.TrimSpace(b))
	}
	return resp, nil
}

// start takes the session's secret and prints it: the receiver verifies with it.
func (l *Listener) start(data string) error {
	var s struct {
		Secret         string `json:"secret"`
		OrganizationID string `json:"organization_id"`
	}
	if err := json.Unmarshal([]byte(data), &s); err != nil || s.Secret == "" {
		return fmt.Errorf("the stream's session event is not understood: %s", data)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.secret = s.Secret
	fmt.Fprintf(l.out, "Ready: forwarding the events of organization %s to %s\n", s.OrganizationID, l.opts.ForwardTo)
	fmt.Fprintf(l.out, "Signing secret of this session (verify deliveries with it): %s\n", s.Secret)
	fmt.Fprintln(l.out, `Type "resend <event id>" (or "resend" for the last event) and Enter to send an event again.`)
	return nil
}

// receive forwards one streamed event and keeps it for resending.
func (l *Listener) receive(ctx context.Context, data string) error {
	var d struct {
		Headers map[string]string `json:"headers"`
		Body    string            `json:"body"`
	}
	if err := json.Unmarshal([]byte(data), &d); err != nil {
		return fmt.Errorf("a webhook event of the stream is not understood: %w", err)
	}
	ev := &event{id: d.Headers[signature.HeaderID], header: http.Header{}, body: []byte(d.Body)}
	for k, v := range d.Headers {
		ev.header.Set(k, v)
	}
	var typed struct{ Type string }
	_ = json.Unmarshal(ev.body, &typed)
	ev.typ = typed.Type
	l.mu.Lock()
	l.recent = append(l.recent, ev)
	if len(l.recent) > kept {
		l.recent = l.recent[1:]
	}
	l.mu.Unlock()
	l.forward(ctx, ev, "")
	return nil
}

// forward posts ev to the receiver and prints one line with the receiver's answer.
func (l *Listener) forward(ctx context.Context, ev *event, note string) {
	ctx, cancel := context.WithTimeout(ctx, forwardTimeout)
	defer cancel()
	start := time.Now()
	outcome := l.post(ctx, ev)
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.out, "%s  %-36s  %s  -> %s (%d ms)%s\n", start.UTC().Format(time.RFC3339), ev.typ, ev.id, outcome,
		time.Since(start).Milliseconds(), note)
}

// post sends ev and returns the receiver's status, or why there was none.
func (l *Listener) post(ctx context.Context, ev *event) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.opts.ForwardTo, bytes.NewReader(ev.body))
	if err != nil {
		return "error: " + err.Error()
	}
	for k, v := range ev.header {
		req.Header[k] = v
	}
	// As the service's own deliveries (internal/webhook).
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "provider-coreapi-webhooks/1")
	resp, err := l.opts.Client.Do(req)
	if err != nil {
		return "error: " + err.Error()
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.Status
}

// commands reads command lines from in until it ends or ctx does: "resend [event id]".
func (l *Listener) commands(ctx context.Context, in io.Reader) {
	lines := bufio.NewScanner(in)
	for lines.Scan() && ctx.Err() == nil {
		fields := strings.Fields(lines.Text())
		if len(fields) == 0 {
			continue
		}
		if fields[0] != "resend" || len(fields) > 2 {
			l.say(`Unknown command %q: type "resend <event id>" or "resend".`, lines.Text())
			continue
		}
		id := ""
		if len(fields) == 2 {
			id = fields[1]
		}
		if err := l.Resend(ctx, id); err != nil {
			l.say("%v", err)
		}
	}
}

// Resend forwards again the event id of this session (the last one when id is empty), as the
// service resends a delivery: the same webhook-id and body, signed anew at the current time
// with the session's secret.
func (l *Listener) Resend(ctx context.Context, id string) error {
	l.mu.Lock()
	var ev *event
	for i := len(l.recent) - 1; i >= 0 && ev == nil; i-- {
		if id == "" || l.recent[i].id == id {
			ev = l.recent[i]
		}
	}
	secret := l.secret
	l.mu.Unlock()
	if ev == nil {
		return fmt.Errorf("no event %q in this session's last %d events", id, kept)
	}
	header, err := signature.Headers(secret, ev.id, time.Now(), ev.body)
	if err != nil {
		return err
	}
	l.forward(ctx, &event{id: ev.id, typ: ev.typ, header: header, body: ev.body}, " (resent)")
	return nil
}

// say prints a line of its own.
func (l *Listener) say(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.out, format+"\n", args...)
}
