package postgres

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// OperatorTokenService implements core.OperatorTokenService.
type OperatorTokenService struct {
	db  *DB
	now func() time.Time
}

var _ core.OperatorTokenService = (*OperatorTokenService)(nil)

// NewOperatorTokenService returns the operator token service over d.
func NewOperatorTokenService(d *DB) *OperatorTokenService {
	return &OperatorTokenService{db: d, now: time.Now}
}

// Mint implements core.OperatorTokenService.
func (s *OperatorTokenService) Mint(ctx context.Context, name string) (*core.OperatorToken, string, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 100 {
		return nil, "", core.Errorf(core.EValidation, "An operator token needs a name of 1 to 100 characters.")
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, "", err
	}
	token := core.NewOperatorToken()
	row, err := s.db.queries(ctx).OperatorTokenInsert(ctx, dbq.OperatorTokenInsertParams{
		ID: id, Name: name, TokenHash: core.HashSecret(token), CreatedAt: s.now(),
	})
	if err != nil {
		return nil, "", translate(err)
	}
	return operatorTokenFromRow(row), token, nil
}

// List implements core.OperatorTokenService.
func (s *OperatorTokenService) List(ctx context.Context) ([]core.OperatorToken, error) {
	rows, err := s.db.queries(ctx).OperatorTokenList(ctx)
	if err != nil {
		return nil, translate(err)
	}
	out := make([]core.OperatorToken, len(rows))
	for i, r := range rows {
		out[i] = *operatorTokenFromRow(r)
	}
	return out, nil
}

// Revoke implements core.OperatorTokenService.
func (s *OperatorTokenService) Revoke(ctx context.Context, id uuid.UUID) (*core.OperatorToken, error) {
	row, err := s.db.queries(ctx).OperatorTokenRevoke(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, core.Errorf(core.ENotFound, "Operator token %s does not exist.", id)
	}
	if err != nil {
		return nil, translate(err)
	}
	return operatorTokenFromRow(row), nil
}

// Authenticate implements core.OperatorTokenService. The token is found by its SHA-256 hash,
// so no comparison of secret bytes depends on how much of a guess was right.
func (s *OperatorTokenService) Authenticate(ctx context.Context, bearer string) (*core.OperatorToken, error) {
	row, err := s.db.queries(ctx).OperatorTokenGetByHash(ctx, core.HashSecret(bearer))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errBadCredential
	}
	if err != nil {
		return nil, translate(err)
	}
	if row.RevokedAt != nil {
		return nil, core.Errorf(core.EUnauthenticated, "The operator token has been revoked.")
	}
	// last_used_at at most once a minute, never failing the request.
	if row.LastUsedAt == nil || s.now().Sub(*row.LastUsedAt) >= time.Minute {
		_ = s.db.queries(ctx).OperatorTokenTouch(context.WithoutCancel(ctx), row.ID)
	}
	return operatorTokenFromRow(row), nil
}

func operatorTokenFromRow(r dbq.OperatorToken) *core.OperatorToken {
	return &core.OperatorToken{ID: r.ID, Name: r.Name, CreatedAt: r.CreatedAt, LastUsedAt: r.LastUsedAt, RevokedAt: r.RevokedAt}
}
