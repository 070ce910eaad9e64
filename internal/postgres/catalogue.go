package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// CatalogueService implements core.CatalogueService.
type CatalogueService struct{ db *DB }

var _ core.CatalogueService = (*CatalogueService)(nil)

// NewCatalogueService returns the catalogue service over d.
func NewCatalogueService(d *DB) *CatalogueService { return &CatalogueService{db: d} }

// ListProducts implements core.CatalogueService. The cursor is the id of the last product of
// the previous page; one more row than the page is read to know whether another page follows.
func (s *CatalogueService) ListProducts(ctx context.Context, f core.ProductFilter) (*core.ProductPage, error) {
	limit := f.Limit
	if limit == 0 {
		limit = core.DefaultPageLimit
	}
	if limit < 1 || limit > core.MaxPageLimit {
		return nil, &core.Error{Code: core.EValidation, Message: fmt.Sprintf("limit must be 1..%d.", core.MaxPageLimit),
			Fields: []core.FieldError{{Location: "query", Pointer: "limit", Code: "invalid", Message: "limit is out of range."}}}
	}
	params := dbq.ProductListParams{MaxRows: int32(limit + 1), IncludeInternal: f.Audience.Internal}
	if f.Cursor != "" {
		after, err := uuid.Parse(f.Cursor)
		if err != nil {
			return nil, &core.Error{Code: core.EValidation, Message: "cursor is not a cursor this API issued; pass next_cursor back unchanged.",
				Fields: []core.FieldError{{Location: "query", Pointer: "cursor", Code: "invalid", Message: "query parameter \"cursor\" is not a cursor this API issued."}}}
		}
		params.After = &after
	}
	rows, err := s.db.queries(ctx).ProductList(ctx, params)
	if err != nil {
		return nil, translate(err)
	}
	page := &core.ProductPage{Items: make([]*core.Product, 0, min(len(rows), limit))}
	for i, r := range rows {
		if i == limit {
			next := page.Items[limit-1].ID.String()
			page.NextCursor = &next
			break
		}
		page.Items = append(page.Items, productFromRow(r))
	}
	return page, nil
}

// Audience implements core.CatalogueService: an organization's type decides whether it sees
// internal_only products (the type never changes once the organization exists).
func (s *CatalogueService) Audience(ctx context.Context) (core.CatalogueAudience, error) {
	return s.db.catalogueAudience(ctx, s.db.queries(ctx))
}

// catalogueAudience is the view of the catalogue of the principal of ctx.
func (d *DB) catalogueAudience(ctx context.Context, q *dbq.Queries) (core.CatalogueAudience, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return core.CatalogueAudience{}, err
	}
	if p.IsOperator() {
		return core.WholeCatalogue, nil
	}
	typ, err := d.organizationTypes.of(ctx, q, p.OrganizationID)
	if err != nil {
		return core.CatalogueAudience{}, err
	}
	return core.AudienceOf(p, typ), nil
}

// FindProductByID implements core.CatalogueService. A product the audience does not see is
// not found, exactly as one that does not exist.
func (s *CatalogueService) FindProductByID(ctx context.Context, id uuid.UUID, a core.CatalogueAudience) (*core.Product, error) {
	q := s.db.queries(ctx)
	row, err := q.ProductGetByID(ctx, id)
	if err == nil && !a.SeesProduct(row.Availability) {
		err = pgx.ErrNoRows
	}
	if err != nil {
		return nil, notFoundAs(err, "Product %s does not exist.", id)
	}
	p := productFromRow(row)
	plans, err := q.PlanList(ctx, dbq.PlanListParams{ProductID: &id, IncludeInternal: a.Internal, IncludeDrafts: a.Drafts})
	if err != nil {
		return nil, translate(err)
	}
	p.Plans = make([]*core.Plan, len(plans))
	for i, r := range plans {
		if p.Plans[i], err = planFromRow(r); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Version returns the catalogue's version (migration 00102 raises it on every change).
func (s *CatalogueService) Version(ctx context.Context) (int64, error) {
	v, err := s.db.queries(ctx).CatalogueVersionGet(ctx)
	if err != nil {
		return 0, translate(err)
	}
	return v, nil
}

// ListPlans implements core.CatalogueService.
func (s *CatalogueService) ListPlans(ctx context.Context, f core.PlanFilter) ([]*core.Plan, error) {
	q := s.db.queries(ctx)
	rows, err := q.PlanList(ctx, dbq.PlanListParams{ProductID: f.ProductID, IncludeInternal: f.Audience.Internal, IncludeDrafts: f.Audience.Drafts})
	if err != nil {
		return nil, translate(err)
	}
	plans := make([]*core.Plan, len(rows))
	ids := make([]uuid.UUID, len(rows))
	byID := make(map[uuid.UUID]*core.Plan, len(rows))
	for i, r := range rows {
		if plans[i], err = planFromRow(r); err != nil {
			return nil, err
		}
		plans[i].Prices = []*core.Price{}
		ids[i] = r.ID
		byID[r.ID] = plans[i]
	}
	prices, err := q.PriceListByPlans(ctx, ids)
	if err != nil {
		return nil, translate(err)
	}
	for _, r := range prices {
		price, err := priceFromRow(r)
		if err != nil {
			return nil, err
		}
		byID[r.PlanID].Prices = append(byID[r.PlanID].Prices, price)
	}
	return plans, nil
}

// planWithPrices reads a plan and its prices within q (the billing arithmetic needs both).
func planWithPrices(ctx context.Context, q *dbq.Queries, id uuid.UUID) (*core.Plan, error) {
	row, err := q.PlanGetByID(ctx, id)
	if err != nil {
		return nil, err
	}
	plan, err := planFromRow(row)
	if err != nil {
		return nil, err
	}
	prices, err := q.PriceListByPlans(ctx, []uuid.UUID{id})
	if err != nil {
		return nil, err
	}
	for _, r := range prices {
		p, err := priceFromRow(r)
		if err != nil {
			return nil, err
		}
		plan.Prices = append(plan.Prices, p)
	}
	return plan, nil
}

// notFoundAs translates err, giving a not-found outcome a message naming what is missing.
func notFoundAs(err error, format string, args ...any) error {
	err = translate(err)
	if core.ErrorCode(err) == core.ENotFound {
		return core.Errorf(core.ENotFound, format, args...)
	}
	return err
}

func productFromRow(r dbq.Product) *core.Product {
	return &core.Product{
		ID:                       r.ID,
		CreatedAt:                r.CreatedAt,
		UpdatedAt:                r.UpdatedAt,
		Code:                     r.Code,
		NameAr:                   r.NameAr,
		NameEn:                   r.NameEn,
		Description:              r.Description,
		Category:                 r.Category,
		ServiceClassification:    r.ServiceClassification,
		RegulatoryClassification: r.RegulatoryClassification,
		Availability:             r.Availability,
		ProvisioningWorkflow:     r.ProvisioningWorkflow,
		TerminationPolicy:        r.TerminationPolicy,
		RequiredDocuments:        nonNil(r.RequiredDocuments),
		RequiredApprovals:        nonNil(r.RequiredApprovals),
		RequiredCredentials:      nonNil(r.RequiredCredentials),
		MeteringMetrics:          nonNil(r.MeteringMetrics),
		BillingModel:             r.BillingModel,
	}
}

func planFromRow(r dbq.Plan) (*core.Plan, error) {
	p := &core.Plan{
		ID:                 r.ID,
		CreatedAt:          r.CreatedAt,
		UpdatedAt:          r.UpdatedAt,
		ProductID:          r.ProductID,
		Code:               r.Code,
		Name:               r.Name,
		BillingPeriod:      r.BillingPeriod,
		Currency:           r.Currency,
		SetupFee:           r.SetupFee,
		RecurringFee:       r.RecurringFee,
		MinimumCommitment:  r.MinimumCommitment,
		TaxPolicyReference: r.TaxPolicyReference,
		Status:             r.Status,
		IncludedUsage:      []core.IncludedUsage{},
		OverageRules:       []core.OverageRule{},
	}
	if err := json.Unmarshal(r.IncludedUsage, &p.IncludedUsage); err != nil {
		return nil, fmt.Errorf("plan %s: included_usage: %w", r.ID, err)
	}
	if err := json.Unmarshal(r.OverageRules, &p.OverageRules); err != nil {
		return nil, fmt.Errorf("plan %s: overage_rules: %w", r.ID, err)
	}
	if r.TrialDays != nil && r.TrialRequiresPaymentMethod != nil {
		p.TrialPolicy = &core.TrialPolicy{TrialDays: int(*r.TrialDays), RequiresPaymentMethod: *r.TrialRequiresPaymentMethod}
	}
	return p, nil
}

func priceFromRow(r dbq.Price) (*core.Price, error) {
	p := &core.Price{
		ID:            r.ID,
		CreatedAt:     r.CreatedAt,
		UpdatedAt:     r.UpdatedAt,
		PlanID:        r.PlanID,
		ComponentType: r.ComponentType,
		Metric:        r.Metric,
		Currency:      r.Currency,
		TaxTreatment:  r.TaxTreatment,
		Amount:        r.Amount,
		UnitAmount:    r.UnitAmount,
		PackageSize:   r.PackageSize,
		PackageAmount: r.PackageAmount,
		Status:        r.Status,

		RetiredWithPlan: r.RetiredWithPlan,
	}
	if r.Tiers != nil {
		if err := json.Unmarshal(r.Tiers, &p.Tiers); err != nil {
			return nil, fmt.Errorf("price %s: tiers: %w", r.ID, err)
		}
	}
	return p, nil
}
