package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// TestClockService implements core.TestClockService.
type TestClockService struct {
	db *DB
}

var _ core.TestClockService = (*TestClockService)(nil)

// NewTestClockService returns the test clock service over d.
func NewTestClockService(d *DB) *TestClockService { return &TestClockService{db: d} }

// CreateTestClock implements core.TestClockService.
func (s *TestClockService) CreateTestClock(ctx context.Context, org uuid.UUID, frozen time.Time) (*core.TestClock, error) {
	p, err := sandboxPrincipal(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.ActsFor(org, "/organization_id"); err != nil {
		return nil, err
	}
	if err := core.CheckFrozenTime(frozen); err != nil {
		return nil, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	var clock *core.TestClock
	err = s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		if _, err := q.OrganizationGetByID(ctx, org); err != nil {
			return notFoundAs(err, "Organization %s does not exist.", org)
		}
		row, err := q.TestClockInsert(ctx, dbq.TestClockInsertParams{ID: id, CreatedAt: now(), OrganizationID: org, FrozenTime: frozen.UTC()})
		if isUniqueViolation(err, "test_clocks_organization") {
			return core.Errorf(core.EConflict, "Organization %s already has a test clock; advance it.", org)
		}
		if err != nil {
			return err
		}
		clock = testClockFromRow(row)
		return audit(ctx, q, core.AuditEntry{
			OrganizationID: &org,
			Action:         "test_clock.created",
			ResourceType:   "test_clock",
			ResourceID:     id.String(),
			After:          clock,
		})
	})
	if err != nil {
		return nil, err
	}
	return clock, nil
}

// FindTestClockByID implements core.TestClockService.
func (s *TestClockService) FindTestClockByID(ctx context.Context, id uuid.UUID) (*core.TestClock, error) {
	q := s.db.queries(ctx)
	row, err := owned(ctx,
		func(org uuid.UUID) (dbq.TestClock, error) {
			return q.TestClockGetByID(ctx, dbq.TestClockGetByIDParams{OrganizationID: org, ID: id})
		},
		func() (dbq.TestClock, error) { return q.TestClockGetByIDAnyOrganization(ctx, id) },
		"Test clock", id)
	if err != nil {
		return nil, err
	}
	return testClockFromRow(row), nil
}

// AdvanceTestClock implements core.TestClockService. The clock's row stays locked for the
// whole advance, so advances of one clock run one after another, and so do the organization's
// subscriptions, locked before the first step; each step moves the clock to the step's time
// first, so billingNow answers it and the step bills at the time it fell due.
func (s *TestClockService) AdvanceTestClock(ctx context.Context, id uuid.UUID, t time.Time) (*core.TestClock, error) {
	if _, err := sandboxPrincipal(ctx); err != nil {
		return nil, err
	}
	t = t.UTC().Truncate(time.Microsecond)
	var clock *core.TestClock
	err := s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		row, err := owned(ctx,
			func(org uuid.UUID) (dbq.TestClock, error) {
				return q.TestClockGetByIDForUpdate(ctx, dbq.TestClockGetByIDForUpdateParams{OrganizationID: org, ID: id})
			},
			func() (dbq.TestClock, error) { return q.TestClockGetByIDForUpdateAnyOrganization(ctx, id) },
			"Test clock", id)
		if err != nil {
			return err
		}
		before := testClockFromRow(row)
		if err := before.CheckAdvance(t); err != nil {
			return err
		}
		// All of them now, before a step locks the credit balance (SubscriptionLockByOrganization),
		// their products first (a step may start a service: lockForBillingStep).
		if err := q.ProductLockForOrganization(ctx, before.OrganizationID); err != nil {
			return err
		}
		if err := q.SubscriptionLockByOrganization(ctx, before.OrganizationID); err != nil {
			return err
		}
		steps, err := s.takeStepsUntil(ctx, q, before, t)
		if err != nil {
			return err
		}
		if clock, err = setFrozenTime(ctx, q, before, t); err != nil {
			return err
		}
		return audit(ctx, q, core.AuditEntry{
			OrganizationID: &clock.OrganizationID,
			Action:         "test_clock.advanced",
			ResourceType:   "test_clock",
			ResourceID:     id.String(),
			Before:         before,
			After:          map[string]any{"resource": clock, "billing_steps": steps},
		})
	})
	if err != nil {
		return nil, err
	}
	return clock, nil
}

// takeStepsUntil takes the billing steps of the clock's organization due by t, earliest first
// (then by subscription id), moving the clock to each one's time before taking it, and
// returns how many it took.
func (s *TestClockService) takeStepsUntil(ctx context.Context, q *dbq.Queries, clock *core.TestClock, t time.Time) (int, error) {
	steps := 0
	for {
		step, err := q.BillingStepNext(ctx, dbq.BillingStepNextParams{OrganizationID: clock.OrganizationID, Until: t})
		if errors.Is(err, pgx.ErrNoRows) {
			return steps, nil
		}
		if err != nil {
			return steps, err
		}
		if step.DueAt.After(clock.FrozenTime) {
			if clock, err = setFrozenTime(ctx, q, clock, step.DueAt); err != nil {
				return steps, err
			}
		}
		took, err := s.db.billingStep(ctx, clock.OrganizationID, step.ID, waitForLock)
		if err != nil {
			return steps, err
		}
		if !took { // the view and the domain disagree: stop rather than loop
			return steps, fmt.Errorf("test clock %s: the billing step of subscription %s due at %s was not taken", clock.ID, step.ID, step.DueAt)
		}
		steps++
	}
}

// setFrozenTime moves clock to t.
func setFrozenTime(ctx context.Context, q *dbq.Queries, clock *core.TestClock, t time.Time) (*core.TestClock, error) {
	row, err := q.TestClockSetFrozenTime(ctx, dbq.TestClockSetFrozenTimeParams{OrganizationID: clock.OrganizationID, ID: clock.ID, FrozenTime: t, UpdatedAt: now()})
	if err != nil {
		return nil, err
	}
	return testClockFromRow(row), nil
}

// sandboxPrincipal returns the principal of ctx, refusing a production credential
// (core.Principal.CheckSandboxCredential).
func sandboxPrincipal(ctx context.Context) (*core.Principal, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	return p, p.CheckSandboxCredential()
}

func testClockFromRow(r dbq.TestClock) *core.TestClock {
	return &core.TestClock{ID: r.ID, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, OrganizationID: r.OrganizationID, FrozenTime: r.FrozenTime.UTC()}
}
