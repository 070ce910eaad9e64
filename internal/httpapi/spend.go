package httpapi

import (
	"context"
	"sort"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/core"
)

// PutSpendControl implements PUT /v1/spend-controls/{product}.
func (s *Server) PutSpendControl(ctx context.Context, req api.PutSpendControlRequestObject) (api.PutSpendControlResponseObject, error) {
	b := req.Body
	org, err := core.OrganizationIn(ctx, b.OrganizationId, "/organization_id")
	if err != nil {
		return nil, err
	}
	ctrl, err := s.cfg.Services.Spend.PutSpendControl(ctx, core.SpendControlPut{
		OrganizationID:          org,
		Product:                 string(req.Product),
		WarningThresholdPercent: b.WarningThresholdPercent,
		MonthlyBudgetMinorUnits: valueOf(b.MonthlyBudgetMinorUnits),
		HardOperationLimit:      valueOf(b.HardOperationLimit),
		NotificationRecipients:  emailStrings(b.NotificationRecipients),
		Enabled:                 b.Enabled,
	})
	if err != nil {
		return nil, err
	}
	return api.PutSpendControl200JSONResponse{Body: toAPISpendControl(ctrl)}, nil
}

// ListSpendControls implements GET /v1/spend-controls.
func (s *Server) ListSpendControls(ctx context.Context, req api.ListSpendControlsRequestObject) (api.ListSpendControlsResponseObject, error) {
	org, err := core.OrganizationIn(ctx, req.Params.OrganizationId, "organization_id")
	if err != nil {
		return nil, err
	}
	list, err := s.cfg.Services.Spend.ListSpendControls(ctx, org)
	if err != nil {
		return nil, err
	}
	out := make(api.SpendControlStatusArray, len(list))
	for i := range list {
		out[i] = toAPISpendControlStatus(&list[i])
	}
	return api.ListSpendControls200JSONResponse{Body: out}, nil
}

// GetUsage implements GET /v1/usage.
func (s *Server) GetUsage(ctx context.Context, req api.GetUsageRequestObject) (api.GetUsageResponseObject, error) {
	p := req.Params
	org, err := organizationParam(ctx, p.OrganizationId)
	if err != nil {
		return nil, err
	}
	q := core.UsageQuery{OrganizationID: org, Granularity: string(valueOr(p.Granularity, api.UsageGranularityDay))}
	if p.Product != nil {
		product := string(*p.Product)
		q.Product = &product
	}
	if p.From != nil {
		q.From = &p.From.Time
	}
	if p.To != nil {
		q.To = &p.To.Time
	}
	report, err := s.cfg.Services.Spend.Usage(ctx, q)
	if err != nil {
		return nil, err
	}
	items := make([]api.UsageBucket, len(report.Items))
	for i, b := range report.Items {
		items[i] = api.UsageBucket{Product: api.SpendProduct(b.Product), PeriodStart: date(b.PeriodStart), Operations: b.Operations}
	}
	totals := make([]api.UsageTotal, 0, len(report.Totals))
	for product, n := range report.Totals {
		totals = append(totals, api.UsageTotal{Product: api.SpendProduct(product), Operations: n})
	}
	sort.Slice(totals, func(i, j int) bool { return totals[i].Product < totals[j].Product })
	return api.GetUsage200JSONResponse{Body: api.UsageReport{
		OrganizationId: report.OrganizationID.String(), Granularity: api.UsageGranularity(report.Granularity),
		From: date(report.From), To: date(report.To), Items: items, Totals: totals,
	}}, nil
}

func date(t time.Time) openapi_types.Date { return openapi_types.Date{Time: t} }

func emailStrings(in []openapi_types.Email) []string {
	out := make([]string, len(in))
	for i, e := range in {
		out[i] = string(e)
	}
	return out
}

func toAPISpendControlStatus(st *core.SpendControlStatus) api.SpendControlStatus {
	c := toAPISpendControl(&st.SpendControl)
	return api.SpendControlStatus{
		Id: c.Id, OrganizationId: c.OrganizationId, Product: c.Product,
		WarningThresholdPercent: c.WarningThresholdPercent, MonthlyBudgetMinorUnits: c.MonthlyBudgetMinorUnits,
		HardOperationLimit: c.HardOperationLimit, NotificationRecipients: c.NotificationRecipients, Enabled: c.Enabled,
		CurrentOperations: float64(st.CurrentOperations), WarningReached: st.WarningReached, HardLimitReached: st.HardLimitReached,
	}
}

func toAPISpendControl(c *core.SpendControl) api.SpendControl {
	emails := make([]openapi_types.Email, len(c.NotificationRecipients))
	for i, e := range c.NotificationRecipients {
		emails[i] = openapi_types.Email(e)
	}
	return api.SpendControl{
		Id: c.ID, OrganizationId: c.OrganizationID.String(), Product: api.SpendProduct(c.Product),
		WarningThresholdPercent: c.WarningThresholdPercent, MonthlyBudgetMinorUnits: nullableFrom(c.MonthlyBudgetMinorUnits),
		HardOperationLimit: nullableFrom(c.HardOperationLimit), NotificationRecipients: emails, Enabled: c.Enabled,
	}
}
