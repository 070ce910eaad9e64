package postgres

import (
	"crypto/sha256"
	"sync/atomic"
	"unsafe"

	"github.com/jackc/pgx/v5/pgxpool"
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

// BufferedCopy is the batch writers' COPY, for the external tests.
type BufferedCopy = bufferedCopy

// NewBufferedCopy returns a BufferedCopy over p.
func NewBufferedCopy(p *pgxpool.Pool) *BufferedCopy { return &bufferedCopy{Pool: p} }

// Buffer tells where c's kept buffer lives, to show it reused.
func (c *bufferedCopy) Buffer() *byte { return unsafe.SliceData(c.buf) }

// CountSecretChecks makes s count its secret comparisons in n.
func (s *APIKeyService) CountSecretChecks(n *atomic.Int64) { s.onSecretCheck = func() { n.Add(1) } }
