package postgres

import (
	"crypto/sha256"
)

// Listening reports whether c hears credential changes (and so may cache).
func (c *CredentialCache) Listening() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.listening
}

// Cached reports whether c holds bearer.
func (c *CredentialCache) Cached(bearer string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.entries[sha256.Sum256([]byte(bearer))]
	return ok
}

// SummaryFromEvents makes s read every summary from growth_events, not the rollups.
func (s *GrowthService) SummaryFromEvents() { s.rawSummary = true }
