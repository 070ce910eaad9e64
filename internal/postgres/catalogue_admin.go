package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// Catalogue administration: the operator's changes to products, plans and prices. Each runs
// in one transaction with its audit event and webhook events; the triggers of migration 00102
// raise the catalogue version in that same transaction, so every process's catalogue cache
// (keyed by the version) misses on its next read after the commit.

// administer runs fn in one transaction for the operator, and refuses every other principal
// before anything is read.
func (s *CatalogueService) administer(ctx context.Context, fn func(ctx context.Context, q *dbq.Queries) error) error {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return err
	}
	if !p.IsOperator() {
		return core.Errorf(core.EForbidden, "Only the operator administers the catalogue.")
	}
	return s.db.WithTx(ctx, fn)
}

// CreateProduct implements core.CatalogueAdministration.
func (s *CatalogueService) CreateProduct(ctx context.Context, in core.ProductCreate) (*core.Product, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	var product *core.Product
	err = s.administer(ctx, func(ctx context.Context, q *dbq.Queries) error {
		row, err := q.ProductInsert(ctx, dbq.ProductInsertParams{
			ID: id, CreatedAt: now(), Code: in.Code, NameAr: in.NameAr, NameEn: in.NameEn, Description: in.Description,
			Category: in.Category, ServiceClassification: in.ServiceClassification, RegulatoryClassification: in.RegulatoryClassification,
			Availability: in.Availability, ProvisioningWorkflow: in.ProvisioningWorkflow, TerminationPolicy: in.TerminationPolicy,
			RequiredDocuments: nonNil(in.RequiredDocuments), RequiredApprovals: nonNil(in.RequiredApprovals),
			RequiredCredentials: nonNil(in.RequiredCredentials), MeteringMetrics: nonNil(in.MeteringMetrics), BillingModel: in.BillingModel,
		})
		if isUniqueViolation(err, "products_code_key") {
			return core.Errorf(core.EConflict, "A product with code %q exists already.", in.Code)
		}
		if err != nil {
			return err
		}
		product = productFromRow(row)
		return auditCatalogue(ctx, q, "product.created", "product", id, nil, product)
	})
	return product, err
}

// UpdateProduct implements core.CatalogueAdministration.
func (s *CatalogueService) UpdateProduct(ctx context.Context, id uuid.UUID, in core.ProductUpdate) (*core.Product, error) {
	var product *core.Product
	err := s.administer(ctx, func(ctx context.Context, q *dbq.Queries) error {
		row, err := q.ProductGetByIDForUpdate(ctx, id)
		if err != nil {
			return notFoundAs(err, "Product %s does not exist.", id)
		}
		before := productFromRow(row)
		after := in.Apply(*before)
		if reflect.DeepEqual(&after, before) {
			product = before
			return nil
		}
		row, err = q.ProductUpdate(ctx, dbq.ProductUpdateParams{
			ID: id, NameAr: after.NameAr, NameEn: after.NameEn, Description: after.Description, Availability: after.Availability, UpdatedAt: now(),
		})
		if err != nil {
			return err
		}
		product = productFromRow(row)
		if err := auditCatalogue(ctx, q, "product.updated", "product", id, before, product); err != nil {
			return err
		}
		orgs, err := q.SubscriberOrganizationsOfProductAnyOrganization(ctx, id)
		if err != nil {
			return err
		}
		return s.tell(ctx, q, orgs, core.EventProductUpdated, product)
	})
	return product, err
}

// CreatePlan implements core.CatalogueAdministration.
func (s *CatalogueService) CreatePlan(ctx context.Context, in core.PlanCreate) (*core.Plan, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	at := now()
	plan := &core.Plan{
		ID: id, CreatedAt: at, UpdatedAt: at, ProductID: in.ProductID, Code: in.Code, Name: in.Name,
		BillingPeriod: in.BillingPeriod, Currency: in.Currency, SetupFee: in.SetupFee, RecurringFee: in.RecurringFee,
		MinimumCommitment: in.MinimumCommitment, IncludedUsage: in.IncludedUsage, OverageRules: in.OverageRules,
		TrialPolicy: in.TrialPolicy, TaxPolicyReference: in.TaxPolicyReference, Status: core.PlanStatusDraft,
	}
	err = s.administer(ctx, func(ctx context.Context, q *dbq.Queries) error {
		row, err := q.ProductGetByID(ctx, in.ProductID)
		if errors.Is(err, pgx.ErrNoRows) {
			return core.Unprocessable("/product_id", "unknown_product", fmt.Sprintf("Product %s does not exist.", in.ProductID))
		}
		if err != nil {
			return err
		}
		product := productFromRow(row)
		if err := core.CheckPlanTerms(plan, product); err != nil {
			return err
		}
		for i, p := range in.Prices {
			if err := core.CheckPrice(p, product, fmt.Sprintf("/prices/%d", i)); err != nil {
				return err
			}
		}
		params, err := planParams(plan)
		if err != nil {
			return err
		}
		if _, err := q.PlanInsert(ctx, dbq.PlanInsertParams{
			ID: id, CreatedAt: at, ProductID: plan.ProductID, Code: plan.Code, Name: plan.Name, BillingPeriod: plan.BillingPeriod,
			Currency: plan.Currency, SetupFee: params.SetupFee, RecurringFee: params.RecurringFee, MinimumCommitment: params.MinimumCommitment,
			IncludedUsage: params.IncludedUsage, OverageRules: params.OverageRules, TrialDays: params.TrialDays,
			TrialRequiresPaymentMethod: params.TrialRequiresPaymentMethod, TaxPolicyReference: params.TaxPolicyReference, Status: plan.Status,
		}); isUniqueViolation(err, "plans_code_key") {
			return core.Errorf(core.EConflict, "A plan with code %q exists already.", in.Code)
		} else if err != nil {
			return err
		}
		plan.Prices = make([]*core.Price, len(in.Prices))
		for i, p := range in.Prices {
			if plan.Prices[i], err = insertPrice(ctx, q, plan, p, at); err != nil {
				return err
			}
		}
		return auditCatalogue(ctx, q, "plan.created", "plan", id, nil, plan)
	})
	if err != nil {
		return nil, err
	}
	return plan, nil
}

// UpdatePlan implements core.CatalogueAdministration.
func (s *CatalogueService) UpdatePlan(ctx context.Context, id uuid.UUID, in core.PlanUpdate) (*core.Plan, error) {
	var plan *core.Plan
	err := s.administer(ctx, func(ctx context.Context, q *dbq.Queries) error {
		before, product, err := lockPlan(ctx, q, id)
		if err != nil {
			return err
		}
		after := *before
		if in.EditsTerms() {
			if err := before.CheckTermsEditable(); err != nil {
				return err
			}
			after = in.ApplyTerms(after)
			if err := core.CheckPlanTerms(&after, product); err != nil {
				return err
			}
		}
		if in.Status != nil {
			if err := before.CheckPlanMove(*in.Status); err != nil {
				return err
			}
			after.Status = *in.Status
		}
		if reflect.DeepEqual(&after, before) {
			plan = before
			return nil
		}
		if after.Status == core.PlanStatusActive && before.Status == core.PlanStatusDraft {
			if err := core.CheckOffered(&after); err != nil {
				return err
			}
		}
		if plan, err = storePlan(ctx, q, &after, now()); err != nil {
			return err
		}
		if err := auditCatalogue(ctx, q, "plan.updated", "plan", id, before, plan); err != nil {
			return err
		}
		return s.tellSubscribers(ctx, q, before.Status, plan)
	})
	return plan, err
}

// tellSubscribers publishes plan.deprecated or plan.retired to every organization with a
// subscription on the plan that is not terminated, when the plan has just moved there.
func (s *CatalogueService) tellSubscribers(ctx context.Context, q *dbq.Queries, from string, plan *core.Plan) error {
	switch {
	case from == plan.Status:
		return nil
	case plan.Status == core.PlanStatusDeprecated:
		return s.tellPlanSubscribers(ctx, q, core.EventPlanDeprecated, plan)
	case plan.Status == core.PlanStatusRetired:
		return s.tellPlanSubscribers(ctx, q, core.EventPlanRetired, plan)
	}
	return nil
}

func (s *CatalogueService) tellPlanSubscribers(ctx context.Context, q *dbq.Queries, event core.EventType, plan *core.Plan) error {
	orgs, err := q.SubscriberOrganizationsOfPlanAnyOrganization(ctx, plan.ID)
	if err != nil {
		return err
	}
	return s.tell(ctx, q, orgs, event, plan)
}

// tell publishes one event to each of orgs.
func (s *CatalogueService) tell(ctx context.Context, q *dbq.Queries, orgs []uuid.UUID, event core.EventType, v any) error {
	for _, org := range orgs {
		if err := s.db.publish(ctx, q, org, event, v); err != nil {
			return err
		}
	}
	return nil
}

// storePlan writes plan's terms and status; retiring it makes every price inactive. It
// returns the plan as stored, with its prices.
func storePlan(ctx context.Context, q *dbq.Queries, plan *core.Plan, at time.Time) (*core.Plan, error) {
	params, err := planParams(plan)
	if err != nil {
		return nil, err
	}
	params.ID, params.Name, params.BillingPeriod, params.Status, params.UpdatedAt = plan.ID, plan.Name, plan.BillingPeriod, plan.Status, at
	if _, err := q.PlanUpdate(ctx, params); err != nil {
		return nil, err
	}
	if plan.Status == core.PlanStatusRetired {
		if err := q.PriceDeactivateByPlan(ctx, dbq.PriceDeactivateByPlanParams{PlanID: plan.ID, UpdatedAt: at}); err != nil {
			return nil, err
		}
	}
	return planWithPrices(ctx, q, plan.ID)
}

// CreatePrice implements core.CatalogueAdministration.
func (s *CatalogueService) CreatePrice(ctx context.Context, planID uuid.UUID, in *core.Price) (*core.Price, error) {
	var price *core.Price
	err := s.administer(ctx, func(ctx context.Context, q *dbq.Queries) error {
		plan, product, err := lockPlan(ctx, q, planID)
		if err != nil {
			return err
		}
		if err := plan.CheckTermsEditable(); err != nil {
			return err
		}
		if err := core.CheckPrice(in, product, ""); err != nil {
			return err
		}
		if price, err = insertPrice(ctx, q, plan, in, now()); err != nil {
			return err
		}
		return auditCatalogue(ctx, q, "price.created", "price", price.ID, nil, price)
	})
	return price, err
}

// UpdatePrice implements core.CatalogueAdministration.
func (s *CatalogueService) UpdatePrice(ctx context.Context, planID, priceID uuid.UUID, in core.PriceUpdate) (*core.Price, error) {
	var price *core.Price
	err := s.administer(ctx, func(ctx context.Context, q *dbq.Queries) error {
		plan, product, err := lockPlan(ctx, q, planID)
		if err != nil {
			return err
		}
		row, err := q.PriceGetByIDForUpdate(ctx, dbq.PriceGetByIDForUpdateParams{PlanID: planID, ID: priceID})
		if err != nil {
			return notFoundAs(err, "Plan %s has no price %s.", planID, priceID)
		}
		before, err := priceFromRow(row)
		if err != nil {
			return err
		}
		if err := plan.CheckTermsEditable(); err != nil {
			return err
		}
		after := in.Apply(*before)
		if reflect.DeepEqual(&after, before) {
			price = before
			return nil
		}
		if err := core.CheckPrice(&after, product, ""); err != nil {
			return err
		}
		tiers, err := tiersJSON(after.Tiers)
		if err != nil {
			return err
		}
		row, err = q.PriceUpdate(ctx, dbq.PriceUpdateParams{
			ID: priceID, Metric: after.Metric, TaxTreatment: after.TaxTreatment, Amount: after.Amount, UnitAmount: after.UnitAmount,
			Tiers: tiers, PackageSize: after.PackageSize, PackageAmount: after.PackageAmount, Status: after.Status, UpdatedAt: now(),
		})
		if err != nil {
			return err
		}
		if price, err = priceFromRow(row); err != nil {
			return err
		}
		return auditCatalogue(ctx, q, "price.updated", "price", priceID, before, price)
	})
	return price, err
}

// lockPlan locks a plan for a change and reads it with its prices, and its product.
func lockPlan(ctx context.Context, q *dbq.Queries, id uuid.UUID) (*core.Plan, *core.Product, error) {
	if _, err := q.PlanGetByIDForUpdate(ctx, id); err != nil {
		return nil, nil, notFoundAs(err, "Plan %s does not exist.", id)
	}
	plan, err := planWithPrices(ctx, q, id)
	if err != nil {
		return nil, nil, err
	}
	product, err := q.ProductGetByID(ctx, plan.ProductID)
	if err != nil {
		return nil, nil, err
	}
	return plan, productFromRow(product), nil
}

// insertPrice stores in as a new active price of plan, in the plan's currency.
func insertPrice(ctx context.Context, q *dbq.Queries, plan *core.Plan, in *core.Price, at time.Time) (*core.Price, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	tiers, err := tiersJSON(in.Tiers)
	if err != nil {
		return nil, err
	}
	row, err := q.PriceInsert(ctx, dbq.PriceInsertParams{
		ID: id, CreatedAt: at, PlanID: plan.ID, ComponentType: in.ComponentType, Metric: in.Metric, Currency: plan.Currency,
		TaxTreatment: in.TaxTreatment, Amount: in.Amount, UnitAmount: in.UnitAmount, Tiers: tiers,
		PackageSize: in.PackageSize, PackageAmount: in.PackageAmount, Status: core.PriceActive,
	})
	if err != nil {
		return nil, err
	}
	return priceFromRow(row)
}

// planParams encodes the terms of plan as the plans table stores them.
func planParams(plan *core.Plan) (dbq.PlanUpdateParams, error) {
	included, err := json.Marshal(plan.IncludedUsage)
	if err != nil {
		return dbq.PlanUpdateParams{}, err
	}
	overage, err := json.Marshal(plan.OverageRules)
	if err != nil {
		return dbq.PlanUpdateParams{}, err
	}
	p := dbq.PlanUpdateParams{
		SetupFee: plan.SetupFee, RecurringFee: plan.RecurringFee, MinimumCommitment: plan.MinimumCommitment,
		IncludedUsage: included, OverageRules: overage, TaxPolicyReference: plan.TaxPolicyReference,
	}
	if t := plan.TrialPolicy; t != nil {
		days := int32(t.TrialDays)
		p.TrialDays, p.TrialRequiresPaymentMethod = &days, &t.RequiresPaymentMethod
	}
	return p, nil
}

// tiersJSON encodes tiers for the prices table: null when the component has none.
func tiersJSON(tiers []core.PriceTier) ([]byte, error) {
	if tiers == nil {
		return nil, nil
	}
	return json.Marshal(tiers)
}

// auditCatalogue records a provider-wide change of the catalogue (no organization owns it).
func auditCatalogue(ctx context.Context, q *dbq.Queries, action, resourceType string, id uuid.UUID, before, after any) error {
	return audit(ctx, q, core.AuditEntry{Action: action, ResourceType: resourceType, ResourceID: id.String(), Before: before, After: after})
}

// checkOfferedTo refuses a product an organization may not take, exactly as if the product
// did not exist: one outside the organization's audience (an internal_only product to an
// organization that is not internal). pointer and code name the refused field of the request
// (the product or the plan it names).
func (d *DB) checkOfferedTo(ctx context.Context, q *dbq.Queries, orgID uuid.UUID, product *core.Product, pointer, code, message string) error {
	typ, err := d.organizationTypes.of(ctx, q, orgID)
	if err != nil {
		return err
	}
	if !core.OrganizationAudience(typ).SeesProduct(product.Availability) {
		return core.Unprocessable(pointer, code, message)
	}
	return nil
}
