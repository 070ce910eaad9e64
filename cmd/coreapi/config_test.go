package main

import (
	"testing"
	"time"

	"github.com/provider/coreapi/internal/postgres"
)

// TestWebhookEventRetention: events are kept 30 days unless WEBHOOK_EVENT_RETENTION says
// longer; shorter, or not a duration, stops the server from starting.
func TestWebhookEventRetention(t *testing.T) {
	t.Parallel()
	for value, want := range map[string]time.Duration{"": 720 * time.Hour, "2160h": 2160 * time.Hour, "720h": 720 * time.Hour, "719h": 0, "30d": 0, "0": 0} {
		cfg, err := loadConfig(func(name string) string {
			if name == "WEBHOOK_EVENT_RETENTION" {
				return value
			}
			return ""
		})
		switch {
		case want == 0 && err == nil:
			t.Errorf("%q accepted as %v", value, cfg.webhookRetention)
		case want != 0 && (err != nil || cfg.webhookRetention != want):
			t.Errorf("%q: %v, %v; want %v", value, cfg.webhookRetention, err, want)
		}
	}
}

// TestPartitionRetention: each time-partitioned table keeps its default unless its setting
// says otherwise; less than a day, or not a duration, stops the server from starting.
func TestPartitionRetention(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, value string
		want        func(postgres.Retention) time.Duration
		def         time.Duration
	}{
		{"REQUEST_LOG_RETENTION", "168h", func(r postgres.Retention) time.Duration { return r.RequestLogs }, 720 * time.Hour},
		{"AUDIT_RETENTION", "17520h", func(r postgres.Retention) time.Duration { return r.AuditEvents }, 9600 * time.Hour},
		{"GROWTH_EVENT_RETENTION", "24h", func(r postgres.Retention) time.Duration { return r.GrowthEvents }, 9504 * time.Hour},
	} {
		for value, want := range map[string]time.Duration{"": c.def, c.value: mustDuration(t, c.value), "23h": 0, "30d": 0, "-720h": 0} {
			cfg, err := loadConfig(func(name string) string {
				if name == c.name {
					return value
				}
				return ""
			})
			switch {
			case want == 0 && err == nil:
				t.Errorf("%s=%q accepted as %v", c.name, value, c.want(cfg.retention))
			case want != 0 && (err != nil || c.want(cfg.retention) != want):
				t.Errorf("%s=%q: %v, %v; want %v", c.name, value, c.want(cfg.retention), err, want)
			}
		}
	}
}

func mustDuration(t *testing.T, s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
