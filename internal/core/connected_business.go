package core

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Connected business lifecycle: any state moves to any other, closed included (the
// specification's transition table). A suspended or closed business gets no new credentials
// and its existing ones stop authenticating; they are not revoked, so they work again once
// the business is active (the one rule is
// BusinessAllowsCredentials). Only the operator may change a suspension or closure it made.
const (
	BusinessActive    = "active"
	BusinessSuspended = "suspended"
	BusinessClosed    = "closed"
)

// SandboxProducts are the products a connected business gets a sandbox resource for.
var SandboxProducts = []string{"einvoice", "address"}

// CredentialScopes are the scopes of a connected-business credential of each product: the
// product's own operations and nothing else.
var CredentialScopes = map[string][]string{
	"einvoice": {"invoice:generate"},
	"address":  {"address:read"},
}

// CapabilityID names the capability of a product's sandbox resource.
func CapabilityID(product string) string { return product + ".sandbox" }

// ConnectedBusiness is a downstream business of a platform organization.
type ConnectedBusiness struct {
	ID                              uuid.UUID `json:"id"`
	PlatformOrganizationID          uuid.UUID `json:"platform_organization_id"`
	CreatedAt                       time.Time `json:"created_at"`
	UpdatedAt                       time.Time `json:"updated_at"`
	ExternalReference               string    `json:"external_reference"`
	DisplayName                     string    `json:"display_name"`
	LegalNameAr                     *string   `json:"legal_name_ar"`
	LegalNameEn                     string    `json:"legal_name_en"`
	VatReference                    *string   `json:"vat_reference"`
	CommercialRegistrationReference *string   `json:"commercial_registration_reference"`
	NationalAddressReference        *string   `json:"national_address_reference"`
	LifecycleStatus                 string    `json:"lifecycle_status"`
	// LifecycleDecidedBy is the actor type (Principal.ActorType) that suspended or closed the
	// business; "" while it is active. Internal: the audit trail records it, the API's
	// business does not show it.
	LifecycleDecidedBy string            `json:"lifecycle_decided_by,omitempty"`
	Resources          []ServiceResource `json:"resources,omitempty"` // detail only
}

// ServiceResource is a sandbox resource of one product.
type ServiceResource struct {
	ID              uuid.UUID `json:"id"`
	Product         string    `json:"product"`
	CapabilityID    string    `json:"capability_id"`
	LifecycleStatus string    `json:"lifecycle_status"`
}

// ConnectedBusinessCreate is the input of ConnectedBusinessService.CreateConnectedBusiness.
type ConnectedBusinessCreate struct {
	ExternalReference               string
	DisplayName                     string
	LegalNameEn                     string
	LegalNameAr                     *string
	VatReference                    *string
	CommercialRegistrationReference *string
	NationalAddressReference        *string
	Products                        []string // empty: every sandbox product
}

// Field is an optional field of a partial update: Set says it was sent, and a nil Value
// means it was sent as null.
type Field[T any] struct {
	Set   bool
	Value *T
}

// ConnectedBusinessUpdate is a partial update; unset fields stay as they are.
type ConnectedBusinessUpdate struct {
	DisplayName     Field[string]
	LegalNameAr     Field[string]
	LegalNameEn     Field[string]
	VatReference    Field[string]
	LifecycleStatus Field[string]
}

// Apply checks the update by actor (an actor type, see Principal.ActorType) and, when it is
// allowed, applies it to cb and reports whether the business must be written. lifecycle_status
// moves from any state to any other, but while the operator's suspension or closure stands
// only the operator may send it (EForbidden). A body carrying lifecycle_status is always a
// write, even with the current status: the specification's transition table says updated_at
// changes. A refused update leaves cb as it was; Apply does not touch UpdatedAt.
func (cb *ConnectedBusiness) Apply(in ConnectedBusinessUpdate, actor string) (write bool, err error) {
	if status := in.LifecycleStatus; status.Set && status.Value != nil {
		if cb.LifecycleDecidedBy == ActorOperator && actor != ActorOperator {
			return false, Errorf(EForbidden, "Connected business %s was %s by the operator; only the operator can change its lifecycle_status.",
				cb.ID, cb.LifecycleStatus)
		}
		cb.LifecycleStatus, cb.LifecycleDecidedBy = *status.Value, actor
		if cb.LifecycleStatus == BusinessActive {
			cb.LifecycleDecidedBy = ""
		}
		write = true
	}
	write = setValue(&cb.DisplayName, in.DisplayName) || write
	write = setValue(&cb.LegalNameEn, in.LegalNameEn) || write
	write = setNullable(&cb.LegalNameAr, in.LegalNameAr) || write
	write = setNullable(&cb.VatReference, in.VatReference) || write
	return write, nil
}

// ConnectedBusinessCredential is a sandbox key of one business and product, shown once.
type ConnectedBusinessCredential struct {
	ID                  uuid.UUID
	Prefix              string
	FullKey             string
	Product             string
	ConnectedBusinessID uuid.UUID
	ServiceResourceID   uuid.UUID
}

// ConnectedBusinessService manages the connected businesses of platform organizations.
type ConnectedBusinessService interface {
	// CreateConnectedBusiness creates a business of the caller's organization and one
	// sandbox resource per product, in one transaction. Only platform organizations may
	// (EPlatformModeRequired); a taken external_reference is EConflict.
	CreateConnectedBusiness(ctx context.Context, in ConnectedBusinessCreate) (*ConnectedBusiness, error)
	// ListConnectedBusinesses returns a page of the caller's businesses in creation order.
	ListConnectedBusinesses(ctx context.Context, cursor *uuid.UUID, limit int) ([]*ConnectedBusiness, *string, error)
	// FindConnectedBusinessByID returns a business with its resources.
	FindConnectedBusinessByID(ctx context.Context, id uuid.UUID) (*ConnectedBusiness, error)
	// UpdateConnectedBusiness applies a partial update (ConnectedBusiness.Apply), its
	// resources following the business's status: EForbidden when an organization would change
	// the operator's suspension or closure. A patch that changes nothing and carries no
	// lifecycle_status changes nothing, updated_at included.
	UpdateConnectedBusiness(ctx context.Context, id uuid.UUID, in ConnectedBusinessUpdate) (*ConnectedBusiness, error)
	// CreateCredential creates a sandbox key for one product of a business. core.Entitle
	// decides whether it may: EInvalidTransition for a business that is not active, the
	// organization's refusal codes (EOrganizationSuspended …) for its platform organization. A
	// product the business was not created with is EUnprocessable.
	CreateCredential(ctx context.Context, id uuid.UUID, product, name string) (*ConnectedBusinessCredential, error)
}
