package postgres

import (
	"context"

	"github.com/google/uuid"

	"github.com/provider/coreapi/gen/dbq"
)

// Products whose operations count toward usage.
const (
	productEinvoice = "einvoice"
	productAddress  = "address"
)

// recordUsage records one usage unit of product for organization orgID within the caller's
// transaction q, so an operation and its count commit or roll back together. Spend controls
// hook in here: this is the one place every accepted product operation passes.
func recordUsage(ctx context.Context, q *dbq.Queries, orgID uuid.UUID, product string) error {
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	return q.UsageEventInsert(ctx, dbq.UsageEventInsertParams{ID: id, OrganizationID: orgID, Product: product})
}
