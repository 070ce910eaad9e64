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
	committed := !inTx(ctx)
	load := func() (core.Standing, error) { return loadStanding(ctx, d.queries(ctx), org, product) }
	c := d.standings.Load()
	if c == nil {
		return load()
	}
	return c.standing(standingKey{org, product}, load, committed)
}

func loadStanding(ctx context.Context, q *dbq.Queries, org uuid.UUID, product string) (core.Standing, error) {
	row, err := q.OrganizationStanding(ctx, dbq.OrganizationStandingParams{OrganizationID: org, ProductCode: product})
	if err != nil {
		return core.Standing{}, notFoundAs(err, "Organization %s does not exist.", org)
	}
	return core.Standing{
		Lifecycle: row.LifecycleStatus, Verification: row.VerificationStatus, Risk: row.RiskStatus,
		SubscriptionService: row.SubscriptionServiceStatus,
	}, nil
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

// standing returns the cached standing of key, or load's answer, which it caches when store
// is set, on the terms of Authenticate: only while the listener is heard, for at most the
// TTL, and not when a change was announced while load read the database.
func (c *CredentialCache) standing(key standingKey, load func() (core.Standing, error), store bool) (core.Standing, error) {
	now := time.Now()
	c.mu.Lock()
	heard := c.listening && now.Before(c.heardUntil)
	e, ok := c.standings[key]
	if ok && (!heard || !now.Before(e.trustedUntil)) {
		delete(c.standings, key)
		ok = false
	}
	generation := c.generation
	c.mu.Unlock()
	if ok {
		return e.Standing, nil
	}
	s, err := load()
	if err != nil || !store || !heard || c.ttl <= 0 {
		return s, err
	}
	c.mu.Lock()
	if c.generation == generation && c.listening && time.Now().Before(c.heardUntil) {
		if len(c.standings) >= maxCachedCredentials {
			clear(c.standings)
		}
		c.standings[key] = &cachedStanding{Standing: s, trustedUntil: now.Add(c.lifetime())}
	}
	c.mu.Unlock()
	return s, nil
}
