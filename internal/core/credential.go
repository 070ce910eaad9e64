package core

import (
	"context"
	"strings"
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

// TokenLifetime is how long a token issued from k at now lives: AccessTokenLifetime, or
// less when the key expires sooner, in whole seconds (a token lives no longer than its key,
// and says so). ok is false when the key has less than a second left: it is as good as
// expired, and gets no token.
func (k *APIKey) TokenLifetime(now time.Time) (lifetime time.Duration, ok bool) {
	lifetime = AccessTokenLifetime
	if k.ExpiresAt != nil {
		lifetime = min(lifetime, k.ExpiresAt.Sub(now).Truncate(time.Second))
	}
	return lifetime, lifetime >= time.Second
}

// TokenScopes are the scopes of a token issued from k for a request naming scope (space
// separated; nil: every scope of the key). A token narrows its key, never widens it: a
// scope the key does not hold, or an empty scope, is EInvalidScope. Repeated scopes count
// once.
func (k *APIKey) TokenScopes(scope *string) ([]string, error) {
	if scope == nil {
		return k.Scopes, nil
	}
	held := make(map[string]bool, len(k.Scopes))
	for _, sc := range k.Scopes {
		held[sc] = true
	}
	scopes := strings.Fields(*scope)
	for _, sc := range scopes {
		if !held[sc] {
			return nil, Errorf(EInvalidScope, "The client may not request scope %q.", sc)
		}
	}
	if len(scopes) == 0 {
		return nil, Errorf(EInvalidScope, "The scope parameter is empty.")
	}
	return dedupe(scopes), nil
}

func dedupe(s []string) []string {
	seen := make(map[string]bool, len(s))
	out := s[:0:0]
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
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
