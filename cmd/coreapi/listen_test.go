package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestListenCommand: the flags are checked before anything is opened, and a refused stream
// is reported with the service's answer (exit 1). internal/httpapi's TestListen runs a whole
// session.
func TestListenCommand(t *testing.T) {
	t.Parallel()
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/events/stream" || r.Header.Get("Authorization") != "Bearer sk_bad" || r.URL.Query()["type"][1] != "b.c" {
			t.Errorf("request %s %v", r.URL, r.Header)
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"code":"unauthenticated"}`))
	}))
	defer refusing.Close()
	cases := []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"listen"}, 1, "--api-key and --forward-to are required"},
		{[]string{"listen", "--api-key", "k", "--forward-to", "localhost:3000"}, 1, "is not an http or https URL"},
		{[]string{"listen", "--base-url", refusing.URL, "--api-key", "sk_bad", "--forward-to", "http://127.0.0.1:9/hook", "--events", "a.b, b.c"},
			1, `401 Unauthorized: {"code":"unauthenticated"}`},
	}
	for _, c := range cases {
		code, _, stderr := runCommand(t, nil, c.args...)
		if code != c.code || !strings.Contains(stderr, c.stderr) {
			t.Errorf("%v: exit %d, %q; want %d, %q", c.args, code, stderr, c.code, c.stderr)
		}
	}
}
