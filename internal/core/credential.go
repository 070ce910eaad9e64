package core

import (
	"context"
	"net/netip"
	"time"
)

// AccessTokenLifetime is how long an OAuth access token lives.
const AccessTokenLifetime = time.Hour

// TokenRequest is a client-credentials grant: the client is an API key.
type TokenRequest struct {
	ClientID     string // the key's prefix or id
	ClientSecret string
	Scope        *string // space-separated; nil: every scope of the key
	// Admit, when set, refuses a client whose key's restrictions forbid the request
	// (address, origin, environment): no token is issued then, with Admit's error.
	Admit func(*Restrictions) error
}

// AccessToken is an issued token.
type AccessToken struct {
	Token  string
	Scopes []string
	// ExpiresIn is AccessTokenLifetime, or less when the key expires sooner: the token
	// dies with its key.
	ExpiresIn time.Duration
}

// CredentialService authenticates bearer credentials and issues OAuth tokens.
type CredentialService interface {
	// Authenticate resolves an API key or an access token to its principal, with the
	// key's restrictions. Unknown, revoked or expired credentials are EUnauthenticated.
	Authenticate(ctx context.Context, bearer string) (*Principal, error)
	// IssueToken grants a token for a client-credentials request. Its errors carry the
	// RFC 6749 §5.2 codes (EInvalidClient, EInvalidScope …).
	IssueToken(ctx context.Context, in TokenRequest) (*AccessToken, error)
}

// Restrictions are the rules of the API key behind a principal, enforced per request.
type Restrictions struct {
	Environment     string         // sandbox or production
	AllowedIPs      []netip.Prefix // empty: any address
	AllowedOrigins  []string       // empty: any Origin
	RateLimitPolicy string         // a key of RateLimitPolicies
}
