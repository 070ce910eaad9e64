package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/internal/pgtest"
)

// runCommand runs the binary's command line with env and returns its exit code and output.
func runCommand(t testing.TB, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = execute(context.Background(), args, func(k string) string { return env[k] }, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestHelp(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"--help"}, []string{"Usage: coreapi [command]", "serve", "migrate", "seed", "operator-token", "DATABASE_URL", "LOG_LEVEL"}},
		{[]string{"help"}, []string{"Usage: coreapi [command]"}},
		{[]string{"serve", "--help"}, []string{"Usage: coreapi serve", "/metrics", "ENCRYPTION_KEY"}},
		{[]string{"migrate", "-h"}, []string{"Usage: coreapi migrate", "advisory lock"}},
		{[]string{"seed", "--help"}, []string{"Usage: coreapi seed", "catalogue"}},
		{[]string{"operator-token", "--help"}, []string{"Usage: coreapi operator-token", "-name", "-revoke", "-list"}},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runCommand(t, nil, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d", code)
			}
			// Once, on stdout: a terminal shows both streams.
			if n := strings.Count(stdout, "Usage: coreapi"); n != 1 || stderr != "" {
				t.Errorf("the help is printed %d times on stdout, and on stderr:\n%s", n, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("help lacks %q:\n%s", w, stdout)
				}
			}
		})
	}
	t.Run("ErrUnknownCommand", func(t *testing.T) {
		t.Parallel()
		if code, _, stderr := runCommand(t, nil, "frobnicate"); code != 2 || !strings.Contains(stderr, `unknown command "frobnicate"`) {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	})
	t.Run("ErrUnknownFlag", func(t *testing.T) {
		t.Parallel()
		code, stdout, stderr := runCommand(t, nil, "migrate", "--force")
		if code != 2 {
			t.Fatalf("exit %d, want 2", code)
		}
		if !strings.Contains(stderr, "flag provided but not defined: -force") ||
			strings.Count(stderr, "Usage: coreapi migrate") != 1 || stdout != "" {
			t.Errorf("a bad flag: the error and the usage once on stderr, nothing on stdout; stdout:\n%s\nstderr:\n%s", stdout, stderr)
		}
	})
	t.Run("GarbageCollectorAsTheCodeDoes", func(t *testing.T) {
		t.Parallel()
		// The server sets no collector settings of its own: the help says Go's defaults.
		_, stdout, _ := runCommand(t, nil, "serve", "--help")
		if !strings.Contains(stdout, "GOGC=100 and no memory limit") {
			t.Errorf("the help's GOGC line:\n%s", stdout)
		}
	})
}

// TestREADMEDocumentsEnvironment checks that the README lists every variable of the help.
func TestREADMEDocumentsEnvironment(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	names := regexp.MustCompile(`(?m)^  ([A-Z_]+) `).FindAllStringSubmatch(environmentHelp, -1)
	if len(names) < 8 {
		t.Fatalf("found only %d variables in the help", len(names))
	}
	for _, m := range names {
		if !strings.Contains(string(readme), "| `"+m[1]+"` |") {
			t.Errorf("README.md has no table row for %s", m[1])
		}
	}
}

func TestMigrateAndSeed(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DATABASE_URL": pgtest.NewDatabase(t), "LOG_LEVEL": "warn"}
	if code, stdout, stderr := runCommand(t, env, "migrate"); code != 0 || !strings.Contains(stdout, "up to date") {
		t.Fatalf("migrate: exit %d: %s %s", code, stdout, stderr)
	}
	for range 2 { // seeding again changes nothing
		code, stdout, stderr := runCommand(t, env, "seed")
		if code != 0 {
			t.Fatalf("seed: exit %d: %s", code, stderr)
		}
		for _, w := range []string{"einvoice", "address", "platform", "einvoice-starter-2024 (deprecated)", "catalogue: 3 products"} {
			if !strings.Contains(stdout, w) {
				t.Errorf("seed report lacks %q:\n%s", w, stdout)
			}
		}
	}
}

// startServer runs serve with env on a free port until the test ends, and returns its URL.
func startServer(t *testing.T, env map[string]string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	env["LISTEN_ADDR"] = ln.Addr().String()
	ln.Close()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, func(k string) string { return env[k] }, os.Stdout) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	base := "http://" + env["LISTEN_ADDR"]
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		select {
		case err := <-done:
			t.Fatalf("serve stopped: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not ready: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func statusOf(t *testing.T, base, token string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/v1/products", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestOperatorToken mints a token with the command, uses it against a production-mode
// server, and revokes it.
func TestOperatorToken(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	env := map[string]string{"DATABASE_URL": dsn, "LOG_LEVEL": "error", "APP_ENV": "production",
		"ENCRYPTION_KEY": base64.StdEncoding.EncodeToString(key)}

	code, stdout, stderr := runCommand(t, env, "operator-token", "--name", "on-call")
	if code != 0 {
		t.Fatalf("operator-token: exit %d: %s", code, stderr)
	}
	token := strings.TrimSpace(stdout)
	if !strings.HasPrefix(token, "op_") || strings.Contains(token, "\n") {
		t.Fatalf("stdout must be the token alone, got %q", stdout)
	}
	if strings.Contains(stderr, token) {
		t.Error("the token was also written to standard error")
	}
	base := startServer(t, env)

	if got := statusOf(t, base, token); got != http.StatusOK {
		t.Fatalf("operator token: status %d, want 200", got)
	}
	if got := statusOf(t, base, "dev:operator"); got != http.StatusUnauthorized {
		t.Errorf("development token in production: status %d, want 401", got)
	}
	if got := statusOf(t, base, "op_"+strings.Repeat("a", 48)); got != http.StatusUnauthorized {
		t.Errorf("unknown operator token: status %d, want 401", got)
	}

	code, stdout, _ = runCommand(t, env, "operator-token", "--list")
	if code != 0 || !strings.Contains(stdout, "on-call") || strings.Contains(stdout, token) {
		t.Fatalf("--list: exit %d:\n%s", code, stdout)
	}
	id := strings.Fields(strings.Split(stdout, "\n")[1])[0]
	if code, _, stderr := runCommand(t, env, "operator-token", "--revoke", id); code != 0 {
		t.Fatalf("--revoke: exit %d: %s", code, stderr)
	}
	if got := statusOf(t, base, token); got != http.StatusUnauthorized {
		t.Errorf("revoked operator token: status %d, want 401", got)
	}
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var hashes int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM operator_tokens WHERE token_hash = sha256(convert_to($1, 'UTF8'))", token).Scan(&hashes); err != nil {
		t.Fatal(err)
	}
	if hashes != 1 {
		t.Errorf("%d rows hold the token's SHA-256, want 1", hashes)
	}
}
