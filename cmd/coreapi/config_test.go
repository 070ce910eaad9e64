package main

import (
	"testing"
	"time"

	"github.com/provider/coreapi/internal/postgres"
)

// TestPartitionRetention: each time-partitioned table keeps its default unless its setting
// says otherwise; less than its least (a day; 30 days for webhook events, 400 for usage
// events), or not a duration, stops the server from starting.
func TestPartitionRetention(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, value, tooShort string
		want                  func(postgres.Retention) time.Duration
		def                   time.Duration
	}{
		{"REQUEST_LOG_RETENTION", "168h", "23h", func(r postgres.Retention) time.Duration { return r.RequestLogs }, 720 * time.Hour},
		{"AUDIT_RETENTION", "17520h", "23h", func(r postgres.Retention) time.Duration { return r.AuditEvents }, 9600 * time.Hour},
		{"GROWTH_EVENT_RETENTION", "24h", "23h", func(r postgres.Retention) time.Duration { return r.GrowthEvents }, 9504 * time.Hour},
		{"WEBHOOK_EVENT_RETENTION", "720h", "719h", func(r postgres.Retention) time.Duration { return r.WebhookEvents }, 720 * time.Hour},
		{"USAGE_EVENT_RETENTION", "17520h", "9599h", func(r postgres.Retention) time.Duration { return r.UsageEvents }, 9600 * time.Hour},
	} {
		for value, want := range map[string]time.Duration{"": c.def, c.value: mustDuration(t, c.value), c.tooShort: 0, "30d": 0, "-720h": 0} {
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
