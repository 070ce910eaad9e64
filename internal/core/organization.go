package core

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"
)

// Defaults for the optional statuses of a new organization: a new customer is unverified,
// carries no risk flag, keeps its data in Saudi Arabia and waits for activation.
const (
	DefaultVerificationStatus  = "unverified"
	DefaultRiskStatus          = "normal"
	DefaultDataResidencyPolicy = "sa_only"
	DefaultLifecycleStatus     = "pending"
)

// Organization is a customer account: the tenant every other resource belongs to. The JSON
// form is its audit summary.
type Organization struct {
	ID                              uuid.UUID `json:"id"`
	CreatedAt                       time.Time `json:"created_at"`
	UpdatedAt                       time.Time `json:"updated_at"`
	LegalNameAr                     string    `json:"legal_name_ar"`
	LegalNameEn                     string    `json:"legal_name_en"`
	DisplayName                     string    `json:"display_name"`
	OrganizationType                string    `json:"organization_type"`
	Country                         string    `json:"country"`
	CommercialRegistrationReference *string   `json:"commercial_registration_reference"`
	VatReference                    *string   `json:"vat_reference"`
	NationalAddressReference        *string   `json:"national_address_reference"`
	VerificationStatus              string    `json:"verification_status"`
	RiskStatus                      string    `json:"risk_status"`
	DataResidencyPolicy             string    `json:"data_residency_policy"`
	LifecycleStatus                 string    `json:"lifecycle_status"`
}

// IsPlatform reports whether the organization was created in Platform mode and may therefore
// create connected businesses.
func (o *Organization) IsPlatform() bool {
	return o.OrganizationType == "reseller" || o.OrganizationType == "white_label_tenant"
}

// EndsSubscriptions reports whether the move from before to o ends the organization's
// subscriptions: a terminated organization is final (archiving aside), so its live
// subscriptions are terminated with it, as the operator's terminate does, and nothing of it
// renews or is billed afterwards.
func (o *Organization) EndsSubscriptions(before *Organization) bool {
	return o.LifecycleStatus == LifecycleTerminated && before.LifecycleStatus != LifecycleTerminated
}

// OrganizationCreate is the input of OrganizationService.CreateOrganization. Empty status
// fields take the defaults above.
type OrganizationCreate struct {
	LegalNameAr, LegalNameEn        string
	DisplayName                     string
	OrganizationType                string
	Country                         string
	CommercialRegistrationReference *string
	VatReference                    *string
	NationalAddressReference        *string
	VerificationStatus              string
	RiskStatus                      string
	DataResidencyPolicy             string
	LifecycleStatus                 string
}

// OrganizationService manages organizations.
type OrganizationService interface {
	// CreateOrganization creates an organization. Only the operator may: an organization
	// principal gets EForbidden.
	CreateOrganization(ctx context.Context, in OrganizationCreate) (*Organization, error)
	// FindOrganizationByID returns the organization, or ENotFound when it does not exist or
	// the principal may not see it (no existence leak across tenants).
	FindOrganizationByID(ctx context.Context, id uuid.UUID) (*Organization, error)
	// UpdateOrganization applies a partial update (Organization.Apply) under a row lock, with
	// its audit event and organization.updated in one transaction; an update that changes
	// nothing writes nothing, updated_at included. Terminating the organization terminates
	// its live subscriptions in the same transaction (Organization.EndsSubscriptions). Returns ENotFound as FindOrganizationByID,
	// EForbidden for a connected-business credential or an organization sending an
	// operator-only field, and EInvalidTransition.
	UpdateOrganization(ctx context.Context, id uuid.UUID, in OrganizationUpdate) (*Organization, error)
}

// OrganizationUpdate is a partial update; unset fields stay as they are. The names and
// references are the organization's own to change; the statuses and the data residency
// policy are the operator's.
type OrganizationUpdate struct {
	LegalNameAr, LegalNameEn, DisplayName                                   Field[string]
	CommercialRegistrationReference, VatReference, NationalAddressReference Field[string]
	LifecycleStatus, VerificationStatus, RiskStatus, DataResidencyPolicy    Field[string]
}

// moves maps each state of a family to the states it may move to; a state it does not list
// moves nowhere. A nil moves lets any state move to any other.
type moves map[string][]string

// Organization transitions (docs/design.md, "Organization administration"). Risk and data
// residency have none: the operator sets any value from any other.
var (
	organizationLifecycleMoves = moves{
		"pending":    {"active", "terminated"},
		"active":     {"suspended", "terminated"},
		"suspended":  {"active", "terminated"},
		"terminated": {"archived"},
	}
	organizationVerificationMoves = moves{
		"unverified":     {"pending_review"},
		"pending_review": {"verified", "rejected"},
		"rejected":       {"pending_review"},
	}
)

// operatorField is one operator-only field of an organization: its name in the API, the
// requested value, the organization's value and the family's moves.
type operatorField struct {
	name    string
	to      Field[string]
	current *string
	moves   moves
}

func (o *Organization) operatorFields(in OrganizationUpdate) []operatorField {
	return []operatorField{
		{"lifecycle_status", in.LifecycleStatus, &o.LifecycleStatus, organizationLifecycleMoves},
		{"verification_status", in.VerificationStatus, &o.VerificationStatus, organizationVerificationMoves},
		{"risk_status", in.RiskStatus, &o.RiskStatus, nil},
		{"data_residency_policy", in.DataResidencyPolicy, &o.DataResidencyPolicy, nil},
	}
}

// Apply checks the update by actor (an actor type, see Principal.ActorType) and, when it is
// allowed, applies it to o and reports whether anything changed. Only the operator may send
// an operator-only field (EForbidden naming every one sent, whatever its value); a status
// may move only along its family's transitions (EInvalidTransition naming the field, the
// current and the requested value); a status sent with its current value is no move. A
// refused update leaves o as it was. Apply does not touch UpdatedAt.
func (o *Organization) Apply(in OrganizationUpdate, actor string) (changed bool, err error) {
	fields := o.operatorFields(in)
	if err := checkOperatorOnly(fields, actor); err != nil {
		return false, err
	}
	for _, f := range fields {
		if f.to.Set && f.to.Value != nil {
			if err := f.moves.check(o.ID, f.name, *f.current, *f.to.Value); err != nil {
				return false, err
			}
		}
	}
	for _, f := range fields {
		changed = setValue(f.current, f.to) || changed
	}
	changed = setValue(&o.LegalNameAr, in.LegalNameAr) || changed
	changed = setValue(&o.LegalNameEn, in.LegalNameEn) || changed
	changed = setValue(&o.DisplayName, in.DisplayName) || changed
	changed = setNullable(&o.CommercialRegistrationReference, in.CommercialRegistrationReference) || changed
	changed = setNullable(&o.VatReference, in.VatReference) || changed
	changed = setNullable(&o.NationalAddressReference, in.NationalAddressReference) || changed
	return changed, nil
}

// checkOperatorOnly refuses every operator-only field an actor other than the operator sent.
func checkOperatorOnly(fields []operatorField, actor string) error {
	if actor == ActorOperator {
		return nil
	}
	var sent []FieldError
	for _, f := range fields {
		if f.to.Set {
			sent = append(sent, FieldError{Location: "body", Pointer: "/" + f.name, Code: "forbidden", Message: "Only the operator may change " + f.name + "."})
		}
	}
	if len(sent) == 0 {
		return nil
	}
	return &Error{Code: EForbidden, Fields: sent,
		Message: "Only the operator may change an organization's lifecycle_status, verification_status, risk_status or data_residency_policy."}
}

// check returns nil when field of organization id may move from one value to another.
func (m moves) check(id uuid.UUID, field, from, to string) error {
	if m == nil || from == to || slices.Contains(m[from], to) {
		return nil
	}
	allowed := "nothing: " + from + " is final"
	if next := m[from]; len(next) > 0 {
		allowed = orList(next)
	}
	return Errorf(EInvalidTransition, "Cannot change %s of organization %s from %s to %s; from %s it may become %s.",
		field, id, from, to, from, allowed)
}

// setValue sets *dst to the value f carries, if any (null is no value: the document forbids
// it for these fields), and reports whether *dst changed.
func setValue(dst *string, f Field[string]) bool {
	if !f.Set || f.Value == nil || *f.Value == *dst {
		return false
	}
	*dst = *f.Value
	return true
}

// setNullable sets *dst to the value or null f carries, if set, and reports whether *dst
// changed.
func setNullable(dst **string, f Field[string]) bool {
	if !f.Set || equalPtr(*dst, f.Value) {
		return false
	}
	*dst = f.Value
	return true
}
