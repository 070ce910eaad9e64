package httpapi

import (
	"context"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/core"
)

// CreateProduct implements POST /v1/products.
func (s *Server) CreateProduct(ctx context.Context, req api.CreateProductRequestObject) (api.CreateProductResponseObject, error) {
	b := req.Body
	p, err := s.cfg.Services.Catalogue.CreateProduct(ctx, core.ProductCreate{
		Code: b.Code, NameAr: b.NameAr, NameEn: b.NameEn, Description: b.Description,
		Category: string(b.Category), ServiceClassification: string(b.ServiceClassification),
		RegulatoryClassification: string(b.RegulatoryClassification), Availability: string(b.Availability),
		ProvisioningWorkflow: b.ProvisioningWorkflow, TerminationPolicy: b.TerminationPolicy,
		RequiredDocuments: deref(b.RequiredDocuments), RequiredApprovals: deref(b.RequiredApprovals),
		RequiredCredentials: deref(b.RequiredCredentials), MeteringMetrics: deref(b.MeteringMetrics),
		BillingModel: string(b.BillingModel),
	})
	if err != nil {
		return nil, err
	}
	return api.CreateProduct201JSONResponse{Body: toAPIProduct(p)}, nil
}

// UpdateProduct implements PATCH /v1/products/{id}.
func (s *Server) UpdateProduct(ctx context.Context, req api.UpdateProductRequestObject) (api.UpdateProductResponseObject, error) {
	b := req.Body
	p, err := s.cfg.Services.Catalogue.UpdateProduct(ctx, req.Id, core.ProductUpdate{
		NameAr: b.NameAr, NameEn: b.NameEn, Description: b.Description, Availability: enumPtr(b.Availability),
	})
	if err != nil {
		return nil, err
	}
	return api.UpdateProduct200JSONResponse{Body: toAPIProduct(p)}, nil
}

// CreatePlan implements POST /v1/plans.
func (s *Server) CreatePlan(ctx context.Context, req api.CreatePlanRequestObject) (api.CreatePlanResponseObject, error) {
	b := req.Body
	prices := make([]*core.Price, len(b.Prices))
	for i, p := range b.Prices {
		prices[i] = priceFromAPI(p)
	}
	plan, err := s.cfg.Services.Catalogue.CreatePlan(ctx, core.PlanCreate{
		ProductID: b.ProductId, Code: b.Code, Name: b.Name, BillingPeriod: string(b.BillingPeriod), Currency: b.Currency,
		SetupFee: valueOf(b.SetupFee), RecurringFee: valueOf(b.RecurringFee), MinimumCommitment: valueOf(b.MinimumCommitment),
		IncludedUsage: includedUsageFromAPI(deref(b.IncludedUsage)), OverageRules: overageRulesFromAPI(deref(b.OverageRules)),
		TrialPolicy: trialPolicyFromAPI(valueOf(b.TrialPolicy)), TaxPolicyReference: valueOf(b.TaxPolicyReference),
		Prices: prices,
	})
	if err != nil {
		return nil, err
	}
	return api.CreatePlan201JSONResponse{Body: toAPIPlanWithPrices(plan)}, nil
}

// UpdatePlan implements PATCH /v1/plans/{id}.
func (s *Server) UpdatePlan(ctx context.Context, req api.UpdatePlanRequestObject) (api.UpdatePlanResponseObject, error) {
	b := req.Body
	u := core.PlanUpdate{
		Name:               b.Name,
		BillingPeriod:      enumPtr(b.BillingPeriod),
		SetupFee:           patchField(b.SetupFee),
		RecurringFee:       patchField(b.RecurringFee),
		MinimumCommitment:  patchField(b.MinimumCommitment),
		TaxPolicyReference: patchField(b.TaxPolicyReference),
		Status:             enumPtr(b.Status),
	}
	if b.IncludedUsage != nil {
		v := includedUsageFromAPI(*b.IncludedUsage)
		u.IncludedUsage = &v
	}
	if b.OverageRules != nil {
		v := overageRulesFromAPI(*b.OverageRules)
		u.OverageRules = &v
	}
	if b.TrialPolicy.IsSpecified() {
		u.TrialPolicy = core.Field[core.TrialPolicy]{Set: true, Value: trialPolicyFromAPI(valueOf(b.TrialPolicy))}
	}
	plan, err := s.cfg.Services.Catalogue.UpdatePlan(ctx, req.Id, u)
	if err != nil {
		return nil, err
	}
	return api.UpdatePlan200JSONResponse{Body: toAPIPlanWithPrices(plan)}, nil
}

// CreatePlanPrice implements POST /v1/plans/{id}/prices.
func (s *Server) CreatePlanPrice(ctx context.Context, req api.CreatePlanPriceRequestObject) (api.CreatePlanPriceResponseObject, error) {
	price, err := s.cfg.Services.Catalogue.CreatePrice(ctx, req.Id, priceFromAPI(*req.Body))
	if err != nil {
		return nil, err
	}
	return api.CreatePlanPrice201JSONResponse{Body: toAPIPrice(price)}, nil
}

// UpdatePlanPrice implements PATCH /v1/plans/{id}/prices/{price_id}.
func (s *Server) UpdatePlanPrice(ctx context.Context, req api.UpdatePlanPriceRequestObject) (api.UpdatePlanPriceResponseObject, error) {
	b := req.Body
	u := core.PriceUpdate{
		Metric:        patchField(b.Metric),
		TaxTreatment:  enumPtr(b.TaxTreatment),
		Amount:        patchField(b.Amount),
		UnitAmount:    patchField(b.UnitAmount),
		PackageSize:   patchField(b.PackageSize),
		PackageAmount: patchField(b.PackageAmount),
		Status:        enumPtr(b.Status),
	}
	if b.Tiers.IsSpecified() {
		u.Tiers = core.Field[[]core.PriceTier]{Set: true}
		if tiers := valueOf(b.Tiers); tiers != nil {
			v := tiersFromAPI(*tiers)
			u.Tiers.Value = &v
		}
	}
	price, err := s.cfg.Services.Catalogue.UpdatePrice(ctx, req.Id, req.PriceId, u)
	if err != nil {
		return nil, err
	}
	return api.UpdatePlanPrice200JSONResponse{Body: toAPIPrice(price)}, nil
}

// priceFromAPI is a new price component as the request describes it; tax-exclusive unless
// it says otherwise.
func priceFromAPI(p api.PriceCreateRequest) *core.Price {
	price := &core.Price{
		ComponentType: string(p.ComponentType), Metric: valueOf(p.Metric),
		TaxTreatment: valueOr(enumPtr(p.TaxTreatment), string(api.TaxTreatmentTaxExclusive)),
		Amount:       valueOf(p.Amount), UnitAmount: valueOf(p.UnitAmount),
		PackageSize: valueOf(p.PackageSize), PackageAmount: valueOf(p.PackageAmount),
	}
	if tiers := valueOf(p.Tiers); tiers != nil {
		price.Tiers = tiersFromAPI(*tiers)
	}
	return price
}

func tiersFromAPI(in []api.PriceTierInput) []core.PriceTier {
	out := make([]core.PriceTier, len(in))
	for i, t := range in {
		out[i] = core.PriceTier{UpperBound: valueOf(t.UpperBound), UnitAmount: t.UnitAmount, FlatAmount: valueOf(t.FlatAmount)}
	}
	return out
}

func includedUsageFromAPI(in []api.IncludedUsageInput) []core.IncludedUsage {
	out := make([]core.IncludedUsage, len(in))
	for i, u := range in {
		out[i] = core.IncludedUsage{Metric: u.Metric, Quantity: u.Quantity}
	}
	return out
}

func overageRulesFromAPI(in []api.OverageRuleInput) []core.OverageRule {
	out := make([]core.OverageRule, len(in))
	for i, r := range in {
		out[i] = core.OverageRule{Metric: r.Metric, UnitPrice: r.UnitPrice}
	}
	return out
}

func trialPolicyFromAPI(t *api.TrialPolicyInput) *core.TrialPolicy {
	if t == nil {
		return nil
	}
	return &core.TrialPolicy{TrialDays: t.TrialDays, RequiresPaymentMethod: t.RequiresPaymentMethod}
}
