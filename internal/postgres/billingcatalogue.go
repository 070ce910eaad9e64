package postgres

import (
	"context"
	"sync"

	"github.com/google/uuid"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// batchCatalogue keeps the plans (with their prices) and products that the billing steps of
// one batch of the renewal run read, so each is read once per batch rather than once per
// step: three statements of every renewal. A batch lasts a few seconds at most; a catalogue
// change committed meanwhile reaches the steps of the next batch, as it would have reached
// those steps had they run a moment later. The values are shared by the batch's workers and
// never changed.
type batchCatalogue struct {
	mu       sync.Mutex
	plans    map[uuid.UUID]*core.Plan
	products map[uuid.UUID]dbq.Product
}

type batchCatalogueKey struct{}

// withBatchCatalogue returns a context whose billing steps share one batchCatalogue.
func withBatchCatalogue(ctx context.Context) context.Context {
	return context.WithValue(ctx, batchCatalogueKey{}, &batchCatalogue{plans: map[uuid.UUID]*core.Plan{}, products: map[uuid.UUID]dbq.Product{}})
}

// remembered answers key's value in m, one of c's maps, reading it with read (outside the
// lock; two workers may both read it) the first time.
func remembered[V any](c *batchCatalogue, m map[uuid.UUID]V, key uuid.UUID, read func() (V, error)) (V, error) {
	c.mu.Lock()
	v, ok := m[key]
	c.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := read()
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	m[key] = v
	c.mu.Unlock()
	return v, nil
}

func batchCatalogueFrom(ctx context.Context) *batchCatalogue {
	c, _ := ctx.Value(batchCatalogueKey{}).(*batchCatalogue)
	return c
}

// billingPlan is planWithPrices, read once per batch of the renewal run.
func billingPlan(ctx context.Context, q *dbq.Queries, id uuid.UUID) (*core.Plan, error) {
	c := batchCatalogueFrom(ctx)
	if c == nil {
		return planWithPrices(ctx, q, id)
	}
	return remembered(c, c.plans, id, func() (*core.Plan, error) { return planWithPrices(ctx, q, id) })
}

// billingProduct is product id, read once per batch of the renewal run.
func billingProduct(ctx context.Context, q *dbq.Queries, id uuid.UUID) (dbq.Product, error) {
	c := batchCatalogueFrom(ctx)
	if c == nil {
		return q.ProductGetByID(ctx, id)
	}
	return remembered(c, c.products, id, func() (dbq.Product, error) { return q.ProductGetByID(ctx, id) })
}
