package core

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"
)

// Product availabilities (ProductDeprecated is in catalogue.go). Who sees each, and who may
// subscribe, is CatalogueAudience's and OpenForNewSubscriptions's to say.
const (
	ProductGA           = "ga"
	ProductBeta         = "beta"
	ProductInternalOnly = "internal_only"
)

// Price statuses. An inactive price counts for nothing.
const (
	PriceActive   = "active"
	PriceInactive = "inactive"
)

// OrganizationTypeInternal is the organization type that sees internal_only products.
const OrganizationTypeInternal = "internal"

// CatalogueAudience is what part of the catalogue a principal sees: organizations of type
// internal see internal_only products, and only the operator sees draft plans (not offered
// yet, and still changing). The zero value is an ordinary organization's view.
type CatalogueAudience struct {
	Internal bool
	Drafts   bool
}

// WholeCatalogue is the operator's view: every product and plan.
var WholeCatalogue = CatalogueAudience{Internal: true, Drafts: true}

// AudienceOf is the audience of p, an organization of type orgType when p is not the operator.
func AudienceOf(p *Principal, orgType string) CatalogueAudience {
	if p.IsOperator() {
		return WholeCatalogue
	}
	return OrganizationAudience(orgType)
}

// OrganizationAudience is what an organization of type orgType is offered: internal_only
// products only when it is internal, and no drafts.
func OrganizationAudience(orgType string) CatalogueAudience {
	return CatalogueAudience{Internal: orgType == OrganizationTypeInternal}
}

// SeesProduct reports whether the audience sees a product of that availability.
func (a CatalogueAudience) SeesProduct(availability string) bool {
	return availability != ProductInternalOnly || a.Internal
}

// SeesPlan reports whether the audience sees a plan of that status.
func (a CatalogueAudience) SeesPlan(status string) bool {
	return status != PlanStatusDraft || a.Drafts
}

// planMoves is the plan status table: one step at a time, never back.
var planMoves = map[string]string{
	PlanStatusDraft:      PlanStatusActive,
	PlanStatusActive:     PlanStatusDeprecated,
	PlanStatusDeprecated: PlanStatusRetired,
}

// CheckPlanMove returns nil when plan may move from its status to `to`, and otherwise an
// EInvalidTransition error naming both. Moving to the status it has is no move and allowed.
func (p *Plan) CheckPlanMove(to string) error {
	if p.Status == to || planMoves[p.Status] == to {
		return nil
	}
	next := "none: retired is final"
	if n, ok := planMoves[p.Status]; ok {
		next = n
	}
	return Errorf(EInvalidTransition, "Plan %s (%s) is %s and cannot become %s; the only next status is %s.", p.ID, p.Code, p.Status, to, next)
}

// CheckTermsEditable returns nil when the plan's terms and prices may change: only while it
// is a draft, so no subscription ever sees the terms of its plan change.
func (p *Plan) CheckTermsEditable() error {
	if p.Status != PlanStatusDraft {
		return Errorf(EInvalidTransition, "Plan %s (%s) is %s; its terms and prices can change only while it is draft.", p.ID, p.Code, p.Status)
	}
	return nil
}

// component is what a price component type needs (amount, unit amount, tiers or package)
// and whether it is metered. Every field a component does not need must be null.
type component struct {
	amount, unitAmount, tiers, pkg, metric bool
	negative                               bool // amount < 0 (a reduction) rather than >= 0
}

var components = map[string]component{
	PriceRecurringFee: {amount: true},
	PriceSetupFee:     {amount: true},
	"minimum_spend":   {amount: true},
	PriceDiscount:     {amount: true, negative: true},
	PriceCredit:       {amount: true, negative: true},
	"per_unit":        {metric: true, unitAmount: true},
	"tiered_usage":    {metric: true, tiers: true},
	"graduated_usage": {metric: true, tiers: true},
	"volume_usage":    {metric: true, tiers: true},
	"package_pricing": {metric: true, pkg: true},
}

// CheckPrice checks price against the rules of its component type (the table of the
// document's createPlan) and its metric against the product's metering metrics. at is the
// JSON pointer of the price in the request ("" for a whole body). The error is
// EUnprocessable naming every offending field.
func CheckPrice(price *Price, product *Product, at string) error {
	c, ok := components[price.ComponentType]
	if !ok {
		return fmt.Errorf("core: unknown price component type %q", price.ComponentType)
	}
	var fields []FieldError
	need := func(name string, present, needed bool) {
		switch {
		case needed && !present:
			fields = append(fields, unprocessableField(at+"/"+name, "required", fmt.Sprintf("A %s price needs %s.", price.ComponentType, name)))
		case !needed && present:
			fields = append(fields, unprocessableField(at+"/"+name, "not_allowed", fmt.Sprintf("A %s price has no %s; send null or leave it out.", price.ComponentType, name)))
		}
	}
	need("metric", price.Metric != nil, c.metric)
	need("amount", price.Amount != nil, c.amount)
	need("unit_amount", price.UnitAmount != nil, c.unitAmount)
	need("tiers", price.Tiers != nil, c.tiers)
	need("package_size", price.PackageSize != nil, c.pkg)
	need("package_amount", price.PackageAmount != nil, c.pkg)
	if a := price.Amount; a != nil && c.amount && (*a < 0) != c.negative {
		sign := "at least 0"
		if c.negative {
			sign = "below 0 (a reduction)"
		}
		fields = append(fields, unprocessableField(at+"/amount", "out_of_range", fmt.Sprintf("The amount of a %s price is %s.", price.ComponentType, sign)))
	}
	if price.Metric != nil && !slices.Contains(product.MeteringMetrics, *price.Metric) {
		fields = append(fields, unknownMetric(at+"/metric", *price.Metric, product))
	}
	if c.tiers && price.Tiers != nil {
		fields = append(fields, checkTiers(price.Tiers, at+"/tiers")...)
	}
	return unprocessableFields(fields)
}

// checkTiers: upper bounds ascend strictly, and only the last tier is open (null).
func checkTiers(tiers []PriceTier, at string) []FieldError {
	var fields []FieldError
	for i, t := range tiers {
		last := i == len(tiers)-1
		switch {
		case last && t.UpperBound != nil:
			fields = append(fields, unprocessableField(fmt.Sprintf("%s/%d/upper_bound", at, i), "last_tier_bounded", "The last tier's upper_bound is null: it takes all usage beyond the others."))
		case !last && t.UpperBound == nil:
			fields = append(fields, unprocessableField(fmt.Sprintf("%s/%d/upper_bound", at, i), "open_tier_not_last", "Only the last tier may have a null upper_bound."))
		case !last && i > 0 && tiers[i-1].UpperBound != nil && *t.UpperBound <= *tiers[i-1].UpperBound:
			fields = append(fields, unprocessableField(fmt.Sprintf("%s/%d/upper_bound", at, i), "not_ascending", "Tiers' upper_bounds ascend strictly."))
		}
	}
	return fields
}

// CheckPlanTerms checks that every metric of the plan's included usage and overage rules is
// one of the product's metering metrics (EUnprocessable otherwise).
func CheckPlanTerms(plan *Plan, product *Product) error {
	var fields []FieldError
	for i, u := range plan.IncludedUsage {
		if !slices.Contains(product.MeteringMetrics, u.Metric) {
			fields = append(fields, unknownMetric(fmt.Sprintf("/included_usage/%d/metric", i), u.Metric, product))
		}
	}
	for i, r := range plan.OverageRules {
		if !slices.Contains(product.MeteringMetrics, r.Metric) {
			fields = append(fields, unknownMetric(fmt.Sprintf("/overage_rules/%d/metric", i), r.Metric, product))
		}
	}
	return unprocessableFields(fields)
}

// feeComponents pairs each fee of a plan with the price component that charges it. A
// minimum commitment may stand without a minimum_spend price (the seeded enterprise plan's
// commitment is its recurring fee); the fees may not.
var feeComponents = []struct {
	field, component string
	fee              func(*Plan) *int64
	priceOptional    bool
}{
	{"setup_fee", PriceSetupFee, func(p *Plan) *int64 { return p.SetupFee }, false},
	{"recurring_fee", PriceRecurringFee, func(p *Plan) *int64 { return p.RecurringFee }, false},
	{"minimum_commitment", "minimum_spend", func(p *Plan) *int64 { return p.MinimumCommitment }, true},
}

// CheckOffered checks that plan (with its prices) is whole enough to be offered, as every
// plan of the seeded catalogue is: at least one active price; each fee of the plan equal to
// the amount of its one active price component, or null when there is none; and no recurring
// fee on a plan without a recurring period. EUnprocessable names every problem.
func CheckOffered(plan *Plan) error {
	var fields []FieldError
	active := 0
	for _, p := range plan.Prices {
		if p.Status == PriceActive {
			active++
		}
	}
	if active == 0 {
		fields = append(fields, unprocessableField("/status", "no_active_price", fmt.Sprintf("Plan %s has no active price; add one before offering it.", plan.Code)))
	}
	for _, f := range feeComponents {
		var amounts []int64
		for _, p := range plan.Prices {
			if p.Status == PriceActive && p.ComponentType == f.component && p.Amount != nil {
				amounts = append(amounts, *p.Amount)
			}
		}
		fee := f.fee(plan)
		switch {
		case len(amounts) > 1:
			fields = append(fields, unprocessableField("/status", "duplicate_"+f.component, fmt.Sprintf("Plan %s has %d active %s prices; it may have one.", plan.Code, len(amounts), f.component)))
		case len(amounts) == 0 && fee != nil && !f.priceOptional:
			fields = append(fields, unprocessableField("/"+f.field, "fee_without_price", fmt.Sprintf("%s is %d but the plan has no active %s price.", f.field, *fee, f.component)))
		case len(amounts) == 1 && (fee == nil || *fee != amounts[0]):
			fields = append(fields, unprocessableField("/"+f.field, "fee_differs_from_price", fmt.Sprintf("%s must equal the amount of the plan's active %s price (%d).", f.field, f.component, amounts[0])))
		}
	}
	if plan.RecurringFee != nil && (plan.BillingPeriod == BillingPeriodUsageOnly || plan.BillingPeriod == BillingPeriodOneTime) {
		fields = append(fields, unprocessableField("/recurring_fee", "no_recurring_period", fmt.Sprintf("A %s plan has no recurring fee.", plan.BillingPeriod)))
	}
	return unprocessableFields(fields)
}

func unknownMetric(pointer, metric string, product *Product) FieldError {
	return unprocessableField(pointer, "unknown_metric", fmt.Sprintf("Metric %q is not one of product %s's metering_metrics %v.", metric, product.Code, product.MeteringMetrics))
}

func unprocessableField(pointer, code, message string) FieldError {
	return FieldError{Location: "body", Pointer: pointer, Code: code, Message: message}
}

func unprocessableFields(fields []FieldError) error {
	if len(fields) == 0 {
		return nil
	}
	return &Error{Code: EUnprocessable, Message: fields[0].Message, Fields: fields}
}

// ProductCreate is a new product of the catalogue.
type ProductCreate struct {
	Code, NameAr, NameEn, Description                         string
	Category, ServiceClassification, RegulatoryClassification string
	Availability, ProvisioningWorkflow, TerminationPolicy     string
	RequiredDocuments, RequiredApprovals, RequiredCredentials []string
	MeteringMetrics                                           []string
	BillingModel                                              string
}

// ProductUpdate is a partial update of a product; nil fields stay as they are.
type ProductUpdate struct {
	NameAr, NameEn, Description, Availability *string
}

// Apply returns product with u applied.
func (u ProductUpdate) Apply(product Product) Product {
	setIf(&product.NameAr, u.NameAr)
	setIf(&product.NameEn, u.NameEn)
	setIf(&product.Description, u.Description)
	setIf(&product.Availability, u.Availability)
	return product
}

// PlanCreate is a new plan with its prices (each a Price without ids, times, plan, currency
// or status: the plan's currency, active).
type PlanCreate struct {
	ProductID          uuid.UUID
	Code, Name         string
	BillingPeriod      string
	Currency           string
	SetupFee           *int64
	RecurringFee       *int64
	MinimumCommitment  *int64
	IncludedUsage      []IncludedUsage
	OverageRules       []OverageRule
	TrialPolicy        *TrialPolicy
	TaxPolicyReference *string
	Prices             []*Price
}

// PlanUpdate is a partial update of a plan; unset fields stay as they are. Every field but
// Status needs a draft plan.
type PlanUpdate struct {
	Name               *string
	BillingPeriod      *string
	SetupFee           Field[int64]
	RecurringFee       Field[int64]
	MinimumCommitment  Field[int64]
	IncludedUsage      *[]IncludedUsage
	OverageRules       *[]OverageRule
	TrialPolicy        Field[TrialPolicy]
	TaxPolicyReference Field[string]
	Status             *string
}

// EditsTerms reports whether u changes anything but the status.
func (u PlanUpdate) EditsTerms() bool {
	return u.Name != nil || u.BillingPeriod != nil || u.SetupFee.Set || u.RecurringFee.Set || u.MinimumCommitment.Set ||
		u.IncludedUsage != nil || u.OverageRules != nil || u.TrialPolicy.Set || u.TaxPolicyReference.Set
}

// ApplyTerms returns plan with the terms of u applied (the status is left alone).
func (u PlanUpdate) ApplyTerms(plan Plan) Plan {
	setIf(&plan.Name, u.Name)
	setIf(&plan.BillingPeriod, u.BillingPeriod)
	setField(&plan.SetupFee, u.SetupFee)
	setField(&plan.RecurringFee, u.RecurringFee)
	setField(&plan.MinimumCommitment, u.MinimumCommitment)
	setIf(&plan.IncludedUsage, u.IncludedUsage)
	setIf(&plan.OverageRules, u.OverageRules)
	setField(&plan.TrialPolicy, u.TrialPolicy)
	setField(&plan.TaxPolicyReference, u.TaxPolicyReference)
	return plan
}

// PriceUpdate is a partial update of a price of a draft plan; unset fields stay as they are.
type PriceUpdate struct {
	Metric        Field[string]
	TaxTreatment  *string
	Amount        Field[int64]
	UnitAmount    Field[int64]
	Tiers         Field[[]PriceTier]
	PackageSize   Field[int64]
	PackageAmount Field[int64]
	Status        *string
}

// Apply returns price with u applied.
func (u PriceUpdate) Apply(price Price) Price {
	setField(&price.Metric, u.Metric)
	setIf(&price.TaxTreatment, u.TaxTreatment)
	setField(&price.Amount, u.Amount)
	setField(&price.UnitAmount, u.UnitAmount)
	setField(&price.PackageSize, u.PackageSize)
	setField(&price.PackageAmount, u.PackageAmount)
	setIf(&price.Status, u.Status)
	if u.Tiers.Set {
		price.Tiers = nil
		if u.Tiers.Value != nil {
			price.Tiers = *u.Tiers.Value
		}
	}
	return price
}

func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

func setField[T any](dst **T, f Field[T]) {
	if f.Set {
		*dst = f.Value
	}
}

// CatalogueAdministration changes the catalogue. Every method is the operator's only: an
// organization principal gets EForbidden and nothing changes. Every change raises the
// catalogue version in its transaction, is audited, and tells the organizations it concerns
// (see the document's WebhookEventType).
type CatalogueAdministration interface {
	// CreateProduct adds a product: EConflict when its code is taken.
	CreateProduct(ctx context.Context, in ProductCreate) (*Product, error)
	// UpdateProduct changes a product: ENotFound. A change to nothing changes nothing.
	UpdateProduct(ctx context.Context, id uuid.UUID, in ProductUpdate) (*Product, error)
	// CreatePlan adds a draft plan with its prices: EUnprocessable for an unknown product or
	// a price or metric its rules refuse, EConflict when the code is taken.
	CreatePlan(ctx context.Context, in PlanCreate) (*Plan, error)
	// UpdatePlan edits a draft plan's terms and/or moves its status: ENotFound,
	// EInvalidTransition (terms of a plan that is not draft, or a move the table refuses),
	// EUnprocessable (terms, or a plan not whole enough to be offered). Retiring makes
	// every price inactive.
	UpdatePlan(ctx context.Context, id uuid.UUID, in PlanUpdate) (*Plan, error)
	// CreatePrice adds an active price to a draft plan: ENotFound, EInvalidTransition,
	// EUnprocessable.
	CreatePrice(ctx context.Context, planID uuid.UUID, in *Price) (*Price, error)
	// UpdatePrice edits a price of a draft plan: ENotFound (also for a price of another
	// plan), EInvalidTransition, EUnprocessable.
	UpdatePrice(ctx context.Context, planID, priceID uuid.UUID, in PriceUpdate) (*Price, error)
}
