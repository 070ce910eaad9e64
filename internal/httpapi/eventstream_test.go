package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
	"github.com/provider/coreapi/internal/httpapi"
	"github.com/provider/coreapi/internal/sse"
	"github.com/provider/coreapi/internal/webhook/signature"
)

// eventStreamClient is one open GET /v1/events/stream.
type eventStreamClient struct {
	t      testing.TB
	events *sse.Reader
	body   io.Closer
	secret string
}

// openEventStream opens the stream of query with token and reads its session event; the
// response's status and headers are validated against the document.
func openEventStream(t testing.TB, env *apitest.Env, token string, query url.Values) *eventStreamClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, env.URL+"/v1/events/stream?"+query.Encode(), nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := env.HTTP.Do(req)
	if err != nil {
		t.Fatalf("open the stream: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("open the stream: %d %s", resp.StatusCode, b)
	}
	s := &eventStreamClient{t: t, events: sse.NewReader(resp.Body), body: resp.Body}
	session := s.next("session")
	var data struct {
		Secret         string   `json:"secret"`
		OrganizationID string   `json:"organization_id"`
		Types          []string `json:"types"`
	}
	if err := json.Unmarshal([]byte(session.Data), &data); err != nil || len(data.Secret) < 40 {
		t.Fatalf("session event: %v: %s", err, session.Data)
	}
	s.secret = data.Secret
	return s
}

// next reads the next event, skipping comments, which must be of type want.
func (s *eventStreamClient) next(want string) sse.Event {
	s.t.Helper()
	ev, err := s.events.Next()
	for err == nil && ev.Comment != "" {
		ev, err = s.events.Next()
	}
	if err != nil {
		s.t.Fatalf("stream: waiting for a %s event: %v", want, err)
	}
	if ev.Type != want {
		s.t.Fatalf("stream: got a %s event, want %s: %s", ev.Type, want, ev.Data)
	}
	return ev
}

// nextWebhook reads the next webhook event, checks its signature with the session's secret,
// and returns its headers and body.
func (s *eventStreamClient) nextWebhook() (http.Header, []byte) {
	s.t.Helper()
	ev := s.next("webhook")
	var data struct {
		Headers map[string]string `json:"headers"`
		Body    string            `json:"body"`
	}
	if err := json.Unmarshal([]byte(ev.Data), &data); err != nil {
		s.t.Fatalf("webhook event: %v: %s", err, ev.Data)
	}
	h := http.Header{}
	for k, v := range data.Headers {
		h.Set(k, v)
	}
	if err := signature.Verify(s.secret, h, []byte(data.Body), signature.DefaultTolerance); err != nil {
		s.t.Errorf("webhook event %s: %v", ev.ID, err)
	}
	if ev.ID != h.Get(signature.HeaderID) {
		s.t.Errorf("SSE id %s, webhook-id %s", ev.ID, h.Get(signature.HeaderID))
	}
	return h, []byte(data.Body)
}

// end reads the stream's end event, checks its reason, and that the stream closes after it.
func (s *eventStreamClient) end(reason string) {
	s.t.Helper()
	ev := s.next("end")
	if want := `{"reason":"` + reason + `"}`; ev.Data != want {
		s.t.Errorf("end event %s, want %s", ev.Data, want)
	}
	if ev, err := s.events.Next(); !errors.Is(err, io.EOF) || ev != (sse.Event{}) {
		s.t.Errorf("after the end event: %+v, %v; want the stream closed", ev, err)
	}
}

func TestEventStream(t *testing.T) {
	t.Parallel()
	stopping := make(chan struct{})
	env := apitest.New(t, func(cfg *httpapi.Config) {
		cfg.Stopping = stopping
		cfg.EventStream = httpapi.EventStreamTiming{Poll: 20 * time.Millisecond, Heartbeat: 40 * time.Millisecond}
	})
	org := createOrganization(t, env, productionReadyOrganization)["id"].(string)
	other := createOrganization(t, env, productionReadyOrganization)["id"].(string)
	f := &keyFixture{env: env, orgID: org}
	streamKey := f.createKey(t, []string{"webhooks:read"}, nil)
	token := streamKey["full_key"].(string)
	// A registered endpoint receives the same events, to compare the bytes.
	rcv := newReceiver(t, nil)
	endpoint := createEndpoint(t, env, apitest.OperatorToken, endpointBody(org, rcv.URL, "api_key.created"))

	t.Run("who may stream", func(t *testing.T) {
		cases := []struct {
			name, token, query string
			status             int
		}{
			{"a tenant naming another organization", token, "organization_id=" + other, http.StatusForbidden},
			{"the operator naming no organization", apitest.OperatorToken, "", http.StatusBadRequest},
			{"a key without webhooks:read", f.createKey(t, []string{"usage:read"}, nil)["full_key"].(string), "", http.StatusForbidden},
			{"no credential", "", "", http.StatusUnauthorized},
		}
		for _, c := range cases {
			resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/events/stream?" + c.query, Token: c.token})
			if resp.Status != c.status {
				t.Errorf("%s: %d %s, want %d", c.name, resp.Status, resp.Body, c.status)
			}
		}
		// The operator streams the organization it names.
		op := openEventStream(t, env, apitest.OperatorToken, url.Values{"organization_id": {org}})
		f.createKey(t, []string{"usage:read"}, nil)
		_, body := op.nextWebhook()
		if ev := decodeBody(t, body); ev["organization_id"] != org || ev["type"] != "api_key.created" {
			t.Errorf("operator's stream: %s", body)
		}
	})

	// The rest runs in order on one stream: the last step withdraws its key.
	stream := openEventStream(t, env, token, nil)
	revokedOnly := openEventStream(t, env, token, url.Values{"type": {"api_key.revoked"}})

	// Another organization's event is not streamed; the organization's next one is, with the
	// bytes and webhook-id the registered endpoint receives, signed with the session's secret.
	(&keyFixture{env: env, orgID: other}).createKey(t, []string{"usage:read"}, nil)
	created := f.createKey(t, []string{"usage:read"}, nil)
	header, body := stream.nextWebhook()
	ev := decodeBody(t, body)
	if ev["type"] != "api_key.created" || ev["organization_id"] != org || ev["data"].(map[string]any)["id"] != created["id"] {
		t.Fatalf("streamed event: %s", body)
	}
	delivered := rcv.delivery(t, header.Get("webhook-id"))
	if string(delivered.Body) != string(body) || delivered.Header.Get("webhook-id") != header.Get("webhook-id") {
		t.Errorf("the stream sent\n%s\nthe endpoint received\n%s", body, delivered.Body)
	}
	if err := signature.Verify(stream.secret, delivered.Header, delivered.Body, signature.DefaultTolerance); err == nil {
		t.Errorf("the session's secret verifies the endpoint's delivery: it must be the session's own")
	}
	if stream.secret == revokedOnly.secret || stream.secret == endpoint["secret"] {
		t.Errorf("two sessions, or a session and an endpoint, share a secret")
	}

	// Silence is broken by heartbeats, which are comments, not events.
	if ev, err := stream.events.Next(); err != nil || ev.Comment != "heartbeat" {
		t.Errorf("a silent stream sent %+v, %v; want a heartbeat", ev, err)
	}

	// The type-filtered stream gets only the revocation, not the creation before it.
	if resp := f.keyAction(apitest.OperatorToken, created, "revoke"); resp.Status != http.StatusOK {
		t.Fatalf("revoke: %d %s", resp.Status, resp.Body)
	}
	for _, s := range []*eventStreamClient{stream, revokedOnly} {
		_, body = s.nextWebhook()
		if ev := decodeBody(t, body); ev["type"] != "api_key.revoked" || ev["data"].(map[string]any)["id"] != created["id"] {
			t.Errorf("after the revocation: %s", body)
		}
	}

	// Revoking the stream's own key ends both streams at their next look, before anything
	// else is sent (its own revocation event included), and the key opens none.
	if resp := f.keyAction(apitest.OperatorToken, streamKey, "revoke"); resp.Status != http.StatusOK {
		t.Fatalf("revoke: %d %s", resp.Status, resp.Body)
	}
	revokedOnly.end("credential_withdrawn")
	stream.end("credential_withdrawn")
	if resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/events/stream", Token: token}); resp.Status != http.StatusUnauthorized {
		t.Errorf("a revoked key opens a stream: %d", resp.Status)
	}

	// The server shutting down ends the streams.
	last := openEventStream(t, env, apitest.OrgToken(uuid.MustParse(org)), nil)
	close(stopping)
	last.end("shutting_down")
}

// delivery waits for the receiver's delivery with webhook-id id.
func (r *receiver) delivery(t testing.TB, id string) received {
	t.Helper()
	for n := 1; ; n++ {
		for _, d := range r.waitFor(t, n) {
			if d.Header.Get("webhook-id") == id {
				return d
			}
		}
	}
}

func decodeBody(t testing.TB, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return m
}
