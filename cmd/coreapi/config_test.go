package main

import (
	"testing"
	"time"
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
