package postgres

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// audit appends e to the audit trail within the caller's transaction q, so the record and
// the change commit or roll back together. The actor is the principal of ctx (the system
// when there is none, e.g. background jobs). When the action is one of the webhook event
// types (webhookEvents), the event and its deliveries are written in the same transaction:
// every state change passes here, which makes it the one place events come from.
func audit(ctx context.Context, q *dbq.Queries, e core.AuditEntry) error {
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	params := dbq.AuditEventInsertParams{
		ID:             id,
		OrganizationID: e.OrganizationID,
		ActorType:      "system",
		Action:         e.Action,
		ResourceType:   e.ResourceType,
		ResourceID:     e.ResourceID,
	}
	if p, err := core.PrincipalFrom(ctx); err == nil {
		params.ActorType = p.ActorType()
		params.ActorID = nonEmpty(p.Subject)
		params.ActorKeyPrefix = nonEmpty(p.KeyPrefix)
	}
	params.RequestID = nonEmpty(core.RequestIDFrom(ctx))
	if params.Before, err = jsonOrNil(e.Before); err != nil {
		return err
	}
	after := e.After
	if e.Reason != "" {
		after = map[string]any{"resource": e.After, "reason": e.Reason}
	}
	if params.After, err = jsonOrNil(after); err != nil {
		return err
	}
	if err := q.AuditEventInsert(ctx, params); err != nil {
		return err
	}
	return publishWebhookEvent(ctx, q, e)
}

func jsonOrNil(v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	return json.Marshal(v)
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
