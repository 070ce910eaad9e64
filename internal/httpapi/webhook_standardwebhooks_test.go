package httpapi_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/provider/coreapi/internal/apitest"
)

// receiverDir is the Node.js receiver that verifies deliveries with the official Standard
// Webhooks library (the npm package standardwebhooks, pinned by its package-lock.json).
var receiverDir = filepath.Join("..", "..", "examples", "webhook-receiver")

// nodeReceiver is examples/webhook-receiver running: its base URL, and what it says of each
// delivery it verified.
type nodeReceiver struct {
	URL      string
	verified chan nodeVerification
}

type nodeVerification struct {
	WebhookID    string   `json:"webhook_id"`
	Signature    string   `json:"signature"`
	VerifiedWith []string `json:"verified_with"`
}

// startNodeReceiver runs the receiver, installing its pinned packages first when they are
// missing. Without node the test is skipped, except in CI (.ci/run installs node).
func startNodeReceiver(t *testing.T) *nodeReceiver {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI_IN_CLONE") != "" {
			t.Fatal("CI must verify webhook deliveries with the standardwebhooks npm package, and node is not installed")
		}
		t.Skip("node is not installed: the official Standard Webhooks library cannot verify deliveries here")
	}
	if _, err := os.Stat(filepath.Join(receiverDir, "node_modules", "standardwebhooks")); err != nil {
		install := exec.Command("npm", "ci", "--no-audit", "--no-fund")
		install.Dir = receiverDir
		if out, err := install.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", receiverDir, err, out)
		}
	}
	cmd := exec.Command(node, "receiver.mjs")
	cmd.Dir = receiverDir
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := bufio.NewScanner(stdout)
	var hello struct{ Listening string }
	if !lines.Scan() || json.Unmarshal(lines.Bytes(), &hello) != nil || hello.Listening == "" {
		t.Fatalf("the receiver did not say where it listens: %q", lines.Text())
	}
	r := &nodeReceiver{URL: hello.Listening, verified: make(chan nodeVerification, 16)}
	go func() {
		for lines.Scan() {
			var v nodeVerification
			if err := json.Unmarshal(lines.Bytes(), &v); err == nil {
				r.verified <- v
			}
		}
	}()
	return r
}

// trust gives the receiver secrets to verify with, by label.
func (r *nodeReceiver) trust(t *testing.T, secrets map[string]string) {
	t.Helper()
	body, _ := json.Marshal(secrets)
	resp, err := http.Post(r.URL+"/secrets", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// next waits for the receiver's verdict on the next delivery.
func (r *nodeReceiver) next(t *testing.T) nodeVerification {
	t.Helper()
	select {
	case v := <-r.verified:
		return v
	case <-time.After(eventually):
		t.Fatalf("the receiver got no delivery within %s", eventually)
		return nodeVerification{}
	}
}

// TestWebhookDelivery_StandardWebhooksLibrary: real deliveries verify with the official
// library, with the endpoint's secret; during a rotation's grace period with the old secret
// and with the new one; after a rotation without grace period with the new one alone.
func TestWebhookDelivery_StandardWebhooksLibrary(t *testing.T) {
	t.Parallel()
	recv := startNodeReceiver(t)
	env := apitest.New(t)
	org, token := newOrganization(t, env)
	e := createEndpoint(t, env, token, endpointBody(org, recv.URL+"/hooks", "api_key.created"))
	id := e["id"].(string)
	recv.trust(t, map[string]string{"first": e["secret"].(string)})

	deliver := func(step string, want ...string) {
		t.Helper()
		event := sendTest(t, env, token, id)["event_id"]
		v := recv.next(t)
		if v.WebhookID != event || fmt.Sprint(v.VerifiedWith) != fmt.Sprint(want) {
			t.Errorf("%s: delivery %s (signature %q) verified with %v, want %s verified with %v", step, v.WebhookID, v.Signature, v.VerifiedWith, event, want)
		}
		waitForCount(t, env, 1, "SELECT count(*) FROM webhook_deliveries WHERE event_id = $1 AND status = 'succeeded'", event)
	}
	rotate := func(label string, grace int) {
		t.Helper()
		resp := rotateSecret(env, token, id, fmt.Sprintf(`{"grace_period_seconds":%d}`, grace), nil)
		if resp.Status != http.StatusOK {
			t.Fatalf("rotate: %d %s", resp.Status, resp.Body)
		}
		recv.trust(t, map[string]string{label: resp.JSON(t)["secret"].(string)})
	}

	deliver("registered", "first")
	rotate("second", 3600)
	deliver("grace period", "first", "second")
	rotate("third", 0)
	deliver("rotated without grace period", "third")
}
