package core

import (
	"fmt"
	"strconv"
)

// EQuotaExceeded: the organization holds as many of something as its quota allows (409).
const EQuotaExceeded = "quota_exceeded"

// Quota names one bounded count of what an organization holds.
type Quota int

// The quotas (docs/design.md, "Quotas"). Each is checked in the transaction that would add one
// more, with the row that owns the count locked, so that concurrent requests cannot pass it.
const (
	// QuotaAPIKeys: the organization's API keys that are neither revoked nor expired
	// (connected-business credentials are counted by QuotaCredentialsPerBusiness).
	QuotaAPIKeys Quota = iota
	// QuotaWebhookEndpoints: the organization's webhook endpoints, enabled or disabled.
	QuotaWebhookEndpoints
	// QuotaConnectedBusinesses: the platform's connected businesses that are not closed.
	QuotaConnectedBusinesses
	// QuotaCredentialsPerBusiness: one connected business's credentials not revoked.
	QuotaCredentialsPerBusiness
	// QuotaOpenSupportCases: the organization's support cases neither resolved nor closed.
	QuotaOpenSupportCases
	quotaCount
)

// quotaSettings describes each quota: its setting (environment variable), its default, and
// what it counts, in the words of the refusal.
var quotaSettings = [quotaCount]struct {
	env    string
	def    int
	counts string // "%d <counts>"
}{
	QuotaAPIKeys:                {"QUOTA_API_KEYS", 100, "active API keys (neither revoked nor expired)"},
	QuotaWebhookEndpoints:       {"QUOTA_WEBHOOK_ENDPOINTS", 16, "webhook endpoints"},
	QuotaConnectedBusinesses:    {"QUOTA_CONNECTED_BUSINESSES", 10000, "connected businesses that are not closed"},
	QuotaCredentialsPerBusiness: {"QUOTA_CREDENTIALS_PER_BUSINESS", 20, "credentials not revoked"},
	QuotaOpenSupportCases:       {"QUOTA_OPEN_SUPPORT_CASES", 50, "open support cases (neither resolved nor closed)"},
}

// Quotas are the limits of every organization. The zero value of a limit means its default.
type Quotas [quotaCount]int

// Limit is the limit of quota k.
func (q *Quotas) Limit(k Quota) int {
	if q == nil || q[k] <= 0 {
		return quotaSettings[k].def
	}
	return q[k]
}

// Check refuses (EQuotaExceeded) one more of k for owner (e.g. "Organization 0190…") when it
// holds held already.
func (q *Quotas) Check(k Quota, owner string, held int64) error {
	limit := q.Limit(k)
	if held < int64(limit) {
		return nil
	}
	return Errorf(EQuotaExceeded, "%s has %d %s, its limit of %d: remove one before adding another.",
		owner, held, quotaSettings[k].counts, limit)
}

// QuotasFromEnv reads the quotas' settings: each a positive integer, unset for its default.
func QuotasFromEnv(getenv func(string) string) (Quotas, error) {
	var q Quotas
	for k, s := range quotaSettings {
		v := getenv(s.env)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return q, fmt.Errorf("%s must be a positive integer (default %d), not %q", s.env, s.def, v)
		}
		q[k] = n
	}
	return q, nil
}
