//go:build browser

package apidocs_test

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/provider/coreapi/internal/apitest"
	"github.com/provider/coreapi/internal/pgtest"
	"github.com/provider/coreapi/openapi"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// chromium finds Debian's Chromium (or $CHROMIUM).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if name == "" {
			continue
		}
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	t.Fatal("no Chromium found: install it (Debian: apt-get install chromium) or set CHROMIUM")
	return ""
}

// renderedDOM loads url in headless Chromium, lets scripts run for up to budget of virtual
// time, and returns the resulting DOM. Chromium runs without any network of its own.
func renderedDOM(t *testing.T, url string, budget time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium(t),
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-quic",
		"--no-first-run", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--user-data-dir="+t.TempDir(),
		"--virtual-time-budget="+strconv.FormatInt(budget.Milliseconds(), 10),
		"--dump-dom", url)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	return string(out)
}

var operationIDs = regexp.MustCompile(`<span class="opblock-summary-operation-id">([A-Za-z0-9_]+)</span>`)

// TestReferencePage opens /docs of a running server in Chromium and checks that the
// reference lists every operation of the document.
func TestReferencePage(t *testing.T) {
	env := apitest.New(t)
	doc, err := openapi3.NewLoader().LoadFromData(openapi.Document)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			want[op.OperationID] = method + " " + path
		}
	}

	dom := renderedDOM(t, env.URL+"/docs", 20*time.Second)
	if !strings.Contains(dom, `class="swagger-ui`) {
		t.Fatalf("Swagger UI did not render:\n%.2000s", dom)
	}
	if !strings.Contains(dom, doc.Info.Title) {
		t.Errorf("the page does not show the document's title %q", doc.Info.Title)
	}
	shown := map[string]bool{}
	for _, m := range operationIDs.FindAllStringSubmatch(dom, -1) {
		shown[m[1]] = true
	}
	for id, where := range want {
		if !shown[id] {
			t.Errorf("the reference does not list %s (%s)", id, where)
		}
	}
	for id := range shown {
		if _, ok := want[id]; !ok {
			t.Errorf("the reference lists %s, which the document does not have", id)
		}
	}
	t.Logf("the reference lists %d of %d operations", len(shown), len(want))
}
