package httpapi

import (
	"context"
	"fmt"
	"strconv"

	"github.com/google/uuid"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/core"
)

// ListProducts implements GET /v1/products.
func (s *Server) ListProducts(ctx context.Context, req api.ListProductsRequestObject) (api.ListProductsResponseObject, error) {
	audience, err := s.cfg.Services.Catalogue.Audience(ctx)
	if err != nil {
		return nil, err
	}
	f := core.ProductFilter{Audience: audience}
	if req.Params.Cursor != nil {
		f.Cursor = *req.Params.Cursor
	}
	if req.Params.Limit != nil {
		f.Limit = *req.Params.Limit
	}
	key := audienceKey(audience) + "products\x00" + f.Cursor + "\x00" + strconv.Itoa(f.Limit)
	return s.catalogueResponse(ctx, key, func() (any, error) {
		page, err := s.cfg.Services.Catalogue.ListProducts(ctx, f)
		if err != nil {
			return nil, err
		}
		items := make([]api.Product, len(page.Items))
		for i, p := range page.Items {
			items[i] = toAPIProduct(p)
		}
		return api.ProductList{Items: items, NextCursor: nullableFrom(page.NextCursor)}, nil
	})
}

// GetProduct implements GET /v1/products/{id}.
func (s *Server) GetProduct(ctx context.Context, req api.GetProductRequestObject) (api.GetProductResponseObject, error) {
	audience, err := s.cfg.Services.Catalogue.Audience(ctx)
	if err != nil {
		return nil, err
	}
	p, err := s.cfg.Services.Catalogue.FindProductByID(ctx, req.Id, audience)
	if err != nil {
		return nil, err
	}
	base := toAPIProduct(p)
	plans := make([]api.Plan, len(p.Plans))
	for i, plan := range p.Plans {
		plans[i] = toAPIPlan(plan)
	}
	return api.GetProduct200JSONResponse{Body: api.ProductDetail{
		Id:                       base.Id,
		CreatedAt:                base.CreatedAt,
		UpdatedAt:                base.UpdatedAt,
		Code:                     base.Code,
		NameAr:                   base.NameAr,
		NameEn:                   base.NameEn,
		Description:              base.Description,
		Category:                 base.Category,
		ServiceClassification:    base.ServiceClassification,
		RegulatoryClassification: base.RegulatoryClassification,
		Availability:             base.Availability,
		ProvisioningWorkflow:     base.ProvisioningWorkflow,
		TerminationPolicy:        base.TerminationPolicy,
		RequiredDocuments:        base.RequiredDocuments,
		RequiredApprovals:        base.RequiredApprovals,
		RequiredCredentials:      base.RequiredCredentials,
		MeteringMetrics:          base.MeteringMetrics,
		BillingModel:             base.BillingModel,
		Plans:                    plans,
	}}, nil
}

// ListPlans implements GET /v1/plans.
func (s *Server) ListPlans(ctx context.Context, req api.ListPlansRequestObject) (api.ListPlansResponseObject, error) {
	audience, err := s.cfg.Services.Catalogue.Audience(ctx)
	if err != nil {
		return nil, err
	}
	key := audienceKey(audience) + "plans"
	if req.Params.ProductId != nil {
		key += "\x00" + *req.Params.ProductId
	}
	return s.catalogueResponse(ctx, key, func() (any, error) { return s.listPlans(ctx, req, audience) })
}

// audienceKey prefixes the cache keys of catalogue lists: each audience sees its own lists.
func audienceKey(a core.CatalogueAudience) string {
	return fmt.Sprintf("internal=%t,drafts=%t\x00", a.Internal, a.Drafts)
}

func (s *Server) listPlans(ctx context.Context, req api.ListPlansRequestObject, audience core.CatalogueAudience) (api.PlanList, error) {
	f := core.PlanFilter{Audience: audience}
	if raw := req.Params.ProductId; raw != nil {
		id, err := uuid.Parse(*raw)
		if err != nil { // names no product, so no plan matches
			return api.PlanList{Items: []api.PlanWithPrices{}, NextCursor: nullableFrom[string](nil)}, nil
		}
		f.ProductID = &id
	}
	plans, err := s.cfg.Services.Catalogue.ListPlans(ctx, f)
	if err != nil {
		return api.PlanList{}, err
	}
	items := make([]api.PlanWithPrices, len(plans))
	for i, p := range plans {
		items[i] = toAPIPlanWithPrices(p)
	}
	return api.PlanList{Items: items, NextCursor: nullableFrom[string](nil)}, nil
}

// toAPIPlanWithPrices is the plan list's form of a plan: the plan and its prices.
func toAPIPlanWithPrices(p *core.Plan) api.PlanWithPrices {
	base := toAPIPlan(p)
	prices := make([]api.Price, len(p.Prices))
	for j, price := range p.Prices {
		prices[j] = toAPIPrice(price)
	}
	return api.PlanWithPrices{
		Id:                 base.Id,
		CreatedAt:          base.CreatedAt,
		UpdatedAt:          base.UpdatedAt,
		ProductId:          base.ProductId,
		Code:               base.Code,
		Name:               base.Name,
		BillingPeriod:      base.BillingPeriod,
		Currency:           base.Currency,
		SetupFee:           base.SetupFee,
		RecurringFee:       base.RecurringFee,
		MinimumCommitment:  base.MinimumCommitment,
		IncludedUsage:      base.IncludedUsage,
		OverageRules:       base.OverageRules,
		TrialPolicy:        base.TrialPolicy,
		TaxPolicyReference: base.TaxPolicyReference,
		Status:             base.Status,
		Prices:             prices,
	}
}

func toAPIProduct(p *core.Product) api.Product {
	return api.Product{
		Id:                       p.ID,
		CreatedAt:                p.CreatedAt,
		UpdatedAt:                p.UpdatedAt,
		Code:                     p.Code,
		NameAr:                   p.NameAr,
		NameEn:                   p.NameEn,
		Description:              p.Description,
		Category:                 api.ProductCategory(p.Category),
		ServiceClassification:    api.ServiceClassification(p.ServiceClassification),
		RegulatoryClassification: api.RegulatoryClassification(p.RegulatoryClassification),
		Availability:             api.ProductAvailability(p.Availability),
		ProvisioningWorkflow:     p.ProvisioningWorkflow,
		TerminationPolicy:        p.TerminationPolicy,
		RequiredDocuments:        p.RequiredDocuments,
		RequiredApprovals:        p.RequiredApprovals,
		RequiredCredentials:      p.RequiredCredentials,
		MeteringMetrics:          p.MeteringMetrics,
		BillingModel:             api.BillingModel(p.BillingModel),
	}
}

func toAPIPlan(p *core.Plan) api.Plan {
	included := make([]api.IncludedUsage, len(p.IncludedUsage))
	for i, u := range p.IncludedUsage {
		included[i] = api.IncludedUsage{Metric: u.Metric, Quantity: u.Quantity}
	}
	overage := make([]api.OverageRule, len(p.OverageRules))
	for i, r := range p.OverageRules {
		overage[i] = api.OverageRule{Metric: r.Metric, UnitPrice: r.UnitPrice}
	}
	var trial *api.TrialPolicy
	if p.TrialPolicy != nil {
		trial = &api.TrialPolicy{TrialDays: p.TrialPolicy.TrialDays, RequiresPaymentMethod: p.TrialPolicy.RequiresPaymentMethod}
	}
	return api.Plan{
		Id:                 p.ID,
		CreatedAt:          p.CreatedAt,
		UpdatedAt:          p.UpdatedAt,
		ProductId:          p.ProductID.String(),
		Code:               p.Code,
		Name:               p.Name,
		BillingPeriod:      api.PlanBillingPeriod(p.BillingPeriod),
		Currency:           p.Currency,
		SetupFee:           nullableFrom(p.SetupFee),
		RecurringFee:       nullableFrom(p.RecurringFee),
		MinimumCommitment:  nullableFrom(p.MinimumCommitment),
		IncludedUsage:      included,
		OverageRules:       overage,
		TrialPolicy:        nullableFrom(trial),
		TaxPolicyReference: nullableFrom(p.TaxPolicyReference),
		Status:             api.PlanStatus(p.Status),
	}
}

func toAPIPrice(p *core.Price) api.Price {
	var tiers *[]api.PriceTier
	if p.Tiers != nil {
		t := make([]api.PriceTier, len(p.Tiers))
		for i, tier := range p.Tiers {
			t[i] = api.PriceTier{UpperBound: nullableFrom(tier.UpperBound), UnitAmount: tier.UnitAmount, FlatAmount: nullableFrom(tier.FlatAmount)}
		}
		tiers = &t
	}
	return api.Price{
		Id:            p.ID,
		CreatedAt:     p.CreatedAt,
		UpdatedAt:     p.UpdatedAt,
		PlanId:        p.PlanID.String(),
		ComponentType: api.PriceComponentType(p.ComponentType),
		Metric:        nullableFrom(p.Metric),
		Currency:      p.Currency,
		TaxTreatment:  api.TaxTreatment(p.TaxTreatment),
		Amount:        nullableFrom(p.Amount),
		UnitAmount:    nullableFrom(p.UnitAmount),
		Tiers:         nullableFrom(tiers),
		PackageSize:   nullableFrom(p.PackageSize),
		PackageAmount: nullableFrom(p.PackageAmount),
		Status:        api.PriceStatus(p.Status),
	}
}
