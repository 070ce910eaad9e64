package postgres

import (
	"context"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// APIKeyService implements core.APIKeyService and core.CredentialService.
type APIKeyService struct {
	db  *DB
	now func() time.Time
	// onSecretCheck, when set, is called on every secret comparison (tests count them).
	onSecretCheck func()
}

var (
	_ core.APIKeyService     = (*APIKeyService)(nil)
	_ core.CredentialService = (*APIKeyService)(nil)
)

// NewAPIKeyService returns the API key and credential service over d.
func NewAPIKeyService(d *DB) *APIKeyService { return &APIKeyService{db: d, now: time.Now} }

// CreateAPIKey implements core.APIKeyService.
func (s *APIKeyService) CreateAPIKey(ctx context.Context, in core.APIKeyCreate) (*core.NewAPIKey, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	orgID := in.OrganizationID
	if err := p.ActsFor(orgID, "/organization_id"); err != nil {
		return nil, err
	}
	if err := core.CheckKeyAuthority(p, "create", in.Environment, in.Scopes); err != nil {
		return nil, err
	}
	if err := in.Validate(s.now()); err != nil {
		return nil, err
	}
	var created *core.NewAPIKey
	err = s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		if err := s.db.organizationWithinQuota(ctx, q, orgID, core.QuotaAPIKeys); err != nil {
			return err
		}
		if err := s.db.entitle(ctx, orgID, core.Access{Act: core.ActIssueCredential, Environment: in.Environment}); err != nil {
			return err
		}
		created, err = insertAPIKey(ctx, q, p, orgID, in)
		if err != nil {
			return err
		}
		if err := audit(ctx, q, core.AuditEntry{
			OrganizationID: &orgID, Action: "api_key.created", ResourceType: "api_key",
			ResourceID: created.ID.String(), After: created.APIKey,
		}); err != nil {
			return err
		}
		return s.db.publish(ctx, q, orgID, core.EventAPIKeyCreated, &created.APIKey)
	})
	return created, err
}

func insertAPIKey(ctx context.Context, q *dbq.Queries, p *core.Principal, orgID uuid.UUID, in core.APIKeyCreate) (*core.NewAPIKey, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	prefix, secret := core.NewKeyMaterial(in.Environment)
	row, err := q.APIKeyInsert(ctx, dbq.APIKeyInsertParams{
		ID:              id,
		OrganizationID:  orgID,
		Name:            in.Name,
		Prefix:          prefix,
		SecretHash:      core.HashSecret(secret),
		Environment:     in.Environment,
		Scopes:          in.Scopes,
		AllowedOrigins:  nonNil(in.AllowedOrigins),
		AllowedIps:      nonNil(in.AllowedIPs),
		RateLimitPolicy: in.RateLimitPolicy,
		CreatedBy:       p.Subject,
		ExpiresAt:       in.ExpiresAt,
	})
	if err != nil {
		return nil, err
	}
	return &core.NewAPIKey{APIKey: *apiKeyFromRow(row), Secret: secret, FullKey: prefix + "_" + secret}, nil
}

// ListAPIKeys implements core.APIKeyService.
func (s *APIKeyService) ListAPIKeys(ctx context.Context, f core.APIKeyFilter) ([]*core.APIKey, *string, error) {
	org, after, err := listScope(ctx, f.OrganizationID, f.Cursor)
	if err != nil {
		return nil, nil, err
	}
	var rows []dbq.ApiKey
	if org != nil {
		rows, err = s.db.queries(ctx).APIKeyList(ctx, dbq.APIKeyListParams{OrganizationID: *org, After: after, RowLimit: int32(f.Limit) + 1})
	} else {
		rows, err = s.db.queries(ctx).APIKeyListAnyOrganization(ctx, dbq.APIKeyListAnyOrganizationParams{After: after, RowLimit: int32(f.Limit) + 1})
	}
	if err != nil {
		return nil, nil, translate(err)
	}
	keys := make([]*core.APIKey, 0, len(rows))
	for _, r := range rows {
		keys = append(keys, apiKeyFromRow(r))
	}
	keys, next := page(keys, f.Limit, func(k *core.APIKey) uuid.UUID { return k.ID })
	return keys, next, nil
}

// FindAPIKeyByID implements core.APIKeyService.
func (s *APIKeyService) FindAPIKeyByID(ctx context.Context, id uuid.UUID) (*core.APIKey, error) {
	q := s.db.queries(ctx)
	row, err := owned(ctx,
		func(org uuid.UUID) (dbq.ApiKey, error) {
			return q.APIKeyGetByID(ctx, dbq.APIKeyGetByIDParams{OrganizationID: org, ID: id})
		},
		func() (dbq.ApiKey, error) { return q.APIKeyGetByIDAnyOrganization(ctx, id) },
		"API key", id)
	if err != nil {
		return nil, err
	}
	return apiKeyFromRow(row), nil
}

// RevokeAPIKey implements core.APIKeyService.
func (s *APIKeyService) RevokeAPIKey(ctx context.Context, id uuid.UUID) (*core.APIKey, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	var key *core.APIKey
	err = s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		before, err := lockAPIKey(ctx, q, id)
		if err != nil {
			return err
		}
		if err := core.CheckKeyAuthority(p, "revoke", before.Environment, before.Scopes); err != nil {
			return err
		}
		if before.RevokedAt != nil {
			key = before
			return nil
		}
		row, err := q.APIKeyRevoke(ctx, dbq.APIKeyRevokeParams{OrganizationID: before.OrganizationID, ID: id})
		if err != nil {
			return err
		}
		key = apiKeyFromRow(row)
		if err := audit(ctx, q, core.AuditEntry{
			OrganizationID: &key.OrganizationID, Action: "api_key.revoked", ResourceType: "api_key",
			ResourceID: id.String(), Before: before, After: key,
		}); err != nil {
			return err
		}
		return s.db.publish(ctx, q, key.OrganizationID, core.EventAPIKeyRevoked, key)
	})
	if err == nil {
		s.db.credentialsChanged(ctx) // the next request must not get in on the cache
	}
	return key, err
}

// apiKeyRotation is the audit summary of a rotation.
type apiKeyRotation struct {
	Old         *core.APIKey `json:"old"`
	Replacement core.APIKey  `json:"replacement"`
}

// RotateAPIKey implements core.APIKeyService.
func (s *APIKeyService) RotateAPIKey(ctx context.Context, id uuid.UUID, grace time.Duration) (*core.NewAPIKey, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	var created *core.NewAPIKey
	err = s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		old, err := lockAPIKey(ctx, q, id)
		if err != nil {
			return err
		}
		if err := s.checkRotatable(ctx, q, p, old); err != nil {
			return err
		}
		newID, err := uuid.NewV7()
		if err != nil {
			return err
		}
		prefix, secret := core.NewKeyMaterial(old.Environment)
		row, err := q.APIKeyInsertReplacement(ctx, dbq.APIKeyInsertReplacementParams{
			ID: newID, Prefix: prefix, SecretHash: core.HashSecret(secret), CreatedBy: p.Subject,
			OrganizationID: old.OrganizationID, Replaces: id,
		})
		if err != nil {
			return err
		}
		created = &core.NewAPIKey{APIKey: *apiKeyFromRow(row), Secret: secret, FullKey: prefix + "_" + secret}
		if err := audit(ctx, q, core.AuditEntry{
			OrganizationID: &old.OrganizationID, Action: "api_key.created", ResourceType: "api_key",
			ResourceID: created.ID.String(), After: created.APIKey, Reason: "rotation of " + id.String(),
		}); err != nil {
			return err
		}
		if err := s.db.publish(ctx, q, old.OrganizationID, core.EventAPIKeyCreated, &created.APIKey); err != nil {
			return err
		}
		replaced, err := q.APIKeyReplace(ctx, dbq.APIKeyReplaceParams{
			OrganizationID: old.OrganizationID, ID: id, ReplacedBy: &created.ID, ExpiresAt: s.now().Add(grace),
		})
		if err != nil {
			return err
		}
		rotated := apiKeyFromRow(replaced)
		if err := audit(ctx, q, core.AuditEntry{
			OrganizationID: &old.OrganizationID, Action: "api_key.rotated", ResourceType: "api_key",
			ResourceID: id.String(), Before: old,
			After: apiKeyRotation{Old: rotated, Replacement: created.APIKey},
		}); err != nil {
			return err
		}
		// The event is about the rotated key, in its grace period.
		return s.db.publish(ctx, q, old.OrganizationID, core.EventAPIKeyRotated, rotated)
	})
	if err == nil {
		s.db.credentialsChanged(ctx) // the old key's expiry moved: no cached copy may outlive it
	}
	return created, err
}

// checkRotatable refuses a rotation by a caller without authority over the key, of a key
// that has a replacement already (one key has at most one successor, even during its grace
// period) and of a key that is not active. The replacement is a new credential, so the
// entitlement rules decide as at creation (core.Entitle: the organization's standing, and the
// state of the key's connected business, if any).
func (s *APIKeyService) checkRotatable(ctx context.Context, q *dbq.Queries, p *core.Principal, key *core.APIKey) error {
	if err := core.CheckKeyAuthority(p, "rotate", key.Environment, key.Scopes); err != nil {
		return err
	}
	if err := key.CheckRotatable(s.now()); err != nil {
		return err
	}
	access := core.Access{Act: core.ActIssueCredential, Environment: key.Environment}
	if key.ConnectedBusinessID != nil {
		business, err := q.ConnectedBusinessGetByID(ctx, dbq.ConnectedBusinessGetByIDParams{
			OrganizationID: key.OrganizationID, ID: *key.ConnectedBusinessID,
		})
		if err != nil {
			return err
		}
		access.Business = &business.LifecycleStatus
	}
	return s.db.entitle(ctx, key.OrganizationID, access)
}

func lockAPIKey(ctx context.Context, q *dbq.Queries, id uuid.UUID) (*core.APIKey, error) {
	row, err := owned(ctx,
		func(org uuid.UUID) (dbq.ApiKey, error) {
			return q.APIKeyGetByIDForUpdate(ctx, dbq.APIKeyGetByIDForUpdateParams{OrganizationID: org, ID: id})
		},
		func() (dbq.ApiKey, error) { return q.APIKeyGetByIDForUpdateAnyOrganization(ctx, id) },
		"API key", id)
	if err != nil {
		return nil, err
	}
	return apiKeyFromRow(row), nil
}

// Authenticate implements core.CredentialService.
func (s *APIKeyService) Authenticate(ctx context.Context, bearer string) (*core.Principal, error) {
	c, err := s.authenticate(ctx, bearer)
	if err != nil {
		return nil, err
	}
	s.touch(ctx, c.keyID, c.lastUsedAt)
	return c.principal, nil
}

// credential is an authenticated bearer credential with what decides how long it stays
// valid without a change in the database.
type credential struct {
	principal  *core.Principal
	keyID      uuid.UUID
	lastUsedAt *time.Time
	expiresAt  *time.Time // of the key, or of the token when that is earlier
}

// authenticate looks bearer up and checks it, without maintaining last_used_at.
func (s *APIKeyService) authenticate(ctx context.Context, bearer string) (*credential, error) {
	if strings.HasPrefix(bearer, core.AccessTokenPrefix) {
		return s.authenticateToken(ctx, bearer)
	}
	row, err := s.keyBySecret(ctx, bearer)
	if err != nil {
		return nil, err
	}
	key := apiKeyFromRow(row.ApiKey)
	if err := key.CheckUsable(s.now(), row.BusinessStatus); err != nil {
		return nil, err
	}
	p, err := key.Principal(key.Scopes)
	if err != nil {
		return nil, err
	}
	return &credential{principal: p, keyID: key.ID, lastUsedAt: key.LastUsedAt, expiresAt: key.ExpiresAt}, nil
}

var errBadCredential = core.Errorf(core.EUnauthenticated, "The bearer credential is not valid.")

// keyBySecret finds the key of a full key and checks its secret in constant time.
func (s *APIKeyService) keyBySecret(ctx context.Context, full string) (dbq.APIKeyGetByPrefixRow, error) {
	var none dbq.APIKeyGetByPrefixRow
	prefix, secret, ok := core.SplitAPIKey(full)
	if !ok {
		return none, errBadCredential
	}
	row, err := s.db.queries(ctx).APIKeyGetByPrefix(ctx, prefix)
	if errors.Is(err, pgx.ErrNoRows) {
		s.secretMatches(secret, unknownKeyHash) // as costly as a wrong secret of a known key
		return none, errBadCredential
	}
	if err != nil {
		return none, translate(err)
	}
	if !s.secretMatches(secret, row.ApiKey.SecretHash) {
		return none, errBadCredential
	}
	return row, nil
}

// unknownKeyHash stands in for the stored hash when no key has the prefix presented: the
// secret is hashed and compared all the same, so an unknown prefix and a wrong secret of a
// known one take the same work and cannot be told apart by time (issue 21, item 12).
var unknownKeyHash = core.HashSecret("no key has this prefix")

// unknownKeyPrefix is a well-formed prefix no key has (no environment is called unknown),
// looked up when a token request names a key by an id that does not exist, so that it costs
// what a known id does.
const unknownKeyPrefix = "sk_unknown_0"

// secretMatches compares secret with a stored hash in constant time.
func (s *APIKeyService) secretMatches(secret string, hash []byte) bool {
	if s.onSecretCheck != nil {
		s.onSecretCheck()
	}
	return subtle.ConstantTimeCompare(core.HashSecret(secret), hash) == 1
}

// touchInterval is how stale last_used_at may be: it is written at most this often per key,
// so authentication is not a write per request.
const touchInterval = time.Minute

// touchDue says whether a key's last_used_at, last written at last, is due to be written
// again at now. Each key has its own interval, between three quarters of touchInterval and
// all of it, from the random end of its id: keys a client started using together would
// otherwise all be written in the same moment, every minute, with requests waiting on
// each write (docs/performance.md).
func touchDue(id uuid.UUID, last *time.Time, now time.Time) bool {
	if last == nil {
		return true
	}
	spread := time.Duration(binary.BigEndian.Uint16(id[14:])) * (touchInterval / 4) >> 16
	return now.Sub(*last) >= touchInterval-spread
}

// touch maintains last_used_at, at most once a minute per key and never failing the request.
func (s *APIKeyService) touch(ctx context.Context, id uuid.UUID, lastUsedAt *time.Time) {
	if !touchDue(id, lastUsedAt, s.now()) {
		return
	}
	_ = s.db.queries(ctx).APIKeyTouch(context.WithoutCancel(ctx), id)
}

func (s *APIKeyService) authenticateToken(ctx context.Context, token string) (*credential, error) {
	row, err := s.db.queries(ctx).OAuthTokenGetByHash(ctx, core.HashSecret(token))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errBadCredential
	}
	if err != nil {
		return nil, translate(err)
	}
	if !row.OauthToken.ExpiresAt.After(s.now()) {
		return nil, core.Errorf(core.EUnauthenticated, "The access token has expired.")
	}
	key := apiKeyFromRow(row.ApiKey)
	if err := key.CheckUsable(s.now(), row.BusinessStatus); err != nil {
		return nil, core.Errorf(core.EUnauthenticated, "The access token's API key is no longer usable.")
	}
	p, err := key.Principal(row.OauthToken.Scopes)
	if err != nil {
		return nil, err
	}
	expires := row.OauthToken.ExpiresAt
	if k := key.ExpiresAt; k != nil && k.Before(expires) {
		expires = *k
	}
	return &credential{principal: p, keyID: key.ID, lastUsedAt: key.LastUsedAt, expiresAt: &expires}, nil
}

// IssueToken implements core.CredentialService.
func (s *APIKeyService) IssueToken(ctx context.Context, in core.TokenRequest) (*core.AccessToken, error) {
	badClient := core.Errorf(core.EInvalidClient, "Client authentication failed.")
	clientKey := in.ClientID + "_" + in.ClientSecret
	if id, err := uuid.Parse(in.ClientID); err == nil { // the client named its key by id
		// Authentication: no organization is known before the key is.
		row, err := s.db.queries(ctx).APIKeyGetByIDAnyOrganization(ctx, id)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			clientKey = unknownKeyPrefix + "_" + in.ClientSecret // refused below, at the same cost
		case err != nil:
			return nil, translate(err)
		default:
			clientKey = row.Prefix + "_" + in.ClientSecret
		}
	}
	found, err := s.keyBySecret(ctx, clientKey)
	if err != nil {
		if core.ErrorCode(err) == core.EUnauthenticated {
			return nil, badClient
		}
		return nil, err
	}
	key := apiKeyFromRow(found.ApiKey)
	if key.CheckUsable(s.now(), found.BusinessStatus) != nil {
		return nil, badClient
	}
	lifetime, ok := key.TokenLifetime(s.now())
	if !ok {
		return nil, badClient
	}
	if in.Admit != nil {
		rs, err := key.Restrictions()
		if err != nil {
			return nil, err
		}
		if err := in.Admit(rs); err != nil {
			return nil, err
		}
	}
	scopes, err := key.TokenScopes(in.Scope)
	if err != nil {
		return nil, err
	}
	token := core.NewAccessToken()
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	_, err = s.db.queries(ctx).OAuthTokenInsert(ctx, dbq.OAuthTokenInsertParams{
		ID: id, OrganizationID: key.OrganizationID, ApiKeyID: key.ID,
		TokenHash: core.HashSecret(token), Scopes: scopes,
		ExpiresAt: s.now().Add(lifetime),
	})
	if err != nil {
		return nil, translate(err)
	}
	s.touch(ctx, key.ID, key.LastUsedAt)
	return &core.AccessToken{Token: token, Scopes: scopes, ExpiresIn: lifetime}, nil
}

func apiKeyFromRow(r dbq.ApiKey) *core.APIKey {
	return &core.APIKey{
		ID: r.ID, OrganizationID: r.OrganizationID, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		Name: r.Name, Prefix: r.Prefix, Environment: r.Environment, Scopes: r.Scopes,
		AllowedOrigins: r.AllowedOrigins, AllowedIPs: r.AllowedIps, RateLimitPolicy: r.RateLimitPolicy,
		CreatedBy: r.CreatedBy, LastUsedAt: r.LastUsedAt, ExpiresAt: r.ExpiresAt, RevokedAt: r.RevokedAt,
		ReplacedBy: r.ReplacedBy, ConnectedBusinessID: r.ConnectedBusinessID,
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
