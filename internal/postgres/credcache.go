package postgres

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/internal/core"
)

// credentialsChannel is the PostgreSQL notification channel on which every change that can
// end or narrow a credential is announced (migration 00100: triggers on api_keys,
// oauth_tokens and connected_businesses).
const credentialsChannel = "credentials_changed"

// DefaultCredentialCacheTTL is how long an authenticated credential is trusted without
// asking the database again when no change has been announced.
const DefaultCredentialCacheTTL = 5 * time.Second

// maxCachedCredentials bounds the cache; past it the cache starts over. Only credentials
// that authenticated are cached, so the bound is only reached by that many keys in use.
const maxCachedCredentials = 10_000

// CredentialCache is a core.CredentialService that remembers authenticated credentials for
// a short while, saving the lookup round trip on every request.
//
// Staleness is bounded: every change that can end or narrow a credential (revocation,
// expiry, rotation, scopes, restrictions, deletion, a connected business's state, a token's
// expiry) fires a PostgreSQL notification that empties the cache of every process at once,
// whichever process or tool made the change. Expiry times are checked on every use. Nothing
// is cached while the notification listener is not connected, and an entry is trusted at
// most ttl in any case. Failed authentications are never cached.
type CredentialCache struct {
	keys   *APIKeyService
	db     *DB
	ttl    time.Duration
	logger *slog.Logger

	mu         sync.Mutex
	entries    map[[sha256.Size]byte]*cachedCredential
	generation uint64 // incremented by every invalidation
	listening  bool   // entries may be stored only while notifications can reach us
}

type cachedCredential struct {
	credential
	trustedUntil time.Time // when it is looked up again: see lifetime
}

var _ core.CredentialService = (*CredentialCache)(nil)

// NewCredentialCache returns the credential service over d with a cache trusting an entry
// at most ttl. It caches nothing until Run is listening for changes, nor ever when ttl is 0.
func NewCredentialCache(d *DB, ttl time.Duration, logger *slog.Logger) *CredentialCache {
	return &CredentialCache{keys: NewAPIKeyService(d), db: d, ttl: ttl, logger: logger, entries: map[[sha256.Size]byte]*cachedCredential{}}
}

// Authenticate implements core.CredentialService.
func (c *CredentialCache) Authenticate(ctx context.Context, bearer string) (*core.Principal, error) {
	sum := sha256.Sum256([]byte(bearer))
	now := c.keys.now()
	c.mu.Lock()
	e, ok := c.entries[sum]
	if ok && (!now.Before(e.trustedUntil) || (e.expiresAt != nil && !e.expiresAt.After(now))) {
		delete(c.entries, sum) // stale, or expired: the database gives the exact answer
		ok = false
	}
	var touch *uuid.UUID
	if ok && touchDue(e.keyID, e.lastUsedAt, now) {
		last := now
		e.lastUsedAt, touch = &last, &e.keyID
	}
	generation, listening := c.generation, c.listening && c.ttl > 0
	c.mu.Unlock()
	if ok {
		if touch != nil {
			c.keys.touch(ctx, *touch, nil)
		}
		return e.principal, nil
	}

	cred, err := c.keys.authenticate(ctx, bearer)
	if err != nil {
		return nil, err
	}
	c.keys.touch(ctx, cred.keyID, cred.lastUsedAt)
	if listening {
		c.mu.Lock()
		// A change announced while the database was read may not be in what it returned.
		if c.generation == generation && c.listening {
			if len(c.entries) >= maxCachedCredentials {
				clear(c.entries)
			}
			cached := &cachedCredential{credential: *cred, trustedUntil: now.Add(c.lifetime())}
			last := now
			cached.lastUsedAt = &last // touched just now, or within the interval
			c.entries[sum] = cached
		}
		c.mu.Unlock()
	}
	return cred.principal, nil
}

// lifetime draws how long a new entry is trusted: between half the TTL and the TTL. Entries
// stored together (every key a client uses, after a start or an idle spell) would otherwise
// all be looked up again in the same moment, every TTL, and the requests of that moment
// queued behind the lookups: the largest bursts of slow requests at half load
// (docs/performance.md).
func (c *CredentialCache) lifetime() time.Duration {
	return c.ttl - rand.N(c.ttl/2+1)
}

// IssueToken implements core.CredentialService; it is never cached.
func (c *CredentialCache) IssueToken(ctx context.Context, in core.TokenRequest) (*core.AccessToken, error) {
	return c.keys.IssueToken(ctx, in)
}

// invalidate forgets every credential; listening says whether entries may be stored again.
func (c *CredentialCache) invalidate(listening bool) {
	c.mu.Lock()
	clear(c.entries)
	c.generation++
	c.listening = listening
	c.mu.Unlock()
}

// Run listens for credential changes on a connection of its own until ctx ends,
// reconnecting after failures (the cache stays off meanwhile).
func (c *CredentialCache) Run(ctx context.Context) {
	defer c.invalidate(false)
	for ctx.Err() == nil {
		err := c.listen(ctx)
		c.invalidate(false)
		if ctx.Err() != nil {
			return
		}
		c.logger.Warn("credential cache: listening for changes failed; caching is off until it reconnects", "error", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (c *CredentialCache) listen(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, c.db.Pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+credentialsChannel); err != nil {
		return err
	}
	c.invalidate(true) // anything changed before LISTEN took effect is forgotten too
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		c.invalidate(true)
	}
}
