package core

import (
	"context"

	"github.com/google/uuid"
)

// PrincipalKind says whose authority a request carries.
type PrincipalKind int

const (
	// PrincipalOrganization sees and changes only its own organization's data.
	PrincipalOrganization PrincipalKind = iota + 1
	// PrincipalOperator is the provider's staff: every organization.
	PrincipalOperator
)

// Principal is the authenticated caller of a request.
type Principal struct {
	Kind           PrincipalKind
	OrganizationID uuid.UUID // zero for the operator
	// Subject names the credential for audit fields such as created_by, e.g. "dev:operator"
	// or an API key id.
	Subject string
	// KeyPrefix is the public prefix of the API key behind the request, if any.
	KeyPrefix string
	// ConnectedBusinessID is set for a connected-business credential, which acts for one
	// business of its platform organization.
	ConnectedBusinessID *uuid.UUID
	Scopes              map[string]bool
	// APIKeyID is the key behind the request (directly or through an access token).
	APIKeyID *uuid.UUID
	// Restrictions of that key; nil for development and operator tokens.
	Restrictions *Restrictions
}

// ActorType is how audit records name the kind of principal.
func (p *Principal) ActorType() string {
	switch {
	case p.Kind == PrincipalOperator:
		return "operator"
	case p.ConnectedBusinessID != nil:
		return "connected_business"
	default:
		return "organization"
	}
}

// IsOperator reports whether p is the provider's operator.
func (p *Principal) IsOperator() bool { return p.Kind == PrincipalOperator }

// CanAccessOrganization reports whether p may see data of organization id.
func (p *Principal) CanAccessOrganization(id uuid.UUID) bool {
	return p.Kind == PrincipalOperator || p.OrganizationID == id
}

type principalKey struct{}

// WithPrincipal returns a context carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal of ctx. Services call it only behind authentication,
// so a missing principal is a wiring bug and is reported as unauthenticated, never as access.
func PrincipalFrom(ctx context.Context) (*Principal, error) {
	p, ok := ctx.Value(principalKey{}).(*Principal)
	if !ok {
		return nil, Errorf(EUnauthenticated, "A valid bearer credential is required.")
	}
	return p, nil
}
