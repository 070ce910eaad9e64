package core

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// TestClock is an organization's test clock (docs/design.md, "Renewals and test clocks"): while
// it exists the organization's billing runs at FrozenTime, which moves only when advanced.
type TestClock struct {
	ID             uuid.UUID `json:"id"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
	OrganizationID uuid.UUID `json:"organization_id"`
	FrozenTime     time.Time `json:"frozen_time"`
}

// The range of a test clock's frozen time, and how far one advance may move it: the steps an
// advance takes stay bounded (a few per subscription and month), and every date billing
// computes from it stays within what the API can write.
var (
	TestClockEarliest = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	TestClockLatest   = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
)

// TestClockMaxAdvanceYears is how many years one advance may move a clock.
const TestClockMaxAdvanceYears = 5

// CheckFrozenTime checks that t is within the range of test clocks, answering EUnprocessable
// at the body's /frozen_time otherwise.
func CheckFrozenTime(t time.Time) error {
	if t.Before(TestClockEarliest) || !t.Before(TestClockLatest) {
		return Unprocessable("/frozen_time", "frozen_time_out_of_range",
			"frozen_time must be from 2000-01-01T00:00:00Z to before 2100-01-01T00:00:00Z.")
	}
	return nil
}

// CheckAdvance checks that c may be advanced to t: not back in time (to its own time is
// allowed: it takes the steps due now), at most TestClockMaxAdvanceYears ahead, and within
// the range of test clocks.
func (c *TestClock) CheckAdvance(t time.Time) error {
	switch {
	case t.Before(c.FrozenTime):
		return Unprocessable("/frozen_time", "frozen_time_before_clock",
			"frozen_time "+t.UTC().Format(time.RFC3339Nano)+" is before the clock's time "+c.FrozenTime.UTC().Format(time.RFC3339Nano)+"; a test clock only moves forward.")
	case t.After(c.FrozenTime.AddDate(TestClockMaxAdvanceYears, 0, 0)):
		return Unprocessable("/frozen_time", "frozen_time_too_far",
			"A test clock advances at most 5 years at a time; advance it in several steps.")
	}
	return CheckFrozenTime(t)
}

// CheckSandboxCredential refuses test clocks to a production credential: they are sandbox
// tooling. The operator, development tokens and sandbox keys (and tokens of them) may use them.
func (p *Principal) CheckSandboxCredential() error {
	if !p.IsOperator() && p.Restrictions != nil && p.Restrictions.Environment != "sandbox" {
		return Errorf(EForbidden, "Test clocks are sandbox tooling: use a sandbox API key, not a %s one.", p.Restrictions.Environment)
	}
	return nil
}

// TestClockService manages test clocks. An organization principal sees only its own
// organization's clock: another organization's is ENotFound, exactly like an unknown one.
type TestClockService interface {
	// CreateTestClock puts organization org on a new clock at frozen. ENotFound for an unknown
	// organization, EForbidden for another tenant's or a production credential, EConflict
	// when the organization already has a clock, EUnprocessable for a time out of range.
	CreateTestClock(ctx context.Context, org uuid.UUID, frozen time.Time) (*TestClock, error)
	// FindTestClockByID returns the clock or ENotFound.
	FindTestClockByID(ctx context.Context, id uuid.UUID) (*TestClock, error)
	// AdvanceTestClock moves the clock to t, taking every billing step of its organization due
	// by then, in the order they fall due, each at its own time, in one transaction: it returns
	// once all have run, or changes nothing. ENotFound, EForbidden for a production
	// credential, EUnprocessable when CheckAdvance refuses t.
	AdvanceTestClock(ctx context.Context, id uuid.UUID, t time.Time) (*TestClock, error)
}
