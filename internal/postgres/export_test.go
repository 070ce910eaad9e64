package postgres

import (
	"crypto/sha256"
	"sync/atomic"
)

// Cached reports whether c holds bearer.
func (c *CredentialCache) Cached(bearer string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.entries[sha256.Sum256([]byte(bearer))]
	return ok
}

// SummaryFromEvents makes s read every summary from growth_events, not the rollups.
func (s *GrowthService) SummaryFromEvents() { s.rawSummary = true }

// CountSecretChecks makes s count its secret comparisons in n.
func (s *APIKeyService) CountSecretChecks(n *atomic.Int64) { s.onSecretCheck = func() { n.Add(1) } }
