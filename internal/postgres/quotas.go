package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// organizationWithinQuota locks organization orgID's row and refuses (core.EQuotaExceeded)
// when it holds as many of k as its quota allows; an unknown organization is EUnprocessable,
// as organizationExists says. The lock lasts until the transaction ends, so the count stays
// true until the caller's insert is committed: a concurrent create of the same organization
// waits, then counts the row this one added.
func (d *DB) organizationWithinQuota(ctx context.Context, q *dbq.Queries, orgID uuid.UUID, k core.Quota) error {
	if _, err := q.QuotaLockOrganization(ctx, orgID); errors.Is(err, pgx.ErrNoRows) {
		return core.Errorf(core.EUnprocessable, "Organization %s does not exist.", orgID)
	} else if err != nil {
		return err
	}
	var count func(context.Context, uuid.UUID) (int64, error)
	switch k {
	case core.QuotaAPIKeys:
		count = q.QuotaCountAPIKeys
	case core.QuotaWebhookEndpoints:
		count = q.QuotaCountWebhookEndpoints
	case core.QuotaConnectedBusinesses:
		count = q.QuotaCountConnectedBusinesses
	case core.QuotaOpenSupportCases:
		count = q.QuotaCountOpenSupportCases
	default:
		return fmt.Errorf("postgres: quota %d is not one of an organization", k)
	}
	held, err := count(ctx, orgID)
	if err != nil {
		return err
	}
	return d.Quotas.Check(k, "Organization "+orgID.String(), held)
}

// businessWithinQuota refuses (core.EQuotaExceeded) another credential for connected business
// id of organization orgID when it holds as many as its quota allows. The caller holds the
// business's row locked (lockBusiness).
func (d *DB) businessWithinQuota(ctx context.Context, q *dbq.Queries, orgID, id uuid.UUID) error {
	held, err := q.QuotaCountCredentials(ctx, dbq.QuotaCountCredentialsParams{OrganizationID: orgID, ConnectedBusinessID: &id})
	if err != nil {
		return err
	}
	return d.Quotas.Check(core.QuotaCredentialsPerBusiness, "Connected business "+id.String(), held)
}
