package core

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Page sizes of keyset-paginated lists (docs/design.md, "Lists").
const (
	DefaultPageLimit = 50
	MaxPageLimit     = 200
)

// FilterScanRows bounds the rows one page of a filtered list of records that grow with traffic
// (request logs, audit events) examines: a page walks at most this many rows of the list's
// newest-first order below its cursor, keeps those its filters match, and when it found fewer
// than a page, continues with next_cursor from where it stopped. A filter matching nothing
// thus costs the same as one matching everything, however many rows an organization stores
// (docs/design.md, "Lists").
const FilterScanRows = 10_000

// Plan statuses. Only an active plan can be subscribed to or selected.
const (
	PlanStatusDraft      = "draft"
	PlanStatusActive     = "active"
	PlanStatusDeprecated = "deprecated"
	PlanStatusRetired    = "retired"
)

// ProductDeprecated is the availability of a product that existing subscriptions keep but
// no new subscription may name.
const ProductDeprecated = "deprecated"

// Plan billing periods.
const (
	BillingPeriodMonthly   = "monthly"
	BillingPeriodAnnual    = "annual"
	BillingPeriodUsageOnly = "usage_only"
	BillingPeriodOneTime   = "one_time"
)

// Price component types the billing arithmetic reads; the others describe usage pricing.
const (
	PriceRecurringFee = "recurring_fee"
	PriceSetupFee     = "setup_fee"
	PriceDiscount     = "discount"
	PriceCredit       = "credit"
)

// Product is a product of the catalogue. Plans is filled in by FindProductByID only.
type Product struct {
	ID                       uuid.UUID `json:"id"`
	CreatedAt                time.Time `json:"created_at"`
	UpdatedAt                time.Time `json:"updated_at"`
	Code                     string    `json:"code"`
	NameAr                   string    `json:"name_ar"`
	NameEn                   string    `json:"name_en"`
	Description              string    `json:"description"`
	Category                 string    `json:"category"`
	ServiceClassification    string    `json:"service_classification"`
	RegulatoryClassification string    `json:"regulatory_classification"`
	Availability             string    `json:"availability"`
	ProvisioningWorkflow     string    `json:"provisioning_workflow"`
	TerminationPolicy        string    `json:"termination_policy"`
	RequiredDocuments        []string  `json:"required_documents"`
	RequiredApprovals        []string  `json:"required_approvals"`
	RequiredCredentials      []string  `json:"required_credentials"`
	MeteringMetrics          []string  `json:"metering_metrics"`
	BillingModel             string    `json:"billing_model"`
	Plans                    []*Plan   `json:"-"`
}

// IncludedUsage is usage a plan includes per period.
type IncludedUsage struct {
	Metric   string  `json:"metric"`
	Quantity float64 `json:"quantity"`
}

// OverageRule prices usage beyond the included quantity.
type OverageRule struct {
	Metric    string `json:"metric"`
	UnitPrice int64  `json:"unit_price"`
}

// TrialPolicy is the trial of a plan.
type TrialPolicy struct {
	TrialDays             int  `json:"trial_days"`
	RequiresPaymentMethod bool `json:"requires_payment_method"`
}

// Plan is a plan of a product. Amounts are minor units of Currency; a fee is tax-exclusive
// unless the price component that carries it (CheckOffered) is tax-inclusive. Prices is
// filled in by ListPlans and by the billing arithmetic's callers.
type Plan struct {
	ID                 uuid.UUID       `json:"id"`
	CreatedAt          time.Time       `json:"created_at"`
	UpdatedAt          time.Time       `json:"updated_at"`
	ProductID          uuid.UUID       `json:"product_id"`
	Code               string          `json:"code"`
	Name               string          `json:"name"`
	BillingPeriod      string          `json:"billing_period"`
	Currency           string          `json:"currency"`
	SetupFee           *int64          `json:"setup_fee"`
	RecurringFee       *int64          `json:"recurring_fee"`
	MinimumCommitment  *int64          `json:"minimum_commitment"`
	IncludedUsage      []IncludedUsage `json:"included_usage"`
	OverageRules       []OverageRule   `json:"overage_rules"`
	TrialPolicy        *TrialPolicy    `json:"trial_policy"`
	TaxPolicyReference *string         `json:"tax_policy_reference"`
	Status             string          `json:"status"`
	Prices             []*Price        `json:"-"`
}

// PriceTier is one tier of a tiered, graduated or volume price.
type PriceTier struct {
	UpperBound *float64 `json:"upper_bound"`
	UnitAmount int64    `json:"unit_amount"`
	FlatAmount *int64   `json:"flat_amount"`
}

// Price is one price component of a plan.
type Price struct {
	ID            uuid.UUID   `json:"id"`
	CreatedAt     time.Time   `json:"created_at"`
	UpdatedAt     time.Time   `json:"updated_at"`
	PlanID        uuid.UUID   `json:"plan_id"`
	ComponentType string      `json:"component_type"`
	Metric        *string     `json:"metric"`
	Currency      string      `json:"currency"`
	TaxTreatment  string      `json:"tax_treatment"`
	Amount        *int64      `json:"amount"`
	UnitAmount    *int64      `json:"unit_amount"`
	Tiers         []PriceTier `json:"tiers"` // nil when the component has no tiers
	PackageSize   *int64      `json:"package_size"`
	PackageAmount *int64      `json:"package_amount"`
	Status        string      `json:"status"`
	// RetiredWithPlan: the price was active when its plan retired. Inactive, it sells
	// nothing, but still bills the subscriptions on the plan, whose terms never change.
	RetiredWithPlan bool `json:"-"`
}

// ProductFilter selects a page of products.
type ProductFilter struct {
	// Cursor is the NextCursor of the previous page; "" for the first page.
	Cursor string
	// Limit is the page size, 1..MaxPageLimit; 0 means DefaultPageLimit.
	Limit int
	// Audience is whose view of the catalogue the page is (CatalogueService.Audience).
	Audience CatalogueAudience
}

// ProductPage is one page of products. NextCursor is nil on the last page.
type ProductPage struct {
	Items      []*Product
	NextCursor *string
}

// PlanFilter selects plans.
type PlanFilter struct {
	// ProductID, when not nil, keeps the plans of that product.
	ProductID *uuid.UUID
	// Audience is whose view of the catalogue the plans are (CatalogueService.Audience).
	Audience CatalogueAudience
}

// CatalogueService reads the product catalogue, the provider's, as an audience sees it, and
// administers it.
type CatalogueService interface {
	CatalogueAdministration
	// Audience returns the view of the catalogue of the principal of ctx.
	Audience(ctx context.Context) (CatalogueAudience, error)
	// ListProducts returns a page of the products f.Audience sees, in id order. A cursor
	// that is not one this service issued is EValidation.
	ListProducts(ctx context.Context, f ProductFilter) (*ProductPage, error)
	// FindProductByID returns the product with the plans a sees (without prices), or
	// ENotFound, also when a does not see the product.
	FindProductByID(ctx context.Context, id uuid.UUID, a CatalogueAudience) (*Product, error)
	// ListPlans returns every matching plan f.Audience sees in id order, each with its prices.
	ListPlans(ctx context.Context, f PlanFilter) ([]*Plan, error)
	// Version returns the catalogue's version, raised by every change to products, plans or
	// prices. What is built from a read of the catalogue made after reading version V may
	// be reused while Version still returns V.
	Version(ctx context.Context) (int64, error)
}
