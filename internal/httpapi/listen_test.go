package httpapi_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/provider/coreapi/internal/apitest"
	"github.com/provider/coreapi/internal/httpapi"
	"github.com/provider/coreapi/internal/listen"
	"github.com/provider/coreapi/internal/webhook/signature"
)

// runningListener is a `coreapi listen` session: its printed lines, and its command input.
type runningListener struct {
	lines    chan string
	commands *io.PipeWriter
	secret   string
	done     chan error
}

// startListener runs a listener of org's events with key, forwarding to forwardTo, until
// the test ends, and reads the secret it prints.
func startListener(t *testing.T, env *apitest.Env, key, forwardTo string) *runningListener {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, printed := io.Pipe()
	in, commands := io.Pipe()
	l := &runningListener{lines: make(chan string, 64), commands: commands, done: make(chan error, 1)}
	go func() {
		for s := bufio.NewScanner(out); s.Scan(); {
			l.lines <- s.Text()
		}
	}()
	go func() {
		l.done <- listen.New(listen.Options{BaseURL: env.URL, APIKey: key, ForwardTo: forwardTo}, printed).Run(ctx, in)
		printed.Close()
	}()
	t.Cleanup(func() { cancel(); commands.Close(); <-l.done })
	l.secret = strings.TrimSpace(strings.SplitAfter(l.waitLine(t, "Signing secret"), ":")[1])
	return l
}

// waitLine returns the next printed line containing want, skipping the others.
func (l *runningListener) waitLine(t *testing.T, want string) string {
	t.Helper()
	for {
		select {
		case line := <-l.lines:
			if strings.Contains(line, want) {
				return line
			}
		case err := <-l.done:
			t.Fatalf("the listener stopped (%v) before printing %q", err, want)
		case <-time.After(15 * time.Second):
			t.Fatalf("the listener printed no %q within 15 s", want)
		}
	}
}

// TestListen: `coreapi listen` forwards each event with the Standard Webhooks headers the
// stream signed with the session's secret, prints the receiver's answer, resends an event
// signed anew, and the official standardwebhooks library verifies what it forwards.
func TestListen(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, func(cfg *httpapi.Config) { cfg.EventStream = httpapi.EventStreamTiming{Poll: 20 * time.Millisecond} })
	org := createOrganization(t, env, productionReadyOrganization)["id"].(string)
	f := &keyFixture{env: env, orgID: org}
	key := f.createKey(t, []string{"webhooks:read"}, nil)["full_key"].(string)

	t.Run("with internal/webhook/signature", func(t *testing.T) {
		rcv := newReceiver(t, func(n int, _ received) int {
			return []int{http.StatusNoContent, http.StatusInternalServerError}[(n-1)%2]
		})
		l := startListener(t, env, key, rcv.URL)
		created := f.createKey(t, []string{"usage:read"}, nil)
		first := rcv.waitFor(t, 1)[0]
		ev := first.event(t, l.secret) // verifies the signature
		if ev["type"] != "api_key.created" || ev["data"].(map[string]any)["id"] != created["id"] {
			t.Fatalf("forwarded: %s", first.Body)
		}
		if first.Header.Get("Content-Type") != "application/json" {
			t.Errorf("Content-Type %q", first.Header.Get("Content-Type"))
		}
		id := first.Header.Get(signature.HeaderID)
		if line := l.waitLine(t, id); !strings.Contains(line, "api_key.created") || !strings.Contains(line, "204 No Content") {
			t.Errorf("printed %q", line)
		}
		// Resent: the same webhook-id and body, signed anew; the receiver's 500 is printed.
		if _, err := io.WriteString(l.commands, "resend "+id+"\n"); err != nil {
			t.Fatal(err)
		}
		again := rcv.waitFor(t, 2)[1]
		again.event(t, l.secret)
		if again.Header.Get(signature.HeaderID) != id || string(again.Body) != string(first.Body) {
			t.Errorf("resent %s %s, want %s %s", again.Header.Get(signature.HeaderID), again.Body, id, first.Body)
		}
		if line := l.waitLine(t, id); !strings.Contains(line, "500 Internal Server Error") || !strings.Contains(line, "(resent)") {
			t.Errorf("printed %q", line)
		}
		if _, err := io.WriteString(l.commands, "resend 0193b5ee-c6d7-7104-8f1d-92a3b4c5d6e7\n"); err != nil {
			t.Fatal(err)
		}
		l.waitLine(t, "no event")
	})

	t.Run("with the official standardwebhooks library", func(t *testing.T) {
		recv := startNodeReceiver(t)
		l := startListener(t, env, key, recv.URL+"/hook")
		recv.trust(t, map[string]string{"session": l.secret})
		f.createKey(t, []string{"usage:read"}, nil)
		v := recv.next(t)
		if len(v.VerifiedWith) != 1 || v.VerifiedWith[0] != "session" {
			t.Fatalf("the library verified the forwarded event %s with %v", v.WebhookID, v.VerifiedWith)
		}
		l.waitLine(t, v.WebhookID+"  -> 204")
		if _, err := io.WriteString(l.commands, "resend\n"); err != nil {
			t.Fatal(err)
		}
		if again := recv.next(t); again.WebhookID != v.WebhookID || len(again.VerifiedWith) != 1 {
			t.Errorf("resent: %+v", again)
		}
	})

	// A listener whose key is revoked stops, saying why.
	t.Run("revoked key", func(t *testing.T) {
		k := f.createKey(t, []string{"webhooks:read"}, nil)
		l := startListener(t, env, k["full_key"].(string), "http://127.0.0.1:9/hook")
		if resp := f.keyAction(apitest.OperatorToken, k, "revoke"); resp.Status != http.StatusOK {
			t.Fatalf("revoke: %d", resp.Status)
		}
		select {
		case err := <-l.done:
			l.done <- err // for the cleanup
			if err == nil || !strings.Contains(err.Error(), "credential_withdrawn") {
				t.Errorf("the listener ended with %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("the listener did not stop within 15 s of its key's revocation")
		}
	})
}
