package postgres

import (
	"context"
	"sync"

	"github.com/google/uuid"

	"github.com/provider/coreapi/gen/dbq"
)

// maxRememberedTypes bounds organizationTypes; past it the memory starts over.
const maxRememberedTypes = 10_000

// organizationTypes remembers organizations' types. A type never changes once the
// organization exists (no operation edits it), so nothing needs forgetting: the catalogue's
// audience, decided on every catalogue read, costs no query after an organization's first.
type organizationTypes struct {
	mu    sync.Mutex
	types map[uuid.UUID]string
}

// of returns the type of organization id, reading it with q the first time.
func (c *organizationTypes) of(ctx context.Context, q *dbq.Queries, id uuid.UUID) (string, error) {
	c.mu.Lock()
	typ, ok := c.types[id]
	c.mu.Unlock()
	if ok {
		return typ, nil
	}
	org, err := q.OrganizationGetByID(ctx, id)
	if err != nil {
		return "", translate(err)
	}
	c.mu.Lock()
	if c.types == nil || len(c.types) >= maxRememberedTypes {
		c.types = make(map[uuid.UUID]string)
	}
	c.types[id] = org.OrganizationType
	c.mu.Unlock()
	return org.OrganizationType, nil
}
