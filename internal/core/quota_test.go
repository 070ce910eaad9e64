package core

import (
	"strings"
	"testing"
)

func TestQuotasFromEnv(t *testing.T) {
	env := map[string]string{"QUOTA_API_KEYS": "7"}
	q, err := QuotasFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if q.Limit(QuotaAPIKeys) != 7 || q.Limit(QuotaWebhookEndpoints) != 16 {
		t.Errorf("limits %d and %d, want 7 and the default 16", q.Limit(QuotaAPIKeys), q.Limit(QuotaWebhookEndpoints))
	}
	for _, bad := range []string{"0", "-1", "many", "1.5"} {
		env["QUOTA_OPEN_SUPPORT_CASES"] = bad
		if _, err := QuotasFromEnv(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "QUOTA_OPEN_SUPPORT_CASES") {
			t.Errorf("QUOTA_OPEN_SUPPORT_CASES=%q: error %v, want one naming the variable", bad, err)
		}
	}
}

func TestQuotaCheck(t *testing.T) {
	q := Quotas{QuotaWebhookEndpoints: 2}
	if err := q.Check(QuotaWebhookEndpoints, "Organization o", 1); err != nil {
		t.Errorf("1 of 2: %v", err)
	}
	err := q.Check(QuotaWebhookEndpoints, "Organization o", 2)
	if ErrorCode(err) != EQuotaExceeded || !strings.Contains(err.Error(), "Organization o has 2 webhook endpoints, its limit of 2") {
		t.Errorf("2 of 2: %v", err)
	}
}
