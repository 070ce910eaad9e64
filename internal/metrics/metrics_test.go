package metrics_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/provider/coreapi/internal/metrics"
)

func exposition(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

// TestHooks checks the registration hooks other components (webhook delivery) use.
func TestHooks(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	depth := 7.0
	if err := m.GaugeFunc("webhook_queue_depth", "Deliveries waiting.", func() float64 { return depth }); err != nil {
		t.Fatal(err)
	}
	if err := m.GaugeFunc("webhook_queue_depth", "Again.", func() float64 { return 0 }); err == nil {
		t.Error("registering a gauge name twice succeeded")
	}
	first, err := m.CounterVec("webhook_deliveries_total", "Delivery attempts by outcome.", "outcome")
	if err != nil {
		t.Fatal(err)
	}
	second, err := m.CounterVec("webhook_deliveries_total", "Delivery attempts by outcome.", "outcome")
	if err != nil || first != second {
		t.Fatalf("asking again for a counter gave another one (%v)", err)
	}
	first.WithLabelValues("succeeded").Add(3)
	second.WithLabelValues("failed").Inc()
	out := exposition(t, m)
	for _, want := range []string{
		"coreapi_webhook_queue_depth 7",
		`coreapi_webhook_deliveries_total{outcome="succeeded"} 3`,
		`coreapi_webhook_deliveries_total{outcome="failed"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

func TestObserveRequestBoundsLabels(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	m.ObserveRequest("BREW", "", 418, time.Millisecond)
	if out := exposition(t, m); !strings.Contains(out, `coreapi_http_requests_total{method="other",route="unmatched",status="418"} 1`) {
		t.Errorf("unknown methods and routes are not folded:\n%s", out)
	}
}

func TestNilRecordsNothing(t *testing.T) {
	t.Parallel()
	var m *metrics.Metrics
	m.ObserveRequest("GET", "/x", 200, time.Millisecond)
	m.IdempotencyReplayed()
	m.RateLimited("standard")
	if err := m.GaugeFunc("x", "x", func() float64 { return 0 }); err != nil {
		t.Fatal(err)
	}
	if c, err := m.CounterVec("y_total", "y", "l"); err != nil || c == nil {
		t.Fatalf("CounterVec on nil: %v", err)
	}
}
