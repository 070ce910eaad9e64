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
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/provider/coreapi/internal/core"
)

// credentialsChannel is the PostgreSQL notification channel on which every change that can
// end or narrow a credential is announced (migration 00100: triggers on api_keys,
// oauth_tokens and connected_businesses).
const credentialsChannel = "credentials_changed"

// DefaultCredentialCacheTTL is how long an authenticated credential is trusted without
// asking the database again when no change has been announced.
const DefaultCredentialCacheTTL = 5 * time.Second

// listenerLease is how long a round trip on the listener's connection vouches for the cache:
// entries are used only while the listener has shown its connection alive within the lease,
// so a connection that dies silently (no error, just no more notifications) leaves stale
// entries trusted for at most this long. listenerHeartbeat is how often it is renewed.
const (
	listenerLease     = time.Second
	listenerHeartbeat = 250 * time.Millisecond
)

// maxCachedCredentials bounds the cache; past it the cache starts over. Only credentials
// that authenticated are cached, so the bound is only reached by that many keys in use.
const maxCachedCredentials = 10_000

// CredentialCache is a core.CredentialService that remembers authenticated credentials for
// a short while, saving the lookup round trip on every request.
//
// Staleness is bounded. The process that withdraws a credential (revoke, rotate, a connected
// business suspended or closed) forgets every cached credential once its transaction has
// committed and before it answers (DB.credentialsChanged), so its very next request is
// looked up afresh. Every change that can end or narrow a credential (revocation, expiry,
// rotation, scopes, restrictions, deletion, a connected business's state, a token's expiry)
// also fires a PostgreSQL notification that empties the cache of every other process,
// whichever process or tool made the change. Expiry times are checked on every use. Nothing
// is cached, and nothing cached is used, unless the notification listener has shown its
// connection alive within listenerLease; an entry is trusted at most ttl in any case.
// Failed authentications are never cached.
//
// The cache also holds the standings entitlement decisions read (core.Standing: an
// organization's statuses and its subscription to a product), under the same rules: the same
// lifetime, emptied by the same notifications (migration 00160 announces status changes) and
// by the same DB.credentialsChanged, trusted only while the listener is heard. A decision is
// therefore never cached longer than a credential (DB.entitle).
type CredentialCache struct {
	keys   *APIKeyService
	db     *DB
	ttl    time.Duration
	logger *slog.Logger

	mu         sync.Mutex
	entries    map[[sha256.Size]byte]*cachedCredential
	standings  map[standingKey]*cachedStanding
	generation uint64 // incremented by every invalidation
	listening  bool   // entries may be stored only while notifications can reach us
	// heardUntil is when the listener's last round trip stops vouching for the cache:
	// past it, entries are neither used nor stored (see listenerLease).
	heardUntil time.Time
}

type cachedCredential struct {
	credential
	trustedUntil time.Time // when it is looked up again: see lifetime
}

var _ core.CredentialService = (*CredentialCache)(nil)

// NewCredentialCache returns the credential service over d with a cache trusting an entry
// at most ttl. It caches nothing until Run is listening for changes, nor ever when ttl is 0.
// Changes this process makes through d empty it at once (DB.credentialsChanged).
func NewCredentialCache(d *DB, ttl time.Duration, logger *slog.Logger) *CredentialCache {
	c := &CredentialCache{keys: NewAPIKeyService(d), db: d, ttl: ttl, logger: logger,
		entries: map[[sha256.Size]byte]*cachedCredential{}, standings: map[standingKey]*cachedStanding{}}
	d.onCredentialsChanged(c.forget)
	d.standings.Store(c)
	return c
}

// Authenticate implements core.CredentialService.
func (c *CredentialCache) Authenticate(ctx context.Context, bearer string) (*core.Principal, error) {
	sum := sha256.Sum256([]byte(bearer))
	now := c.keys.now()
	c.mu.Lock()
	heard := c.listening && time.Now().Before(c.heardUntil)
	e, ok := c.entries[sum]
	if ok && (!heard || !now.Before(e.trustedUntil) || (e.expiresAt != nil && !e.expiresAt.After(now))) {
		delete(c.entries, sum) // stale, or expired: the database gives the exact answer
		ok = false
	}
	var touch *uuid.UUID
	if ok && touchDue(e.keyID, e.lastUsedAt, now) {
		last := now
		e.lastUsedAt, touch = &last, &e.keyID
	}
	generation, listening := c.generation, heard && c.ttl > 0
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
		if c.generation == generation && c.listening && time.Now().Before(c.heardUntil) {
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
	c.dropLocked()
	c.listening = listening
	if !listening {
		c.heardUntil = time.Time{}
	}
	c.mu.Unlock()
}

// Listening reports whether c hears credential changes (and so may cache).
func (c *CredentialCache) Listening() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.listening && time.Now().Before(c.heardUntil)
}

// forget forgets every credential and standing, listening or not: this process changed one.
func (c *CredentialCache) forget() {
	c.mu.Lock()
	c.dropLocked()
	c.mu.Unlock()
}

// dropLocked forgets every credential and standing; c.mu is held.
func (c *CredentialCache) dropLocked() {
	clear(c.entries)
	clear(c.standings)
	c.generation++
}

// heard extends the time the cache may be used to until: the listener's connection was
// alive, with every notification sent before then received, when a round trip began.
func (c *CredentialCache) heard(until time.Time) {
	c.mu.Lock()
	if c.listening && until.After(c.heardUntil) {
		if time.Now().After(c.heardUntil) {
			// The lease had lapsed: whatever happened meanwhile, start from nothing.
			c.dropLocked()
		}
		c.heardUntil = until
	}
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

// listen holds the LISTEN connection. A notification empties the cache as soon as it is
// read, whether the connection was waiting or answering a heartbeat. Every
// listenerHeartbeat a round trip shows the connection alive and renews the lease: a
// connection that stops answering stops the cache within listenerLease, and an error ends
// listen (Run then keeps the cache off until it has reconnected).
func (c *CredentialCache) listen(ctx context.Context) error {
	cfg := c.db.SessionPool().Config().ConnConfig.Copy()
	cfg.OnNotification = func(_ *pgconn.PgConn, n *pgconn.Notification) {
		if n.Channel == credentialsChannel {
			c.invalidate(true)
		}
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	sent := time.Now()
	if _, err := conn.Exec(ctx, "LISTEN "+credentialsChannel); err != nil {
		return err
	}
	c.invalidate(true) // anything changed before LISTEN took effect is forgotten too
	c.heard(sent.Add(listenerLease))
	for {
		wait, cancel := context.WithDeadline(ctx, sent.Add(listenerHeartbeat))
		_, err := conn.WaitForNotification(wait)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil && !pgconn.Timeout(err) {
			return err
		}
		if time.Since(sent) < listenerHeartbeat {
			continue // a notification, handled by OnNotification
		}
		sent = time.Now()
		ping, cancel := context.WithTimeout(ctx, listenerLease)
		err = conn.Ping(ping)
		cancel()
		if err != nil {
			return err
		}
		c.heard(sent.Add(listenerLease))
	}
}

// credentialForgetters are the credential caches over one DB, emptied when this process
// changes a credential.
type credentialForgetters struct {
	mu  sync.Mutex
	fns []func()
}

// onCredentialsChanged registers forget to run whenever this process changes a credential.
func (d *DB) onCredentialsChanged(forget func()) {
	d.forgetters.mu.Lock()
	d.forgetters.fns = append(d.forgetters.fns, forget)
	d.forgetters.mu.Unlock()
}

// credentialsChanged empties this process's credential caches once the change made in ctx
// is committed: now, after a WithTx that made it has returned, or when the transaction ctx
// carries (an idempotent request's) commits. Call it after every change that withdraws or
// narrows access, before answering: the next request of this process must not be let in by
// what the cache remembers. That includes a change of an organization's statuses or of a
// subscription's service status (entitlement standings are cached here too). Other processes
// hear of it by notification (migrations 00100 and 00160).
func (d *DB) credentialsChanged(ctx context.Context) {
	afterCommit(ctx, func() {
		d.forgetters.mu.Lock()
		fns := d.forgetters.fns
		d.forgetters.mu.Unlock()
		for _, forget := range fns {
			forget()
		}
	})
}
