package postgres

import (
	"context"

	"github.com/google/uuid"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// ProvisionSubscription completes the provisioning of a subscription, in one transaction
// (internal/jobs runs it for the job its creation, or its resumption before it was ever
// provisioned, queued): the sandbox needs no external resources, so its service starts,
// degraded while the product has an open incident (the product's incidents are held still
// first, as for every service start). A subscription suspended or terminated while it waited
// keeps that state, and one already provisioned is left alone, so running it twice (a job
// retried after its process died, or a second job queued by a resume) provisions once. The
// service starting publishes subscription.activated.
func (d *DB) ProvisionSubscription(ctx context.Context, organizationID, subscriptionID uuid.UUID) error {
	err := d.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		productID, err := q.ProductLockForSubscription(ctx, dbq.ProductLockForSubscriptionParams{ID: subscriptionID, OrganizationID: organizationID})
		if err != nil {
			return err
		}
		row, err := q.SubscriptionGetByIDForUpdate(ctx, dbq.SubscriptionGetByIDForUpdateParams{ID: subscriptionID, OrganizationID: organizationID})
		if err != nil {
			return err
		}
		before, err := subscriptionFromRow(row)
		if err != nil {
			return err
		}
		after := *before
		if after.ProductIncidentOpen, err = q.ProductIncidentOpenExists(ctx, productID); err != nil {
			return err
		}
		at := now()
		if !after.CompleteProvisioning(at) {
			return nil
		}
		after.UpdatedAt = at
		sub, err := updateSubscription(ctx, q, &after)
		if err != nil {
			return err
		}
		if err := audit(ctx, q, core.AuditEntry{
			OrganizationID: &sub.OrganizationID,
			Action:         "subscription.provisioned",
			ResourceType:   "subscription",
			ResourceID:     sub.ID.String(),
			Before:         before,
			After:          sub,
		}); err != nil {
			return err
		}
		return d.publish(ctx, q, sub.OrganizationID, core.EventSubscriptionActivated, sub)
	})
	if err == nil {
		d.credentialsChanged(ctx) // the product's operations are open once it is active
	}
	return err
}
