package core

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// ESpendLimitReached refuses a product operation beyond an enabled hard operation limit.
const ESpendLimitReached = "spend_limit_reached"

// SpendControl limits the monthly operations of one product of an organization.
// A disabled control enforces nothing and reports nothing as reached.
type SpendControl struct {
	ID                      uuid.UUID `json:"id"`
	OrganizationID          uuid.UUID `json:"organization_id"`
	Product                 string    `json:"product"`
	WarningThresholdPercent int       `json:"warning_threshold_percent"`
	MonthlyBudgetMinorUnits *int64    `json:"monthly_budget_minor_units"`
	HardOperationLimit      *int64    `json:"hard_operation_limit"`
	NotificationRecipients  []string  `json:"notification_recipients"`
	Enabled                 bool      `json:"enabled"`
}

// WarningAt is the operation count at which the warning is reached: the threshold percent of
// the hard limit, rounded up (so a warning never comes before the threshold).
func (c *SpendControl) WarningAt() (int64, bool) {
	if c.HardOperationLimit == nil {
		return 0, false
	}
	return mulDiv(*c.HardOperationLimit, int64(c.WarningThresholdPercent), 100, 99), true // rounded up
}

// Status reports the control against operations counted this month.
func (c *SpendControl) Status(operations int64) SpendControlStatus {
	s := SpendControlStatus{SpendControl: *c, CurrentOperations: operations}
	if c.Enabled && c.HardOperationLimit != nil {
		at, _ := c.WarningAt()
		s.WarningReached = operations >= at
		s.HardLimitReached = operations >= *c.HardOperationLimit
	}
	return s
}

// SpendControlStatus is a control with the usage of the current UTC month.
type SpendControlStatus struct {
	SpendControl
	CurrentOperations int64 `json:"current_operations"`
	WarningReached    bool  `json:"warning_reached"`
	HardLimitReached  bool  `json:"hard_limit_reached"`
}

// SpendControlPut creates or replaces a control.
type SpendControlPut struct {
	OrganizationID          uuid.UUID
	Product                 string
	WarningThresholdPercent int
	MonthlyBudgetMinorUnits *int64
	HardOperationLimit      *int64
	NotificationRecipients  []string
	Enabled                 bool
}

// UsageQuery selects a usage report.
type UsageQuery struct {
	OrganizationID *uuid.UUID // nil: the caller's (required for the operator)
	Product        *string
	From, To       *time.Time // dates (UTC); defaults: the first of this month, today
	Granularity    string     // "day" or "month"
}

// UsageBucket counts the operations of one product in one period.
type UsageBucket struct {
	Product     string
	PeriodStart time.Time
	Operations  int64
}

// UsageReport is what UsageService.Report returns.
type UsageReport struct {
	OrganizationID uuid.UUID
	Granularity    string
	From, To       time.Time
	Items          []UsageBucket
	Totals         map[string]int64 // per product
}

// SpendService manages spend controls and reports usage. Counting happens in the product
// operations themselves (one unit per accepted operation, in its transaction).
type SpendService interface {
	PutSpendControl(ctx context.Context, in SpendControlPut) (*SpendControl, error)
	ListSpendControls(ctx context.Context, organizationID uuid.UUID) ([]SpendControlStatus, error)
	Usage(ctx context.Context, q UsageQuery) (*UsageReport, error)
}
