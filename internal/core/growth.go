package core

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// GrowthEvent is one funnel analytics event. OrganizationID is free text (1..200) as the
// specification gives it, so the operator can record traffic of visitors who have no
// organization yet; an organization principal may only record events under its own id.
// It is the key GrowthOrganizationIn resolved.
type GrowthEvent struct {
	EventName           string
	OrganizationID      string
	OccurredAt          time.Time // zero: now
	AnonymousID         *string
	Product             *string
	TrafficType         string // empty: public
	Source              *string
	Medium              *string
	Campaign            *string
	LandingPage         *string
	PagePath            *string
	Language            *string
	DeviceClass         *string
	UseCase             *string
	DeveloperLanguage   *string
	ExperimentID        *string
	ExperimentVariant   *string
	ElapsedFromSignupMs *int64
	Properties          json.RawMessage // a flat JSON object; nil means {}
}

// DefaultTrafficType is the traffic type of an event that names none.
const DefaultTrafficType = "public"

// TrafficTypes lists every traffic type; InternalTrafficTypes are left out of the growth
// summary unless asked for, because they are the provider's own traffic, not the market's.
var (
	TrafficTypes         = []string{"public", "real_customer", "sandbox_customer", "employee", "internal", "synthetic", "automated_qa", "load_test"}
	InternalTrafficTypes = map[string]bool{"employee": true, "internal": true, "synthetic": true, "automated_qa": true, "load_test": true}
)

// GrowthEventNames lists every event name in the order of the document's GrowthEventName.
var GrowthEventNames = []string{
	"page_view", "product_view", "pricing_view", "docs_view", "tool_used", "signup_clicked",
	"signup_started", "email_verified", "organization_created", "product_selected",
	"sandbox_provisioned", "credential_created", "quickstart_opened", "first_request",
	"first_success", "webhook_created", "plan_selected", "payment_started",
	"subscription_active", "production_requested", "address_activated", "experiment_exposed",
}

// GrowthFunnel is the signup-to-active funnel, in order.
var GrowthFunnel = []string{
	"page_view", "signup_started", "organization_created", "sandbox_provisioned",
	"credential_created", "first_request", "first_success", "plan_selected", "subscription_active",
}

// DefaultGrowthWindow is how far back the summary looks when no since is given.
const DefaultGrowthWindow = 30 * 24 * time.Hour

// GrowthSummaryFilter selects the events of GrowthService.Summary.
type GrowthSummaryFilter struct {
	Since                  *time.Time // nil: DefaultGrowthWindow ago
	IncludeInternalTraffic bool
	OrganizationID         *string // as GrowthOrganizationIn resolved it; nil: every organization for the operator, its own for an organization
}

// GrowthSummary is growth analytics over [Since, Until].
type GrowthSummary struct {
	Since, Until            time.Time
	IncludedTrafficTypes    []string
	TotalEvents             int64
	UniqueOrganizations     int64
	UniqueAnonymousVisitors int64
	EventCounts             []GrowthCount // every event name, in GrowthEventNames order
	Funnel                  []GrowthFunnelStep
	ByProduct               []GrowthCount // largest first; events without a product left out
	BySource                []GrowthCount // largest first, at most MaxGrowthSources; Key nil: no source
}

// MaxGrowthSources bounds by_source: the long tail of sources is noise in a summary.
const MaxGrowthSources = 50

// GrowthCount is the number of events of one key (an event name, product or source).
type GrowthCount struct {
	Key   *string
	Count int64
}

// GrowthFunnelStep is one step of the funnel: Count distinct actors (the anonymous visitor
// when known, else the organization) and the conversion ratios, nil when undefined.
type GrowthFunnelStep struct {
	Position               int
	EventName              string
	Count                  int64
	ConversionFromPrevious *float64
	ConversionFromFirst    *float64
}

// GrowthService records growth events and summarises them.
type GrowthService interface {
	// RecordGrowthEvent stores an event durably before returning. An organization principal
	// naming another organization_id gets EForbidden.
	RecordGrowthEvent(ctx context.Context, e GrowthEvent) error
	// GrowthSummary summarises the events the caller may see.
	GrowthSummary(ctx context.Context, f GrowthSummaryFilter) (*GrowthSummary, error)
}

// GrowthOrganizationIn resolves the organization_id a growth request names (at field, as for
// OrganizationIn) to the key its events are stored and summarised under, once, at the
// transport edge. A UUID is keyed in its canonical form, so the per-organization summary
// finds events however the id was spelled; the operator may name any text, an organization
// principal only its own id (ActsForGrowth).
func GrowthOrganizationIn(ctx context.Context, raw, field string) (string, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return "", err
	}
	key := raw
	if id, err := uuid.Parse(raw); err == nil {
		key = id.String()
	}
	return key, p.ActsForGrowth(key, field)
}

// ActsForGrowth checks that p may record or read growth events under key, a key
// GrowthOrganizationIn resolved: the operator any, an organization principal only its own
// id (EForbidden otherwise, as ActsFor).
func (p *Principal) ActsForGrowth(key, field string) error {
	if !p.IsOperator() && key != p.OrganizationID.String() {
		return notOwnOrganization(field)
	}
	return nil
}
