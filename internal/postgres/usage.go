package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// Products whose operations count toward usage.
const (
	productEinvoice = "einvoice"
	productAddress  = "address"
)

// checkSpend refuses an operation up front when the month's count already stands at an
// enabled hard limit, so a refused request does no work. recordUsage decides exactly.
func checkSpend(ctx context.Context, q *dbq.Queries, orgID uuid.UUID, product string) error {
	p := new(Pipeline)
	admitted := queueCheckSpend(ctx, p, orgID, product)
	if err := p.Run(q); err != nil {
		return err
	}
	return admitted(q)
}

// queueCheckSpend is checkSpend with its read of the spend control queued in p: the function
// returned decides, once p has been sent, reading the month's count through q when the
// control has an enabled hard limit.
func queueCheckSpend(ctx context.Context, p *Pipeline, orgID uuid.UUID, product string) func(q *dbq.Queries) error {
	var ctrl dbq.SpendControl
	var ctrlErr error
	p.Add(func(q *dbq.Queries) error {
		ctrl, ctrlErr = q.SpendControlGet(ctx, dbq.SpendControlGetParams{OrganizationID: orgID, Product: product})
		return ignoreNoRows(ctrlErr)
	})
	return func(q *dbq.Queries) error {
		if ctrlErr != nil || !ctrl.Enabled || ctrl.HardOperationLimit == nil {
			return nil // no control (an error was returned by the pipeline)
		}
		counter, err := q.UsageCounterGet(ctx, dbq.UsageCounterGetParams{OrganizationID: orgID, Product: product})
		if errors.Is(err, pgx.ErrNoRows) {
			counter.Operations = 0
		} else if err != nil {
			return err
		}
		if counter.Operations >= *ctrl.HardOperationLimit {
			return spendLimitReached(product, *ctrl.HardOperationLimit)
		}
		return nil
	}
}

// recordUsage records one usage unit of product for organization orgID within the caller's
// transaction q, so an operation and its count commit or roll back together. It is the one
// place every accepted product operation passes, so the spend control is decided here: the
// month's counter row is incremented (its lock orders concurrent operations), and an
// operation that would pass an enabled hard limit fails, rolling its whole transaction back.
// The warning and the hard-limit crossings are recorded once per month.
func (d *DB) recordUsage(ctx context.Context, q *dbq.Queries, orgID uuid.UUID, product string) error {
	p := new(Pipeline)
	recorded, err := d.queueRecordUsage(ctx, p, orgID, product)
	if err != nil {
		return err
	}
	if err := p.Run(q); err != nil {
		return err
	}
	return recorded(q)
}

// queueRecordUsage is recordUsage with its two statements (the count, then the read of the
// spend control) queued in p: the function returned decides, once p has been sent, through
// q (the transaction's).
func (d *DB) queueRecordUsage(ctx context.Context, p *Pipeline, orgID uuid.UUID, product string) (func(q *dbq.Queries) error, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	var counter dbq.UsageCounter
	var row dbq.SpendControl
	var rowErr error
	p.Add(func(q *dbq.Queries) (err error) {
		counter, err = q.UsageRecord(ctx, dbq.UsageRecordParams{ID: id, OrganizationID: orgID, Product: product})
		return err
	})
	p.Add(func(q *dbq.Queries) error {
		row, rowErr = q.SpendControlGet(ctx, dbq.SpendControlGetParams{OrganizationID: orgID, Product: product})
		return ignoreNoRows(rowErr)
	})
	return func(q *dbq.Queries) error {
		// An organization's first successful operation is the first of a month, so only that
		// one pays for the onboarding milestone (a refusal below rolls it back with the
		// operation).
		if counter.Operations == 1 {
			if err := reachOnboarding(ctx, q, orgID, core.OnboardingFirstSuccess); err != nil {
				return err
			}
		}
		if rowErr != nil {
			return nil // no control
		}
		ctrl := spendControlFromRow(row)
		if !ctrl.Enabled || ctrl.HardOperationLimit == nil {
			return nil
		}
		if counter.Operations > *ctrl.HardOperationLimit {
			return spendLimitReached(product, *ctrl.HardOperationLimit)
		}
		return d.markReached(ctx, q, ctrl, counter)
	}, nil
}

// markReached records the warning and the hard limit of ctrl (enabled, with a hard limit)
// that the month's counter stands at, each the first time this month: when an operation
// reaches them, and when the control is changed to a limit the month's operations reach
// already (no operation would: they are refused).
func (d *DB) markReached(ctx context.Context, q *dbq.Queries, ctrl *core.SpendControl, counter dbq.UsageCounter) error {
	month := dbq.UsageCounterMarkWarningParams{OrganizationID: counter.OrganizationID, Product: counter.Product, Month: counter.Month}
	if at, _ := ctrl.WarningAt(); counter.Operations >= at {
		if err := d.markCrossing(ctx, q, ctrl, counter.Operations, core.EventSpendControlWarningReached,
			func() (int64, error) { return q.UsageCounterMarkWarning(ctx, month) }); err != nil {
			return err
		}
	}
	if counter.Operations >= *ctrl.HardOperationLimit {
		return d.markCrossing(ctx, q, ctrl, counter.Operations, core.EventSpendControlHardLimitReached,
			func() (int64, error) {
				return q.UsageCounterMarkHardLimit(ctx, dbq.UsageCounterMarkHardLimitParams(month))
			})
	}
	return nil
}

// markCrossing records a crossing the first time this month, audited and published as
// event: mark reports how many rows it marked (0 when this month's crossing is already
// recorded).
func (d *DB) markCrossing(ctx context.Context, q *dbq.Queries, ctrl *core.SpendControl, operations int64, event core.EventType, mark func() (int64, error)) error {
	n, err := mark()
	if err != nil || n == 0 {
		return err
	}
	status := ctrl.Status(operations)
	if err := audit(ctx, q, core.AuditEntry{
		OrganizationID: &ctrl.OrganizationID, Action: string(event), ResourceType: "spend_control",
		ResourceID: ctrl.ID.String(), After: status,
	}); err != nil {
		return err
	}
	return d.publish(ctx, q, ctrl.OrganizationID, event, &status)
}

func spendLimitReached(product string, limit int64) error {
	now := time.Now().UTC()
	nextMonth := time.Date(now.Year(), now.Month()+1, 1, 0, 0, 0, 0, time.UTC)
	return &core.Error{
		Code:       core.ESpendLimitReached,
		Message:    fmt.Sprintf("The monthly limit of %d %s operations is reached; it resets at %s or when the spend control changes.", limit, product, nextMonth.Format(time.RFC3339)),
		RetryAfter: nextMonth.Sub(now),
	}
}

// SpendService implements core.SpendService.
type SpendService struct{ db *DB }

var _ core.SpendService = (*SpendService)(nil)

// NewSpendService returns the spend control and usage service over d.
func NewSpendService(d *DB) *SpendService { return &SpendService{db: d} }

// PutSpendControl implements core.SpendService.
func (s *SpendService) PutSpendControl(ctx context.Context, in core.SpendControlPut) (*core.SpendControl, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	orgID := in.OrganizationID
	if err := p.ActsFor(orgID, "/organization_id"); err != nil {
		return nil, err
	}
	var ctrl *core.SpendControl
	err = s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		if err := organizationExists(ctx, q, orgID); err != nil {
			return err
		}
		var before any
		if old, err := q.SpendControlGet(ctx, dbq.SpendControlGetParams{OrganizationID: orgID, Product: in.Product}); err == nil {
			before = spendControlFromRow(old)
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		id, err := uuid.NewV7()
		if err != nil {
			return err
		}
		row, err := q.SpendControlUpsert(ctx, dbq.SpendControlUpsertParams{
			ID: id, OrganizationID: orgID, Product: in.Product,
			WarningThresholdPercent: int32(in.WarningThresholdPercent),
			MonthlyBudgetMinorUnits: in.MonthlyBudgetMinorUnits, HardOperationLimit: in.HardOperationLimit,
			NotificationRecipients: nonNil(in.NotificationRecipients), Enabled: in.Enabled,
		})
		if err != nil {
			return err
		}
		ctrl = spendControlFromRow(row)
		if err := audit(ctx, q, core.AuditEntry{
			OrganizationID: &orgID, Action: "spend_control.updated", ResourceType: "spend_control",
			ResourceID: ctrl.ID.String(), Before: before, After: ctrl,
		}); err != nil {
			return err
		}
		if !ctrl.Enabled || ctrl.HardOperationLimit == nil {
			return nil
		}
		counter, err := q.UsageCounterGet(ctx, dbq.UsageCounterGetParams{OrganizationID: orgID, Product: in.Product})
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // no operation this month: none to reach anything with
		} else if err != nil {
			return err
		}
		return s.db.markReached(ctx, q, ctrl, counter)
	})
	return ctrl, err
}

// ListSpendControls implements core.SpendService.
func (s *SpendService) ListSpendControls(ctx context.Context, orgID uuid.UUID) ([]core.SpendControlStatus, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.ActsFor(orgID, "organization_id"); err != nil {
		return nil, err
	}
	rows, err := s.db.queries(ctx).SpendControlListWithUsage(ctx, orgID)
	if err != nil {
		return nil, translate(err)
	}
	out := make([]core.SpendControlStatus, len(rows))
	for i, r := range rows {
		out[i] = spendControlFromRow(r.SpendControl).Status(r.CurrentOperations)
	}
	return out, nil
}

// maxUsageDays bounds a usage report's range.
const maxUsageDays = 366

// Usage implements core.SpendService.
func (s *SpendService) Usage(ctx context.Context, in core.UsageQuery) (*core.UsageReport, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	var orgID uuid.UUID
	switch {
	case in.OrganizationID != nil:
		orgID = *in.OrganizationID
		if err := p.ActsFor(orgID, "organization_id"); err != nil {
			return nil, err
		}
	case p.IsOperator():
		return nil, queryError("organization_id", "required", "The operator must name the organization (organization_id).")
	default:
		orgID = p.OrganizationID
	}
	today := time.Now().UTC().Truncate(24 * time.Hour)
	from, to := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC), today
	if in.From != nil {
		from = *in.From
	}
	if in.To != nil {
		to = *in.To
	}
	if to.Before(from) {
		return nil, queryError("to", "minimum", "to must not be before from.")
	}
	if to.Sub(from) > maxUsageDays*24*time.Hour {
		return nil, queryError("to", "maximum", fmt.Sprintf("A usage report spans at most %d days.", maxUsageDays))
	}
	rows, err := s.db.queries(ctx).UsageReport(ctx, dbq.UsageReportParams{
		Granularity: in.Granularity, OrganizationID: orgID, Product: in.Product,
		FromDate: pgtype.Date{Time: from, Valid: true}, ToDate: pgtype.Date{Time: to, Valid: true},
	})
	if err != nil {
		return nil, translate(err)
	}
	report := &core.UsageReport{OrganizationID: orgID, Granularity: in.Granularity, From: from, To: to, Totals: map[string]int64{}}
	for _, r := range rows {
		report.Items = append(report.Items, core.UsageBucket{Product: r.Product, PeriodStart: r.PeriodStart.Time, Operations: r.Operations})
		report.Totals[r.Product] += r.Operations
	}
	return report, nil
}

func queryError(param, code, msg string) error {
	return &core.Error{Code: core.EValidation, Message: msg,
		Fields: []core.FieldError{{Location: "query", Pointer: param, Code: code, Message: msg}}}
}

func spendControlFromRow(r dbq.SpendControl) *core.SpendControl {
	return &core.SpendControl{
		ID: r.ID, OrganizationID: r.OrganizationID, Product: r.Product,
		WarningThresholdPercent: int(r.WarningThresholdPercent), MonthlyBudgetMinorUnits: r.MonthlyBudgetMinorUnits,
		HardOperationLimit: r.HardOperationLimit, NotificationRecipients: r.NotificationRecipients, Enabled: r.Enabled,
	}
}
