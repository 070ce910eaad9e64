package core

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// APIKey is a developer credential of one organization. Its secret is never stored; only
// NewAPIKey, at creation or rotation, carries it.
type APIKey struct {
	ID              uuid.UUID  `json:"id"`
	OrganizationID  uuid.UUID  `json:"organization_id"`
	CreatedAt       time.Time  `json:"created_at"`
	UpdatedAt       time.Time  `json:"updated_at"`
	Name            string     `json:"name"`
	Prefix          string     `json:"prefix"`
	Environment     string     `json:"environment"`
	Scopes          []string   `json:"scopes"`
	AllowedOrigins  []string   `json:"allowed_origins"`
	AllowedIPs      []string   `json:"allowed_ips"`
	RateLimitPolicy *string    `json:"rate_limit_policy"`
	CreatedBy       string     `json:"created_by"`
	LastUsedAt      *time.Time `json:"last_used_at"`
	ExpiresAt       *time.Time `json:"expires_at"`
	RevokedAt       *time.Time `json:"revoked_at"`
	// ReplacedBy is the key's replacement once it has been rotated.
	ReplacedBy *uuid.UUID `json:"replaced_by"`
	// ConnectedBusinessID is set on a connected-business credential.
	ConnectedBusinessID *uuid.UUID `json:"connected_business_id,omitempty"`
}

// Status derives the key's status at time now: revoked wins over expired.
func (k *APIKey) Status(now time.Time) string {
	switch {
	case k.RevokedAt != nil:
		return "revoked"
	case k.ExpiresAt != nil && !k.ExpiresAt.After(now):
		return "expired"
	default:
		return "active"
	}
}

// EAPIKeyAlreadyRotated: the key has a replacement already; rotate the replacement.
const EAPIKeyAlreadyRotated = "api_key_already_rotated"

// CheckUsable refuses a credential of k at now: a revoked or expired key, and a
// credential of a connected business whose status (businessStatus, nil for a key of no
// business) is not active (BusinessAllowsCredentials), are EUnauthenticated. Suspending the
// business stops its credentials; resuming it restores them.
func (k *APIKey) CheckUsable(now time.Time, businessStatus *string) error {
	switch k.Status(now) {
	case "revoked":
		return Errorf(EUnauthenticated, "The API key has been revoked.")
	case "expired":
		return Errorf(EUnauthenticated, "The API key has expired.")
	}
	if businessStatus != nil && !BusinessAllowsCredentials(*businessStatus) {
		return Errorf(EUnauthenticated, "The connected business of this credential is %s.", *businessStatus)
	}
	return nil
}

// CheckRotatable refuses to rotate k at now when it has a replacement already
// (EAPIKeyAlreadyRotated: one key has at most one successor, even during its grace period)
// or is not active (EConflict).
func (k *APIKey) CheckRotatable(now time.Time) error {
	if k.ReplacedBy != nil {
		return Errorf(EAPIKeyAlreadyRotated,
			"API key %s has been rotated already; its replacement is %s. Rotate the replacement instead.", k.ID, *k.ReplacedBy)
	}
	if status := k.Status(now); status != "active" {
		return Errorf(EConflict, "API key %s is %s; only an active key can be rotated.", k.ID, status)
	}
	return nil
}

// Principal is the caller a request authenticated by k acts as, holding scopes: the key's
// own, or those of an access token issued from it. It carries the key's Restrictions.
func (k *APIKey) Principal(scopes []string) (*Principal, error) {
	r, err := k.Restrictions()
	if err != nil {
		return nil, err
	}
	set := make(map[string]bool, len(scopes))
	for _, sc := range scopes {
		set[sc] = true
	}
	id := k.ID
	return &Principal{
		Kind:                PrincipalOrganization,
		OrganizationID:      k.OrganizationID,
		Subject:             "api_key:" + k.ID.String(),
		KeyPrefix:           k.Prefix,
		ConnectedBusinessID: k.ConnectedBusinessID,
		Scopes:              set,
		APIKeyID:            &id,
		Restrictions:        r,
	}, nil
}

// CheckKeyAuthority is the rule for creating, rotating and revoking a key (DESIGN.md §3: a
// credential never produces a credential with more power than itself). The caller must hold
// every scope of the key (EInsufficientScope naming the missing ones) and be allowed its
// environment: a sandbox credential handles only sandbox keys (EForbidden). An access token
// is held to its own scopes, not its key's, so a token narrowed to api-keys:write cannot act
// on the key it was issued from. The operator may do anything; action names what the caller
// tried ("create", "rotate", "revoke").
func CheckKeyAuthority(p *Principal, action, environment string, scopes []string) error {
	if p.IsOperator() {
		return nil
	}
	if r := p.Restrictions; r != nil && r.Environment != environment && r.Environment != "production" {
		return Errorf(EForbidden, "A %s credential cannot %s a %s key.", r.Environment, action, environment)
	}
	var missing []string
	for _, s := range scopes {
		if !p.Scopes[s] {
			missing = append(missing, s)
		}
	}
	switch {
	case len(missing) == 0:
		return nil
	case action == "create":
		return Errorf(EInsufficientScope, "A credential can only grant scopes it holds; missing: %s.", strings.Join(missing, ", "))
	default:
		return Errorf(EInsufficientScope, "A credential can only %s a key whose scopes it holds; missing: %s.", action, strings.Join(missing, ", "))
	}
}

// NewAPIKey is a key with its secret, shown once.
type NewAPIKey struct {
	APIKey
	Secret  string
	FullKey string
}

// APIKeyCreate is the input of APIKeyService.CreateAPIKey.
type APIKeyCreate struct {
	OrganizationID  uuid.UUID // one the caller may act for (Principal.ActsFor)
	Name            string
	Environment     string
	Scopes          []string
	AllowedOrigins  []string
	AllowedIPs      []string
	RateLimitPolicy *string
	ExpiresAt       *time.Time
}

// Validate checks what the document cannot express, at now: addresses and CIDR ranges,
// origins, policy names and a future expiry. It is EValidation with a field error for each
// offending value.
func (in *APIKeyCreate) Validate(now time.Time) error {
	var fields []FieldError
	bad := func(pointer, code, msg string) {
		fields = append(fields, FieldError{Location: "body", Pointer: pointer, Code: code, Message: msg})
	}
	for i, ip := range in.AllowedIPs {
		if _, err := ParseAllowedIP(ip); err != nil {
			bad(fmt.Sprintf("/allowed_ips/%d", i), "format", fmt.Sprintf("%q is not an IP address or CIDR range.", ip))
		}
	}
	for i, o := range in.AllowedOrigins {
		if !validOrigin(o) {
			bad(fmt.Sprintf("/allowed_origins/%d", i), "format", fmt.Sprintf("%q is not an origin such as https://app.example.com.", o))
		}
	}
	if in.RateLimitPolicy != nil {
		if _, ok := RateLimitPolicies[*in.RateLimitPolicy]; !ok {
			bad("/rate_limit_policy", "enum", fmt.Sprintf("%q is not a rate-limit policy (standard, strict).", *in.RateLimitPolicy))
		}
	}
	if in.ExpiresAt != nil && !in.ExpiresAt.After(now) {
		bad("/expires_at", "minimum", "expires_at must be in the future.")
	}
	if len(fields) == 0 {
		return nil
	}
	msg := fields[0].Message
	if len(fields) > 1 {
		msg = fmt.Sprintf("The request has %d invalid fields; see errors.", len(fields))
	}
	return &Error{Code: EValidation, Message: msg, Fields: fields}
}

// APIKeyFilter selects keys for APIKeyService.ListAPIKeys.
type APIKeyFilter struct {
	OrganizationID *uuid.UUID // nil: every key the caller may see
	Cursor         *string    // the next_cursor of the previous page
	Limit          int
}

// APIKeyService manages API keys. Every method enforces tenancy: an organization principal
// sees only its own keys (another's id is ENotFound, another organization_id EForbidden).
type APIKeyService interface {
	// CreateAPIKey creates a key. The caller is held to CheckKeyAuthority (EInsufficientScope,
	// EForbidden) and the organization to core.Entitle (its refusal codes). Invalid origins,
	// addresses, policies or expiry are EValidation naming the field.
	CreateAPIKey(ctx context.Context, in APIKeyCreate) (*NewAPIKey, error)
	// ListAPIKeys returns a page of keys in creation order and the cursor of the next page.
	ListAPIKeys(ctx context.Context, f APIKeyFilter) ([]*APIKey, *string, error)
	FindAPIKeyByID(ctx context.Context, id uuid.UUID) (*APIKey, error)
	// RevokeAPIKey revokes a key at once; revoking a revoked key changes nothing. The caller
	// is held to CheckKeyAuthority for the key (EInsufficientScope, EForbidden).
	RevokeAPIKey(ctx context.Context, id uuid.UUID) (*APIKey, error)
	// RotateAPIKey creates a replacement that inherits every binding of the key (scopes,
	// environment, restrictions, expiry, connected business and resource) and lets the old
	// key expire after grace (at once when zero). The caller is held to CheckKeyAuthority for
	// the key (EInsufficientScope, EForbidden). A key already rotated is
	// EAPIKeyAlreadyRotated, even in its grace period; any other key that is not active is
	// EConflict. The replacement is a new credential, so core.Entitle decides too: the
	// organization's refusal codes, and EInvalidTransition for a credential of a connected
	// business that is not active.
	RotateAPIKey(ctx context.Context, id uuid.UUID, grace time.Duration) (*NewAPIKey, error)
}

// Key material. A full key is `sk_<environment>_<id>_<secret>`: everything before the last
// underscore is the public prefix (it names the environment and identifies the key), the
// rest is the secret. Both random parts are lowercase base32, which has no underscore.
const (
	apiKeyIDBytes     = 8  // 13 characters
	apiKeySecretBytes = 25 // 40 characters, 200 bits
	accessTokenBytes  = 30 // 48 characters, 240 bits
	// AccessTokenPrefix starts every OAuth access token.
	AccessTokenPrefix = "at_"
)

var keyEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return keyEncoding.EncodeToString(b)
}

// NewKeyMaterial returns a fresh prefix and secret for a key of environment.
func NewKeyMaterial(environment string) (prefix, secret string) {
	return "sk_" + environment + "_" + randomString(apiKeyIDBytes), randomString(apiKeySecretBytes)
}

// SplitAPIKey splits a full key into its prefix and secret.
func SplitAPIKey(full string) (prefix, secret string, ok bool) {
	if !strings.HasPrefix(full, "sk_") {
		return "", "", false
	}
	i := strings.LastIndexByte(full, '_')
	prefix, secret = full[:i], full[i+1:]
	return prefix, secret, secret != "" && strings.Count(prefix, "_") == 2
}

// NewAccessToken returns a fresh opaque access token.
func NewAccessToken() string { return AccessTokenPrefix + randomString(accessTokenBytes) }

// HashSecret is how secrets and tokens are kept at rest.
func HashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}
