package postgres

import "crypto/sha256"

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
