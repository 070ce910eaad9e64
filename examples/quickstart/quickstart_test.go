//go:build e2e

package main_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/provider/coreapi/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// build compiles a package of the module into dir and returns the binary's path.
func build(t *testing.T, dir, pkg string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	out := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command(goTool, "build", "-o", out, pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestQuickstart runs the quickstart program against the server binary in production mode,
// as a newcomer would: the operator token comes from `coreapi operator-token`.
func TestQuickstart(t *testing.T) {
	dir := t.TempDir()
	server := build(t, dir, "github.com/provider/coreapi/cmd/coreapi")
	quickstart := build(t, dir, "github.com/provider/coreapi/examples/quickstart")

	key := make([]byte, 32)
	_, _ = rand.Read(key)
	addr := freeAddr(t)
	env := append(os.Environ(),
		"DATABASE_URL="+pgtest.NewDatabase(t),
		"LISTEN_ADDR="+addr,
		"APP_ENV=production",
		"ENCRYPTION_KEY="+base64.StdEncoding.EncodeToString(key),
		"LOG_LEVEL=warn",
	)

	mint := exec.Command(server, "operator-token", "--name", "quickstart")
	mint.Env = env
	var stderr bytes.Buffer
	mint.Stderr = &stderr
	out, err := mint.Output()
	if err != nil {
		t.Fatalf("operator-token: %v\n%s", err, stderr.String())
	}
	token := strings.TrimSpace(string(out))

	serve := exec.Command(server, "serve")
	serve.Env = env
	var serverLog bytes.Buffer
	serve.Stdout, serve.Stderr = &serverLog, &serverLog
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- serve.Wait() }()
	t.Cleanup(func() {
		_ = serve.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("server exit: %v\n%s", err, serverLog.String())
			}
		case <-time.After(30 * time.Second):
			_ = serve.Process.Kill()
			t.Error("the server did not stop within 30s of SIGTERM")
		}
	})
	base := "http://" + addr
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("the server exited: %v\n%s", err, serverLog.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server is not ready after 60s\n%s", serverLog.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, quickstart, "-base-url", base, "-operator-token", token)
	run.Env = os.Environ()
	output, err := run.CombinedOutput()
	t.Logf("quickstart output:\n%s", output)
	if err != nil {
		t.Fatalf("quickstart: %v\nserver log:\n%s", err, serverLog.String())
	}
	for _, want := range []string{"organization", "access token", "is active", "awaiting_payment", "succeeded: 91885 SAR", "advanced to 2025-04-02T00:00:00Z",
		"2025-04-01..2025-04-30 total 34385 SAR: issued", "tax invoice", "short address RRRD2929", "quickstart: done"} {
		if !strings.Contains(string(output), want) {
			t.Errorf("quickstart output lacks %q", want)
		}
	}
}
