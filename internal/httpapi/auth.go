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
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// DevAuthenticator accepts the development bearer tokens of DESIGN.md §3: `dev:operator` is
// the operator and `dev:org:<organization id>` that organization, both with every scope. It
// must only be wired in development mode.
type DevAuthenticator struct {
	// Scopes are granted to every development principal: all the document declares.
	Scopes map[string]bool
}

// Authenticate implements Authenticator.
func (a DevAuthenticator) Authenticate(_ context.Context, r *http.Request) (*core.Principal, error) {
	token, ok := bearer(r)
	if !ok {
		return nil, core.Errorf(core.EUnauthenticated, "An `Authorization: Bearer <token>` header is required.")
	}
	if token == "dev:operator" {
		return &core.Principal{Kind: core.PrincipalOperator, Subject: token, Scopes: a.Scopes}, nil
	}
	if rest, ok := strings.CutPrefix(token, "dev:org:"); ok {
		if id, err := uuid.Parse(rest); err == nil && len(rest) == 36 {
			return &core.Principal{Kind: core.PrincipalOrganization, OrganizationID: id, Subject: token, Scopes: a.Scopes}, nil
		}
	}
	return nil, core.Errorf(core.EUnauthenticated, "The bearer credential is not valid.")
}

// NoAuthenticator refuses every credential: production mode until real credentials exist.
type NoAuthenticator struct{}

// Authenticate implements Authenticator.
func (NoAuthenticator) Authenticate(context.Context, *http.Request) (*core.Principal, error) {
	return nil, core.Errorf(core.EUnauthenticated, "The bearer credential is not valid.")
}
