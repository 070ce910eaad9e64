package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/secretbox"
)

// IdempotencyService implements core.IdempotencyService. A request runs inside one
// transaction that holds an advisory lock on its key (so a second process sees the key busy
// at once instead of waiting), joins the effects of the handler (services use the
// transaction of the context), and stores the response before committing.
type IdempotencyService struct {
	db  *DB
	box *secretbox.Box
}

var _ core.IdempotencyService = (*IdempotencyService)(nil)

// NewIdempotencyService returns the idempotency service; box encrypts stored responses.
func NewIdempotencyService(d *DB, box *secretbox.Box) *IdempotencyService {
	return &IdempotencyService{db: d, box: box}
}

// Run implements core.IdempotencyService.
func (s *IdempotencyService) Run(ctx context.Context, req core.IdempotentRequest, handle func(context.Context) core.IdempotentResponse) (core.IdempotentResponse, bool, error) {
	var none core.IdempotentResponse
	tx, err := s.db.Pool.Begin(ctx)
	if err != nil {
		return none, false, translate(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit it is a no-op
	q := dbq.New(tx)

	locked, err := q.IdempotencyLockTry(ctx, fmt.Sprintf("%d:%s:%s", len(req.Scope), req.Scope, req.Key))
	if err != nil {
		return none, false, translate(err)
	}
	if !locked {
		return none, false, core.Errorf(core.EIdempotencyInProgress,
			"A request with this Idempotency-Key is still in progress; retry it shortly.")
	}
	stored, err := q.IdempotencyKeyGet(ctx, dbq.IdempotencyKeyGetParams{Scope: req.Scope, Key: req.Key})
	switch {
	case err == nil:
		return s.replay(stored, req)
	case !errors.Is(err, pgx.ErrNoRows):
		return none, false, translate(err)
	}

	// The handler's work runs in a savepoint, so a refused request (4xx) keeps nothing but
	// its stored answer, whatever the handler did before refusing.
	work, err := tx.Begin(ctx)
	if err != nil {
		return none, false, translate(err)
	}
	hctx, hooks := withCommitHooks(ctx)
	resp := handle(withTx(hctx, work))
	if resp.Status >= 500 || resp.Status == http.StatusTooManyRequests {
		// Not stored (a later retry may succeed); the deferred rollback undoes any effect.
		return resp, false, nil
	}
	if resp.Status >= 400 {
		err = work.Rollback(ctx)
	} else {
		err = work.Commit(ctx)
	}
	if err != nil {
		return none, false, translate(err)
	}
	headers, err := json.Marshal(resp.Header)
	if err != nil {
		return none, false, err
	}
	err = q.IdempotencyKeyPut(ctx, dbq.IdempotencyKeyPutParams{
		Scope:               req.Scope,
		Key:                 req.Key,
		OrganizationID:      req.OrganizationID,
		PrincipalScopes:     nonNil(req.Scopes),
		Method:              req.Method,
		Path:                req.Path,
		RequestHash:         req.Hash,
		ResponseStatus:      int32(resp.Status),
		ResponseContentType: resp.ContentType,
		ResponseHeaders:     headers,
		ResponseBody:        s.box.Seal(resp.Body, sealContext(req)),
		ExpiresAt:           time.Now().Add(core.IdempotencyRetention),
	})
	if err != nil {
		return none, false, translate(err)
	}
	if err := tx.Commit(ctx); err != nil {
		return none, false, translate(err) // nothing happened: the client may retry
	}
	hooks.run() // before the response is written
	return resp, false, nil
}

func (s *IdempotencyService) replay(stored dbq.IdempotencyKey, req core.IdempotentRequest) (core.IdempotentResponse, bool, error) {
	if stored.Method != req.Method || stored.Path != req.Path || !bytes.Equal(stored.RequestHash, req.Hash) {
		return core.IdempotentResponse{}, false, core.Errorf(core.EIdempotencyKeyReused,
			"This Idempotency-Key was used for a different request (%s %s); use a new key for a new request.", stored.Method, stored.Path)
	}
	if missing := missingScopes(stored.PrincipalScopes, req.Scopes); len(missing) > 0 {
		// The key's records are shared by every credential of one API key (the key and its
		// tokens): a narrower one gets no stored answer, which may hold a secret shown once or
		// something it could not have asked for itself (DESIGN.md §3).
		return core.IdempotentResponse{}, false, core.Errorf(core.EInsufficientScope,
			"The response stored for this Idempotency-Key was made by a credential holding scopes this one lacks (%s); it is replayed only to a credential holding them.",
			strings.Join(missing, ", "))
	}
	body, err := s.box.Open(stored.ResponseBody, sealContext(req))
	if err != nil {
		return core.IdempotentResponse{}, false, err
	}
	var header map[string][]string
	if err := json.Unmarshal(stored.ResponseHeaders, &header); err != nil {
		return core.IdempotentResponse{}, false, fmt.Errorf("postgres: idempotency record's headers: %w", err)
	}
	return core.IdempotentResponse{Status: int(stored.ResponseStatus), ContentType: stored.ResponseContentType, Header: header, Body: body}, true, nil
}

// missingScopes lists the scopes of needed that held lacks.
func missingScopes(needed, held []string) []string {
	have := make(map[string]bool, len(held))
	for _, s := range held {
		have[s] = true
	}
	var missing []string
	for _, s := range needed {
		if !have[s] {
			missing = append(missing, s)
		}
	}
	return missing
}

// sealContext binds a stored response to its key, so a row's body copied to another key
// does not open.
func sealContext(req core.IdempotentRequest) []byte {
	return []byte(req.Scope + "\x00" + req.Key)
}

// SweepIdempotencyKeys deletes expired records in batches until none is left or ctx ends.
func SweepIdempotencyKeys(ctx context.Context, d *DB, logger *slog.Logger) {
	for {
		n, err := dbq.New(d.Pool).IdempotencyKeyDeleteExpired(ctx, 1000)
		if err != nil {
			if ctx.Err() == nil {
				logger.Warn("sweeping idempotency keys", "error", err)
			}
			return
		}
		if n < 1000 {
			return
		}
	}
}
