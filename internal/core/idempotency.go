package core

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// IdempotencyRetention is how long a completed response is replayed for its key.
const IdempotencyRetention = 24 * time.Hour

// Idempotency problem codes (docs/design.md, "Idempotency").
const (
	EIdempotencyInProgress = "idempotency_request_in_progress"
	EIdempotencyKeyReused  = "idempotency_key_reused"
)

// IdempotentRequest identifies one POST sent with an Idempotency-Key.
type IdempotentRequest struct {
	Scope          string // the principal the key belongs to
	Key            string
	OrganizationID *uuid.UUID
	// Scopes the sending credential holds. A stored response is replayed only to a credential
	// holding every scope of the one that sent the first request.
	Scopes       []string
	Method, Path string
	Hash         []byte // of the canonical request body
}

// IdempotentResponse is a response as stored and replayed.
type IdempotentResponse struct {
	Status      int
	ContentType string
	// Header is every header the handler set (Content-Type too), keys canonical: a replay
	// answers with them as the first response did.
	Header map[string][]string
	Body   []byte
}

// IdempotencyService runs a request at most once per key.
type IdempotencyService interface {
	// Run replays the stored response of an earlier request with the same key, or runs
	// handle and stores its response in the same transaction as the effects handle makes
	// through ctx. 5xx and 429 responses are not stored and leave no effect. A concurrent request
	// with the key is EIdempotencyInProgress; the key with another method, path or body is
	// EIdempotencyKeyReused; a replay to a credential lacking a scope of the first request's
	// credential is EInsufficientScope.
	Run(ctx context.Context, req IdempotentRequest, handle func(ctx context.Context) IdempotentResponse) (resp IdempotentResponse, replayed bool, err error)
}
