package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/apitest"
)

func postEvent(env *apitest.Env, token, body string) *apitest.Response {
	return env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/growth/events", Token: token, Body: body})
}

var minimalEvent = map[string]any{"event_name": "page_view", "organization_id": "public-site"}

func TestGrowthEventCreate(t *testing.T) {
	t.Parallel()

	t.Run("Bounds", func(t *testing.T) {
		t.Parallel()
		env := apitest.New(t)
		type bound struct {
			field string
			value any
			ok    bool
		}
		var cases []bound
		// Strings with a maximum length: max accepted, max+1 refused.
		for field, max := range map[string]int{
			"organization_id": 200, "anonymous_id": 200, "source": 200, "medium": 200, "campaign": 200,
			"use_case": 200, "landing_page": 500, "page_path": 500, "developer_language": 100,
			"experiment_id": 120, "experiment_variant": 80,
		} {
			cases = append(cases, bound{field, strings.Repeat("x", max), true}, bound{field, strings.Repeat("x", max+1), false})
		}
		// Minimum lengths: min accepted, min-1 refused.
		cases = append(cases,
			bound{"organization_id", "x", true}, bound{"organization_id", "", false},
			bound{"anonymous_id", strings.Repeat("a", 8), true}, bound{"anonymous_id", strings.Repeat("a", 7), false},
			bound{"source", "", true},
			bound{"elapsed_from_signup_ms", 0, true}, bound{"elapsed_from_signup_ms", 1 << 40, true},
			bound{"elapsed_from_signup_ms", -1, false}, bound{"elapsed_from_signup_ms", 1.5, false},
			bound{"occurred_at", "2025-03-01T09:30:00Z", true}, bound{"occurred_at", "yesterday", false},
			bound{"properties", map[string]any{"s": strings.Repeat("p", 500), "n": 3, "f": 0.5, "b": false, "z": nil}, true},
			bound{"properties", map[string]any{"s": strings.Repeat("p", 501)}, false},
			bound{"properties", map[string]any{"o": map[string]any{}}, false},
			bound{"properties", map[string]any{"a": []any{"x"}}, false},
			bound{"properties", []any{}, false},
			bound{"unknown", "x", false},
		)
		// Every enum: each value accepted, anything else refused.
		for field, values := range map[string][]string{
			"event_name": {"page_view", "product_view", "pricing_view", "docs_view", "tool_used", "signup_clicked",
				"signup_started", "email_verified", "organization_created", "product_selected", "sandbox_provisioned",
				"credential_created", "quickstart_opened", "first_request", "first_success", "webhook_created",
				"plan_selected", "payment_started", "subscription_active", "production_requested", "address_activated",
				"experiment_exposed"},
			"product":      {"einvoice", "address", "platform"},
			"traffic_type": {"public", "real_customer", "sandbox_customer", "employee", "internal", "synthetic", "automated_qa", "load_test"},
			"language":     {"en", "ar"},
			"device_class": {"mobile", "desktop", "tablet", "server"},
		} {
			for _, v := range values {
				cases = append(cases, bound{field, v, true})
			}
			cases = append(cases, bound{field, "bogus", false}, bound{field, nil, false})
		}
		cases = append(cases, bound{"event_name", absent{}, false}, bound{"organization_id", absent{}, false})

		accepted := 0
		for _, c := range cases {
			name := fmt.Sprintf("%s=%.20v", c.field, c.value)
			resp := postEvent(env, apitest.OperatorToken, withFields(t, minimalEvent, map[string]any{c.field: c.value}))
			switch {
			case c.ok && resp.Status != http.StatusAccepted:
				t.Errorf("%s: %d %s, want 202", name, resp.Status, resp.Body)
			case c.ok:
				accepted++
				if resp.JSON(t)["accepted"] != true {
					t.Errorf("%s: %s", name, resp.Body)
				}
			default:
				assertProblem(t, name, resp, http.StatusBadRequest, "validation_failed")
			}
		}
		if n := env.Count("SELECT count(*) FROM growth_events"); n != accepted {
			t.Errorf("%d events stored, %d accepted", n, accepted)
		}
		nul := postEvent(env, apitest.OperatorToken, withFields(t, minimalEvent, map[string]any{"source": "a\u0000b"}))
		assertProblem(t, "NUL", nul, http.StatusBadRequest, "validation_failed")
	})

	t.Run("Defaults", func(t *testing.T) {
		t.Parallel()
		env := apitest.New(t)
		before := time.Now().Add(-time.Second)
		if resp := postEvent(env, apitest.OperatorToken, withFields(t, minimalEvent, nil)); resp.Status != http.StatusAccepted {
			t.Fatalf("%d %s", resp.Status, resp.Body)
		}
		if n := env.Count(`SELECT count(*) FROM growth_events WHERE traffic_type = 'public' AND properties = '{}'
			AND occurred_at BETWEEN $1 AND now() AND anonymous_id IS NULL AND product IS NULL`, before); n != 1 {
			t.Errorf("defaults not applied")
		}
	})

	// JSON can escape half of a UTF-16 surrogate pair (\ud800), which is no character: Go reads
	// it as U+FFFD, as in every text field, but a flat object kept the escape as sent and
	// PostgreSQL's jsonb refuses it: a 500.
	t.Run("LoneSurrogateInProperties", func(t *testing.T) {
		t.Parallel()
		env := apitest.New(t)
		resp := postEvent(env, apitest.OperatorToken, `{"event_name":"page_view","organization_id":"public-site","properties":{"k\udc00":"a\ud800b"}}`)
		if resp.Status != http.StatusAccepted {
			t.Fatalf("%d %s", resp.Status, resp.Body)
		}
		if n := env.Count(`SELECT count(*) FROM growth_events WHERE properties = '{"k\ufffd":"a\ufffdb"}'`); n != 1 {
			t.Errorf("%d events with the surrogates read as U+FFFD, want 1", n)
		}
	})

	t.Run("OrganizationsRecordOnlyTheirOwn", func(t *testing.T) {
		t.Parallel()
		env := apitest.New(t)
		org := uuid.MustParse(createOrganization(t, env, minimalOrganization)["id"].(string))
		token := apitest.OrgToken(org)
		own := postEvent(env, token, withFields(t, minimalEvent, map[string]any{"organization_id": strings.ToUpper(org.String())}))
		if own.Status != http.StatusAccepted {
			t.Fatalf("own: %d %s", own.Status, own.Body)
		}
		for _, other := range []string{uuid.NewString(), "public-site"} {
			resp := postEvent(env, token, withFields(t, minimalEvent, map[string]any{"organization_id": other}))
			assertProblem(t, "for "+other, resp, http.StatusForbidden, "forbidden")
		}
		if n := env.Count("SELECT count(*) FROM growth_events WHERE organization_id = $1", org.String()); n != 1 {
			t.Errorf("%d events stored under the canonical id, want 1", n)
		}
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/growth/summary?organization_id=public-site", Token: token})
		assertProblem(t, "summary of another", resp, http.StatusForbidden, "forbidden")
	})

	t.Run("Burst", func(t *testing.T) {
		t.Parallel()
		env := apitest.New(t)
		const n = 300
		var wg sync.WaitGroup
		statuses := make(chan int, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := withFields(t, minimalEvent, map[string]any{"anonymous_id": fmt.Sprintf("visitor-%04d", i)})
				statuses <- postEvent(env, apitest.OperatorToken, body).Status
			}()
		}
		wg.Wait()
		close(statuses)
		for s := range statuses {
			if s != http.StatusAccepted {
				t.Fatalf("status %d in a burst", s)
			}
		}
		// Every accepted event is stored when the 202 is sent.
		if got := env.Count("SELECT count(DISTINCT anonymous_id) FROM growth_events"); got != n {
			t.Errorf("%d events stored, want %d", got, n)
		}
	})
}

// growthEvent is one event of the crafted set of TestGrowthSummary.
type growthEvent struct {
	name, org, anon, traffic, product, source string
}

func (e growthEvent) body(t testing.TB, occurredAt time.Time) string {
	fields := map[string]any{"event_name": e.name, "organization_id": e.org, "occurred_at": occurredAt.Format(time.RFC3339Nano)}
	for k, v := range map[string]string{"anonymous_id": e.anon, "traffic_type": e.traffic, "product": e.product, "source": e.source} {
		if v != "" {
			fields[k] = v
		}
	}
	return withFields(t, nil, fields)
}

type growthSummary struct {
	Since                   time.Time `json:"since"`
	Until                   time.Time `json:"until"`
	IncludedTrafficTypes    []string  `json:"included_traffic_types"`
	TotalEvents             int64     `json:"total_events"`
	UniqueOrganizations     int64     `json:"unique_organizations"`
	UniqueAnonymousVisitors int64     `json:"unique_anonymous_visitors"`
	EventCounts             []struct {
		EventName string `json:"event_name"`
		Count     int64  `json:"count"`
	} `json:"event_counts"`
	Funnel []struct {
		Position               int      `json:"position"`
		EventName              string   `json:"event_name"`
		Count                  int64    `json:"count"`
		ConversionFromPrevious *float64 `json:"conversion_from_previous"`
		ConversionFromFirst    *float64 `json:"conversion_from_first"`
	} `json:"funnel"`
	ByProduct []struct {
		Product string `json:"product"`
		Count   int64  `json:"count"`
	} `json:"by_product"`
	BySource []struct {
		Source *string `json:"source"`
		Count  int64   `json:"count"`
	} `json:"by_source"`
}

func getSummary(t testing.TB, env *apitest.Env, token, query string) growthSummary {
	t.Helper()
	resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/growth/summary" + query, Token: token})
	if resp.Status != http.StatusOK {
		t.Fatalf("summary%s: %d %s", query, resp.Status, resp.Body)
	}
	var s growthSummary
	if err := json.Unmarshal(resp.Body, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestGrowthSummary(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	now := time.Now().UTC()
	counted := []growthEvent{
		{"page_view", "public-site", "visitor-a1", "", "einvoice", "google"},
		{"page_view", "public-site", "visitor-a1", "", "einvoice", "google"}, // the same visitor again
		{"page_view", "public-site", "visitor-a2", "", "", "newsletter"},
		{"page_view", "public-site", "visitor-a3", "", "", ""},
		{"page_view", "public-site", "visitor-a4", "real_customer", "address", ""},
		{"signup_started", "public-site", "visitor-a1", "", "einvoice", "google"},
		{"signup_started", "public-site", "visitor-a2", "sandbox_customer", "", "newsletter"},
		{"organization_created", "org-a", "", "", "", ""},
		{"organization_created", "org-b", "", "", "", ""},
		{"sandbox_provisioned", "org-a", "", "", "einvoice", ""},
		{"credential_created", "org-a", "", "", "einvoice", ""},
		{"first_request", "org-a", "", "", "einvoice", ""},
		{"first_success", "org-a", "", "", "einvoice", ""},
		{"subscription_active", "org-a", "", "", "einvoice", ""}, // without plan_selected
		{"docs_view", "public-site", "visitor-a5", "", "address", ""},
	}
	internal := []growthEvent{
		{"page_view", "public-site", "visitor-e1", "employee", "einvoice", "google"},
		{"signup_started", "public-site", "visitor-l1", "load_test", "", ""},
		{"organization_created", "org-z", "", "internal", "", ""},
		{"page_view", "public-site", "visitor-s1", "synthetic", "", ""},
		{"first_request", "org-q", "", "automated_qa", "", ""},
	}
	for _, e := range append(append([]growthEvent{}, counted...), internal...) {
		if resp := postEvent(env, apitest.OperatorToken, e.body(t, now.Add(-time.Minute))); resp.Status != http.StatusAccepted {
			t.Fatalf("%v: %d %s", e, resp.Status, resp.Body)
		}
	}
	old := growthEvent{"page_view", "public-site", "visitor-old", "", "einvoice", "google"}
	if resp := postEvent(env, apitest.OperatorToken, old.body(t, now.Add(-2*time.Hour))); resp.Status != http.StatusAccepted {
		t.Fatal(resp.Status)
	}
	since := "?since=" + now.Add(-time.Hour).Format(time.RFC3339)

	type funnelStep struct {
		count          int64
		previous, from any // nil, or a float64
	}
	check := func(name string, s growthSummary, total, orgs, visitors int64, traffic int, counts map[string]int64,
		funnel []funnelStep, products, sources string) {
		t.Helper()
		if s.TotalEvents != total || s.UniqueOrganizations != orgs || s.UniqueAnonymousVisitors != visitors || len(s.IncludedTrafficTypes) != traffic {
			t.Errorf("%s: total %d orgs %d visitors %d traffic %v, want %d %d %d %d types", name,
				s.TotalEvents, s.UniqueOrganizations, s.UniqueAnonymousVisitors, s.IncludedTrafficTypes, total, orgs, visitors, traffic)
		}
		if len(s.EventCounts) != 22 || s.EventCounts[0].EventName != "page_view" || s.EventCounts[21].EventName != "experiment_exposed" {
			t.Errorf("%s: event_counts must list all 22 names in order: %v", name, s.EventCounts)
		}
		for _, c := range s.EventCounts {
			if c.Count != counts[c.EventName] {
				t.Errorf("%s: %s counted %d, want %d", name, c.EventName, c.Count, counts[c.EventName])
			}
		}
		wantSteps := []string{"page_view", "signup_started", "organization_created", "sandbox_provisioned",
			"credential_created", "first_request", "first_success", "plan_selected", "subscription_active"}
		if len(s.Funnel) != len(wantSteps) {
			t.Fatalf("%s: funnel %v", name, s.Funnel)
		}
		for i, st := range s.Funnel {
			w := funnelStep{count: funnel[i].count, previous: funnel[i].previous, from: funnel[i].from}
			got := funnelStep{count: st.Count}
			if st.ConversionFromPrevious != nil {
				got.previous = *st.ConversionFromPrevious
			}
			if st.ConversionFromFirst != nil {
				got.from = *st.ConversionFromFirst
			}
			if st.Position != i+1 || st.EventName != wantSteps[i] || got != w {
				t.Errorf("%s: funnel step %d %s = %+v, want %s %+v", name, st.Position, st.EventName, got, wantSteps[i], w)
			}
		}
		var gotProducts, gotSources []string
		for _, p := range s.ByProduct {
			gotProducts = append(gotProducts, fmt.Sprintf("%s:%d", p.Product, p.Count))
		}
		for _, src := range s.BySource {
			key := "null"
			if src.Source != nil {
				key = *src.Source
			}
			gotSources = append(gotSources, fmt.Sprintf("%s:%d", key, src.Count))
		}
		if strings.Join(gotProducts, " ") != products || strings.Join(gotSources, " ") != sources {
			t.Errorf("%s: by_product %v by_source %v, want %s / %s", name, gotProducts, gotSources, products, sources)
		}
	}

	s := getSummary(t, env, apitest.OperatorToken, since)
	check("public traffic", s, 15, 3, 5, 3,
		map[string]int64{"page_view": 5, "signup_started": 2, "organization_created": 2, "sandbox_provisioned": 1,
			"credential_created": 1, "first_request": 1, "first_success": 1, "subscription_active": 1, "docs_view": 1},
		[]funnelStep{
			{4, nil, 1.0}, {2, 0.5, 0.5}, {2, 1.0, 0.5}, {1, 0.5, 0.25}, {1, 1.0, 0.25},
			{1, 1.0, 0.25}, {1, 1.0, 0.25}, {0, 0.0, 0.0}, {1, nil, 0.25},
		},
		"einvoice:8 address:2", "null:10 google:3 newsletter:2")
	if !s.Since.Equal(now.Add(-time.Hour).Truncate(time.Second)) || s.Until.Before(now) {
		t.Errorf("window %v..%v", s.Since, s.Until)
	}

	all := getSummary(t, env, apitest.OperatorToken, since+"&include_internal_traffic=true")
	check("all traffic", all, 20, 5, 8, 8,
		map[string]int64{"page_view": 7, "signup_started": 3, "organization_created": 3, "sandbox_provisioned": 1,
			"credential_created": 1, "first_request": 2, "first_success": 1, "subscription_active": 1, "docs_view": 1},
		[]funnelStep{
			{6, nil, 1.0}, {3, 0.5, 0.5}, {3, 1.0, 0.5}, {1, 0.3333, 0.1667}, {1, 1.0, 0.1667},
			{2, 2.0, 0.3333}, {1, 0.5, 0.1667}, {0, 0.0, 0.0}, {1, nil, 0.1667},
		},
		"einvoice:9 address:2", "null:14 google:4 newsletter:2")

	orgA := getSummary(t, env, apitest.OperatorToken, since+"&organization_id=org-a")
	if orgA.TotalEvents != 6 || orgA.UniqueOrganizations != 1 || orgA.UniqueAnonymousVisitors != 0 {
		t.Errorf("org-a: %+v", orgA)
	}
	if d := getSummary(t, env, apitest.OperatorToken, ""); d.TotalEvents != 16 || now.Sub(d.Since) < 29*24*time.Hour {
		t.Errorf("default window (30 days, the old event included): total %d since %v", d.TotalEvents, d.Since)
	}

	// An organization sees only its own events, whoever recorded them.
	org := uuid.MustParse(createOrganization(t, env, minimalOrganization)["id"].(string))
	for _, name := range []string{"organization_created", "sandbox_provisioned"} {
		e := growthEvent{name: name, org: org.String()}
		if resp := postEvent(env, apitest.OrgToken(org), e.body(t, now)); resp.Status != http.StatusAccepted {
			t.Fatal(resp.Status)
		}
	}
	own := getSummary(t, env, apitest.OrgToken(org), "")
	if own.TotalEvents != 2 || own.UniqueOrganizations != 1 || own.Funnel[2].Count != 1 || own.Funnel[3].ConversionFromPrevious == nil {
		t.Errorf("organization's own summary: %+v", own)
	}
	if empty := getSummary(t, env, apitest.OperatorToken, "?since="+now.Add(time.Hour).Format(time.RFC3339)); empty.TotalEvents != 0 ||
		empty.Funnel[0].ConversionFromFirst != nil || len(empty.ByProduct) != 0 || len(empty.BySource) != 0 {
		t.Errorf("empty window: %+v", empty)
	}
	for _, q := range []string{"?since=yesterday", "?include_internal_traffic=maybe", "?organization_id="} {
		resp := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/growth/summary" + q, Token: apitest.OperatorToken})
		assertProblem(t, q, resp, http.StatusBadRequest, "validation_failed")
	}
}
