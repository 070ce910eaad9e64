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
// when there is none, e.g. background jobs). Webhook events are not derived from it: each
// service publishes its typed event next to its audit entry (DB.publish).
func audit(ctx context.Context, q *dbq.Queries, e core.AuditEntry) error {
	params, err := auditParams(ctx, e)
	if err != nil {
		return err
	}
	return q.AuditEventInsert(ctx, params)
}

// queueAudit is audit with its statement queued in p, to be sent in the transaction of the
// change.
func queueAudit(ctx context.Context, p *Pipeline, e core.AuditEntry) error {
	params, err := auditParams(ctx, e)
	if err != nil {
		return err
	}
	p.Add(func(q *dbq.Queries) error { return q.AuditEventInsert(ctx, params) })
	return nil
}

// auditParams is the row audit stores for e: a new id, the actor and request of ctx, and e's
// states as JSON.
func auditParams(ctx context.Context, e core.AuditEntry) (dbq.AuditEventInsertParams, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return dbq.AuditEventInsertParams{}, err
	}
	params := dbq.AuditEventInsertParams{
		ID:             id,
		OrganizationID: storedOrganization(e.OrganizationID),
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
		return params, err
	}
	after := e.After
	if e.Reason != "" {
		after = map[string]any{"resource": e.After, "reason": e.Reason}
	}
	params.After, err = jsonOrNil(after)
	return params, err
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

// AuditService implements core.AuditService.
type AuditService struct{ db *DB }

var _ core.AuditService = (*AuditService)(nil)

// NewAuditService returns the audit trail reader over d.
func NewAuditService(d *DB) *AuditService { return &AuditService{db: d} }

// ListAuditEvents implements core.AuditService.
func (s *AuditService) ListAuditEvents(ctx context.Context, f core.AuditFilter) ([]core.AuditEvent, *string, error) {
	org, after, err := listScope(ctx, f.OrganizationID, f.Cursor)
	if err != nil {
		return nil, nil, err
	}
	filtered := f.ResourceType != nil || f.ResourceID != nil || f.Action != nil || f.Since != nil || f.Until != nil
	var rows []dbq.AuditEvent
	var walk keyRange
	err = s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		if err := q.KeysetListPlanSettings(ctx); err != nil {
			return err
		}
		rows, walk, err = auditPage(ctx, q, org, after, filtered, f)
		return err
	})
	if err != nil {
		return nil, nil, err // WithTx translates
	}
	events := make([]core.AuditEvent, len(rows))
	for i, r := range rows {
		events[i] = core.AuditEvent{
			ID: r.ID, OccurredAt: r.OccurredAt, OrganizationID: shownOrganization(r.OrganizationID), ActorType: r.ActorType,
			ActorID: r.ActorID, ActorKeyPrefix: r.ActorKeyPrefix, Action: r.Action, ResourceType: r.ResourceType,
			ResourceID: r.ResourceID, RequestID: r.RequestID, Before: r.Before, After: r.After,
		}
	}
	events, next := windowPage(events, f.Limit, func(e core.AuditEvent) uuid.UUID { return e.ID }, walk)
	return events, next, nil
}

// auditPage reads one page of the audit trail of org (nil: every organization's) below the
// cursor after, a filtered one within the bounded walk of pageRange.
func auditPage(ctx context.Context, q *dbq.Queries, org, after *uuid.UUID, filtered bool, f core.AuditFilter) ([]dbq.AuditEvent, keyRange, error) {
	walk, err := pageRange(after, filtered, func(before uuid.UUID, skip int32) (uuid.UUID, error) {
		if org != nil {
			return q.AuditEventScanFloor(ctx, dbq.AuditEventScanFloorParams{OrganizationID: *org, Before: before, Skip: skip})
		}
		return q.AuditEventScanFloorAnyOrganization(ctx, dbq.AuditEventScanFloorAnyOrganizationParams{Before: before, Skip: skip})
	})
	if err != nil {
		return nil, walk, err
	}
	params := dbq.AuditEventListAnyOrganizationParams{
		ResourceType: f.ResourceType, ResourceID: f.ResourceID, Action: f.Action,
		Since: f.Since, Until: f.Until, Before: walk.before, Floor: walk.floor, RowLimit: int32(f.Limit) + 1,
	}
	var rows []dbq.AuditEvent
	if org != nil {
		rows, err = q.AuditEventList(ctx, dbq.AuditEventListParams{
			OrganizationID: *org, ResourceType: params.ResourceType, ResourceID: params.ResourceID, Action: params.Action,
			Since: params.Since, Until: params.Until, Before: params.Before, Floor: params.Floor, RowLimit: params.RowLimit,
		})
	} else {
		rows, err = q.AuditEventListAnyOrganization(ctx, params)
	}
	return rows, walk, err
}
