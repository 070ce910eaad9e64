package core

import (
	"context"
	"strings"

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

// OrganizationFor resolves an organization id sent in a body or query to the organization
// p acts for. field names it: a JSON pointer ("/organization_id") for a body field, the
// parameter name for a query parameter. An organization principal may only name its own:
// anything else is EForbidden, never a success. The operator may name any well-formed id;
// whether that organization exists is the caller's to check.
func (p *Principal) OrganizationFor(raw, field string) (uuid.UUID, error) {
	id, err := uuid.Parse(raw)
	if err != nil {
		if p.IsOperator() {
			return uuid.Nil, Errorf(EUnprocessable, "Organization %q does not exist.", raw)
		}
		return uuid.Nil, notOwnOrganization(field)
	}
	return id, p.ActsFor(id, field)
}

// ActsFor checks that p may act for organization id, named by a request at field (as for
// OrganizationFor): the operator for any, an organization principal for its own only.
func (p *Principal) ActsFor(id uuid.UUID, field string) error {
	if !p.IsOperator() && id != p.OrganizationID {
		return notOwnOrganization(field)
	}
	return nil
}

func notOwnOrganization(field string) error {
	location := "query"
	if strings.HasPrefix(field, "/") {
		location = "body"
	}
	return &Error{Code: EForbidden,
		Message: "The credential may only act for its own organization.",
		Fields:  []FieldError{{Location: location, Pointer: field, Code: "forbidden", Message: "Not the caller's organization."}}}
}

// OrganizationIn is OrganizationFor for the principal of ctx: the transport parses an
// organization id a request names with it, once, and hands the domain a uuid.UUID.
func OrganizationIn(ctx context.Context, raw, field string) (uuid.UUID, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return uuid.Nil, err
	}
	return p.OrganizationFor(raw, field)
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
