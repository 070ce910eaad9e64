package postgres

import (
	"context"

	"github.com/google/uuid"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// ProvisionSubscription completes the provisioning of a new subscription, in one transaction
// (internal/jobs runs it for the job its creation queued): the sandbox needs no external
// resources, so its service becomes active. A subscription suspended or terminated while it
// waited keeps that state, and one already provisioned is left alone, so running it twice
// (a job retried after its process died) provisions once. The service becoming active
// publishes subscription.activated.
func (d *DB) ProvisionSubscription(ctx context.Context, organizationID, subscriptionID uuid.UUID) error {
	return d.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		row, err := q.SubscriptionGetByIDForUpdate(ctx, dbq.SubscriptionGetByIDForUpdateParams{ID: subscriptionID, OrganizationID: organizationID})
		if err != nil {
			return err
		}
		before, err := subscriptionFromRow(row)
		if err != nil {
			return err
		}
		if before.ServiceStatus != core.ServiceProvisioning {
			return nil
		}
		after := *before
		after.ServiceStatus = core.ServiceActive
		after.UpdatedAt = now()
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
}
