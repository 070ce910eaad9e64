package core

import (
	"context"
	"time"

	"github.com/google/uuid"
)

const (
	// OperatorTokenPrefix starts every operator token.
	OperatorTokenPrefix = "op_"
	operatorTokenBytes  = 30 // 48 characters, 240 bits
)

// NewOperatorToken returns a fresh operator token.
func NewOperatorToken() string { return OperatorTokenPrefix + randomString(operatorTokenBytes) }

// OperatorToken is a credential of the provider's staff (docs/design.md, "Credentials and principals": the production
// operator access). The token itself is shown once, when minted; only its hash is kept.
type OperatorToken struct {
	ID         uuid.UUID
	Name       string
	CreatedAt  time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
}

// OperatorTokenService mints, lists, revokes and checks operator tokens. It is used by the
// `coreapi operator-token` command and the request authenticator, not by any operation of
// the API.
type OperatorTokenService interface {
	// Mint creates a token named name and returns it with the token, which is never
	// retrievable again.
	Mint(ctx context.Context, name string) (*OperatorToken, string, error)
	// List returns every token, revoked ones included, oldest first.
	List(ctx context.Context) ([]OperatorToken, error)
	// Revoke stops a token from authenticating; ENotFound for an unknown id.
	Revoke(ctx context.Context, id uuid.UUID) (*OperatorToken, error)
	// Authenticate returns the live token of bearer, or EUnauthenticated.
	Authenticate(ctx context.Context, bearer string) (*OperatorToken, error)
}
