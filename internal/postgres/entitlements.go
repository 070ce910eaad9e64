package postgres

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// entitle asks core.Entitle whether organization org may do a now, reading its standing
// (of a.Product, when a product operation asks) from the cache or the database: through the
// transaction of ctx when there is one, for a caller holding a transaction must never take a
// second connection while it holds locks. An organization that does not exist is ENotFound.
//
// Every product operation, every new credential and every new subscription asks before it
// changes anything, so a refusal writes nothing and counts nothing against spend controls.
func (d *DB) entitle(ctx context.Context, org uuid.UUID, a core.Access) error {
	s, err := d.standing(ctx, org, a.Product)
	if err != nil {
		return err
	}
	return core.Entitle(s, a)
}

// standing returns the standing of org and product: cached beside the credentials when this
// process caches them (NewCredentialCache), else read now, through the transaction of ctx
// when there is one. What a transaction reads may hold changes of its own (onboarding
// creates the organization it issues a key for), so it is not cached.
func (d *DB) standing(ctx context.Context, org uuid.UUID, product string) (core.Standing, error) {
	p := new(Pipeline)
	read := d.queueStanding(ctx, p, org, product)
	if err := p.Run(d.queries(ctx)); err != nil {
		return core.Standing{}, translate(err)
	}
	return read()
}

// queueEntitle is entitle with the standing, when the cache has none, read by a statement
// queued in p: the function returned decides once p has been sent.
func (d *DB) queueEntitle(ctx context.Context, p *Pipeline, org uuid.UUID, a core.Access) func() error {
	read := d.queueStanding(ctx, p, org, a.Product)
	return func() error {
		s, err := read()
		if err != nil {
			return err
		}
		return core.Entitle(s, a)
	}
}

// queueStanding queues in p the read of the standing of org and product when the cache (see
// standing) has none; the function returned answers once p has been sent.
func (d *DB) queueStanding(ctx context.Context, p *Pipeline, org uuid.UUID, product string) func() (core.Standing, error) {
	c := d.standings.Load()
	var lookup standingLookup
	if c != nil {
		var s core.Standing
		var ok bool
		if s, ok, lookup = c.lookupStanding(standingKey{org, product}); ok {
			return func() (core.Standing, error) { return s, nil }
		}
	}
	var row dbq.OrganizationStandingRow
	var err error
	p.Add(func(q *dbq.Queries) error {
		row, err = q.OrganizationStanding(ctx, dbq.OrganizationStandingParams{OrganizationID: org, ProductCode: product})
		return ignoreNoRows(err) // an unknown organization is answered below
	})
	return func() (core.Standing, error) {
		if err != nil {
			return core.Standing{}, notFoundAs(err, "Organization %s does not exist.", org)
		}
		s := core.Standing{
			Lifecycle: row.LifecycleStatus, Verification: row.VerificationStatus, Risk: row.RiskStatus,
			SubscriptionService: row.SubscriptionServiceStatus,
		}
		if c != nil && !inTx(ctx) {
			c.keepStanding(lookup, s)
		}
		return s, nil
	}
}

// standingKey names a cached standing: an organization and a product code ("" for the
// organization alone).
type standingKey struct {
	organization uuid.UUID
	product      string
}

type cachedStanding struct {
	core.Standing
	trustedUntil time.Time
}

// standingLookup is what lookupStanding saw: whether, and for how long, keepStanding may
// keep what is read after it.
type standingLookup struct {
	key        standingKey
	at         time.Time
	heard      bool
	generation uint64
}

// lookupStanding returns the cached standing of key, on the terms of Authenticate: only while
// the listener is heard, for at most the TTL.
func (c *CredentialCache) lookupStanding(key standingKey) (core.Standing, bool, standingLookup) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	heard := c.listening && now.Before(c.heardUntil)
	e, ok := c.standings[key]
	if ok && (!heard || !now.Before(e.trustedUntil)) {
		delete(c.standings, key)
		ok = false
	}
	lookup := standingLookup{key: key, at: now, heard: heard, generation: c.generation}
	if !ok {
		return core.Standing{}, false, lookup
	}
	return e.Standing, true, lookup
}

// keepStanding caches s, read from the database after lookup found none, unless a change was
// announced since the lookup or the listener was not heard then or now: the terms of
// Authenticate.
func (c *CredentialCache) keepStanding(lookup standingLookup, s core.Standing) {
	if !lookup.heard || c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	if c.generation == lookup.generation && c.listening && time.Now().Before(c.heardUntil) {
		if len(c.standings) >= maxCachedCredentials {
			clear(c.standings)
		}
		c.standings[lookup.key] = &cachedStanding{Standing: s, trustedUntil: lookup.at.Add(c.lifetime())}
	}
	c.mu.Unlock()
}
