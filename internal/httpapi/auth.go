package httpapi

import (
	"context"
	"net/http"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/core"
)

// Authenticator turns the credential of a request into a principal. It returns an
// EUnauthenticated error for a missing, unknown, expired or revoked credential.
type Authenticator interface {
	Authenticate(ctx context.Context, r *http.Request) (*core.Principal, error)
}

// bearer returns the token of an `Authorization: Bearer <token>` header.
func bearer(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// bearerAuthenticator accepts API keys, OAuth access tokens and operator tokens (minted by
// `coreapi operator-token`; the operator with every scope), and in development mode the
// development tokens of docs/design.md, "Credentials and principals": `dev:operator` is the operator and
// `dev:org:<organization id>` that organization, both with every scope.
type bearerAuthenticator struct {
	development bool
	allScopes   map[string]bool
	credentials core.CredentialService
	operators   core.OperatorTokenService
	// organizations confirms that a development token names an existing organization
	// (nil: none is accepted); known remembers those it confirmed.
	organizations core.OrganizationService
	known         sync.Map // uuid.UUID -> struct{}
}

var errNoCredential = core.Errorf(core.EUnauthenticated, "An `Authorization: Bearer <token>` header is required.")

// Authenticate implements Authenticator.
func (a *bearerAuthenticator) Authenticate(ctx context.Context, r *http.Request) (*core.Principal, error) {
	token, ok := bearer(r)
	if !ok {
		return nil, errNoCredential
	}
	if strings.HasPrefix(token, "dev:") {
		p := a.developmentPrincipal(token)
		if p == nil {
			return nil, core.Errorf(core.EUnauthenticated, "The bearer credential is not valid.")
		}
		if p.Kind == core.PrincipalOrganization {
			if err := a.organizationExists(ctx, p.OrganizationID); err != nil {
				return nil, err
			}
		}
		return p, nil
	}
	if strings.HasPrefix(token, core.OperatorTokenPrefix) && a.operators != nil {
		op, err := a.operators.Authenticate(ctx, token)
		if err != nil {
			return nil, err
		}
		return &core.Principal{Kind: core.PrincipalOperator, Subject: "operator_token:" + op.ID.String(), Scopes: a.allScopes}, nil
	}
	return a.credentials.Authenticate(ctx, token)
}

func (a *bearerAuthenticator) developmentPrincipal(token string) *core.Principal {
	if !a.development {
		return nil
	}
	if token == "dev:operator" {
		return &core.Principal{Kind: core.PrincipalOperator, Subject: token, Scopes: a.allScopes}
	}
	rest, ok := strings.CutPrefix(token, "dev:org:")
	if !ok || len(rest) != 36 {
		return nil
	}
	id, err := uuid.Parse(rest)
	if err != nil {
		return nil
	}
	return &core.Principal{Kind: core.PrincipalOrganization, OrganizationID: id, Subject: token, Scopes: a.allScopes}
}

// organizationExists refuses a development token naming no organization, as any unknown
// credential is refused: otherwise it reaches every handler as a tenant nobody created.
func (a *bearerAuthenticator) organizationExists(ctx context.Context, id uuid.UUID) error {
	if _, ok := a.known.Load(id); ok {
		return nil
	}
	if a.organizations == nil {
		return core.Errorf(core.EUnauthenticated, "The bearer credential is not valid.")
	}
	operator := &core.Principal{Kind: core.PrincipalOperator, Subject: "dev:operator"}
	_, err := a.organizations.FindOrganizationByID(core.WithPrincipal(ctx, operator), id)
	switch core.ErrorCode(err) {
	case "":
		a.known.Store(id, struct{}{})
		return nil
	case core.ENotFound:
		return core.Errorf(core.EUnauthenticated, "The bearer credential is not valid.")
	}
	return err
}
