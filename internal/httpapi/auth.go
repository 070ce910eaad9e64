package httpapi

import (
	"context"
	"net/http"
	"strings"

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
}

var errNoCredential = core.Errorf(core.EUnauthenticated, "An `Authorization: Bearer <token>` header is required.")

// Authenticate implements Authenticator.
func (a *bearerAuthenticator) Authenticate(ctx context.Context, r *http.Request) (*core.Principal, error) {
	token, ok := bearer(r)
	if !ok {
		return nil, errNoCredential
	}
	if strings.HasPrefix(token, "dev:") {
		if p := a.developmentPrincipal(token); p != nil {
			return p, nil
		}
		return nil, core.Errorf(core.EUnauthenticated, "The bearer credential is not valid.")
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
