package httpapi_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/provider/coreapi/internal/apitest"
	"github.com/provider/coreapi/internal/httpapi"
)

// spans waits until the recorder holds an ended span that match accepts, and returns the
// ended spans then.
func spans(t *testing.T, rec *tracetest.SpanRecorder, what string, match func(sdktrace.ReadOnlySpan) bool) (sdktrace.ReadOnlySpan, []sdktrace.ReadOnlySpan) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		ended := rec.Ended()
		for _, s := range ended {
			if match(s) {
				return s, ended
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no span %s within 15 s", what)
		}
	}
}

// requestSpan is the span of the request whose response carried requestID.
func requestSpan(t *testing.T, rec *tracetest.SpanRecorder, requestID string) (sdktrace.ReadOnlySpan, []sdktrace.ReadOnlySpan) {
	t.Helper()
	return spans(t, rec, "of request "+requestID, func(s sdktrace.ReadOnlySpan) bool { return attr(s, "request_id") == requestID })
}

func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, a := range s.Attributes() {
		if string(a.Key) == key {
			return a.Value.String()
		}
	}
	return ""
}

// children are the spans of all whose parent is s.
func children(s sdktrace.ReadOnlySpan, all []sdktrace.ReadOnlySpan) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, c := range all {
		if c.Parent().SpanID() == s.SpanContext().SpanID() && c.SpanContext().TraceID() == s.SpanContext().TraceID() {
			out = append(out, c)
		}
	}
	return out
}

// TestTracing checks the span tree of one request of each kind (a read, a write, a path of
// no operation) and of a webhook delivery, with an in-memory exporter, and that no span
// carries a credential or a secret.
func TestTracing(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	env := apitest.New(t, func(cfg *httpapi.Config) { cfg.Tracing = tp })
	org := createOrganization(t, env, productionReadyOrganization)["id"].(string)
	f := &keyFixture{env: env, orgID: org}
	key := f.createKey(t, []string{"webhooks:read", "webhooks:write", "organizations:read"}, nil)
	token := key["full_key"].(string)

	kinds := []struct {
		name, method, path, body, span string
		status                         int
		database                       bool
	}{
		{"read", http.MethodGet, "/v1/organizations/" + org, "", "GET /v1/organizations/{id}", http.StatusOK, true},
		{"write", http.MethodPost, "/v1/api-keys", `{"organization_id":"` + org + `","name":"traced","environment":"sandbox","scopes":["usage:read"]}`,
			"POST /v1/api-keys", http.StatusForbidden, true}, // the key may not create keys: a refusal is traced too
		{"no operation", http.MethodGet, "/v1/nothing-here", "", "GET", http.StatusNotFound, false},
	}
	for _, k := range kinds {
		resp := env.Do(apitest.Request{Method: k.method, Path: k.path, Token: token, Body: k.body})
		if resp.Status != k.status {
			t.Fatalf("%s: %d %s", k.name, resp.Status, resp.Body)
		}
		s, all := requestSpan(t, rec, resp.Header.Get("Request-Id"))
		if s.Name() != k.span || s.SpanKind() != trace.SpanKindServer || s.Parent().IsValid() {
			t.Errorf("%s: span %q (%s, parent %v), want the root server span %q", k.name, s.Name(), s.SpanKind(), s.Parent().IsValid(), k.span)
		}
		if attr(s, "http.response.status_code") != strconv.Itoa(k.status) {
			t.Errorf("%s: status attribute %q", k.name, attr(s, "http.response.status_code"))
		}
		var statements []string
		for _, c := range children(s, all) {
			if strings.HasPrefix(c.Name(), "db ") {
				statements = append(statements, c.Name())
			}
		}
		if k.database != (len(statements) > 0) {
			t.Errorf("%s: database spans %v", k.name, statements)
		}
	}

	// A delivery: its span, and the HTTP request to the receiver as its child, whose URL
	// has lost its query (which may carry the receiver's credentials).
	rcv := newReceiver(t, nil)
	endpoint := createEndpoint(t, env, token, endpointBody(org, rcv.URL+"?token=receiver-credential", "webhook_endpoint.test"))
	sendTest(t, env, token, endpoint["id"].(string))
	delivery, all := spans(t, rec, "of a delivery", func(s sdktrace.ReadOnlySpan) bool { return s.Name() == "webhook delivery" })
	if attr(delivery, "http.response.status_code") != "204" {
		t.Errorf("delivery span: %v", delivery.Attributes())
	}
	if sent := children(delivery, all); len(sent) != 1 || sent[0].SpanKind() != trace.SpanKindClient {
		t.Errorf("the delivery's children: %v", sent)
	} else if u := attr(sent[0], "url.full"); u == "" || strings.Contains(u, "token") {
		t.Errorf("the delivery's request span has url.full %q", u)
	}

	// Nothing secret in any attribute of any span.
	secrets := []string{token, key["secret"].(string), endpoint["secret"].(string), "receiver-credential", "Bearer"}
	for _, s := range rec.Ended() {
		for _, a := range s.Attributes() {
			for _, secret := range secrets {
				if strings.Contains(a.Value.String(), secret) {
					t.Errorf("span %s: attribute %s carries a secret: %s", s.Name(), a.Key, a.Value.String())
				}
			}
		}
	}
}
