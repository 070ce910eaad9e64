package httpapi_test

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/provider/coreapi/internal/apitest"
)

// metricValue returns the value of the sample whose name and labels start with series, e.g.
// `coreapi_http_requests_total{method="GET",route="/v1/organizations/{id}",status="200"}`.
func metricValue(t testing.TB, exposition, series string) float64 {
	t.Helper()
	for _, line := range strings.Split(exposition, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return v
		}
	}
	return 0
}

func scrape(t testing.TB, env *apitest.Env) string {
	t.Helper()
	resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/metrics"})
	if resp.Status != http.StatusOK {
		t.Fatalf("GET /metrics: %d: %s", resp.Status, resp.Body)
	}
	return string(resp.Body)
}

func TestMetrics(t *testing.T) {
	t.Parallel()

	t.Run("RequestsByRouteTemplateAndStatus", func(t *testing.T) {
		t.Parallel()
		env := apitest.New(t)
		org := createOrganization(t, env, minimalOrganization)
		for range 3 {
			env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/organizations/" + org["id"].(string), Token: apitest.OperatorToken})
		}
		env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/organizations/019a0000-0000-7000-8000-000000000000", Token: apitest.OperatorToken})
		env.Do(apitest.Request{Method: http.MethodGet, Path: "/no/such/thing"})
		m := scrape(t, env)
		for series, want := range map[string]float64{
			`coreapi_http_requests_total{method="GET",route="/v1/organizations/{id}",status="200"}`:                 3,
			`coreapi_http_requests_total{method="GET",route="/v1/organizations/{id}",status="404"}`:                 1,
			`coreapi_http_requests_total{method="POST",route="/v1/organizations",status="201"}`:                     1,
			`coreapi_http_requests_total{method="GET",route="unmatched",status="404"}`:                              1,
			`coreapi_http_request_duration_seconds_count{method="GET",route="/v1/organizations/{id}",status="200"}`: 3,
		} {
			if got := metricValue(t, m, series); got != want {
				t.Errorf("%s = %g, want %g", series, got, want)
			}
		}
		if strings.Contains(m, org["id"].(string)) {
			t.Error("an organization id appears in the metrics: labels must be route templates")
		}
		for _, name := range []string{"coreapi_db_pool_max_connections", "coreapi_db_pool_acquired_connections", "coreapi_db_pool_acquires_total", "coreapi_provisioning_jobs_pending", "go_goroutines"} {
			if !regexp.MustCompile(`(?m)^` + name + ` \d`).MatchString(m) {
				t.Errorf("no %s sample", name)
			}
		}
	})

	t.Run("IdempotencyReplays", func(t *testing.T) {
		t.Parallel()
		env := apitest.New(t)
		for range 3 {
			postWithKey(env, apitest.OperatorToken, "/v1/organizations", "metrics-replay", minimalOrganization)
		}
		if got := metricValue(t, scrape(t, env), "coreapi_idempotency_replays_total"); got != 2 {
			t.Errorf("replays = %g, want 2", got)
		}
	})

	t.Run("RateLimitRefusals", func(t *testing.T) {
		t.Parallel()
		f := newKeyFixture(t)
		key := f.createKey(t, []string{"organizations:read"}, map[string]any{"rate_limit_policy": "strict"})["full_key"].(string)
		refused := 0
		for _, resp := range burstsUntilLimited(func() *apitest.Response {
			return f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/organizations/" + f.orgID, Token: key})
		}) {
			if resp.Status == http.StatusTooManyRequests {
				refused++
			}
		}
		if refused == 0 {
			t.Fatal("5 bursts of 30 concurrent requests never hit the strict policy (burst 20)")
		}
		m := scrape(t, f.env)
		if got := metricValue(t, m, `coreapi_rate_limit_refusals_total{policy="strict"}`); got != float64(refused) {
			t.Errorf("refusals = %g, want %d", got, refused)
		}
		series := `coreapi_http_requests_total{method="GET",route="/v1/organizations/{id}",status="429"}`
		if got := metricValue(t, m, series); got != float64(refused) {
			t.Errorf("%s = %g, want %d", series, got, refused)
		}
	})
}

func TestReferenceEndpoints(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	// Outside the contract gate: no credential needed, and each request is measured under
	// its own route.
	for path, contentType := range map[string]string{
		"/docs":                       "text/html",
		"/docs/assets/swagger-ui.css": "text/css",
		"/openapi.yaml":               "application/yaml",
		"/openapi.json":               "application/json",
	} {
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: path})
		if resp.Status != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), contentType) {
			t.Errorf("GET %s: %d %q, want 200 %s", path, resp.Status, resp.Header.Get("Content-Type"), contentType)
		}
	}
	m := scrape(t, env)
	for _, route := range []string{"/docs", "/docs/assets/*", "/openapi.yaml", "/openapi.json"} {
		series := `coreapi_http_requests_total{method="GET",route="` + route + `",status="200"}`
		if got := metricValue(t, m, series); got != 1 {
			t.Errorf("%s = %g, want 1", series, got)
		}
	}
}
