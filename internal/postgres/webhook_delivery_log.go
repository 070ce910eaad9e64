package postgres

import (
	"bytes"
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/webhook"
)

// WebhookDeliveryService implements core.WebhookDeliveryService over the outbox
// (webhook_events), the deliveries and their attempts.
type WebhookDeliveryService struct {
	db     *DB
	policy webhook.Policy
}

var _ core.WebhookDeliveryService = (*WebhookDeliveryService)(nil)

// NewWebhookDeliveryService returns the service over d; a recovered delivery gets policy's
// schedule again.
func NewWebhookDeliveryService(d *DB, policy webhook.Policy) *WebhookDeliveryService {
	return &WebhookDeliveryService{db: d, policy: policy}
}

// ListEvents implements core.WebhookDeliveryService.
func (s *WebhookDeliveryService) ListEvents(ctx context.Context, f core.WebhookEventFilter) ([]*core.WebhookEventRecord, *string, error) {
	org, before, err := listScope(ctx, f.OrganizationID, f.Cursor)
	if err != nil {
		return nil, nil, err
	}
	window := eventIDWindow(before, f.CreatedAfter, f.CreatedBefore)
	params := dbq.WebhookEventListAnyOrganizationParams{
		Type: f.Type, CreatedAfter: f.CreatedAfter, CreatedBefore: f.CreatedBefore, Before: window.before, Floor: window.floor,
		RowLimit: int32(f.Limit) + 1,
	}
	var rows []dbq.WebhookEvent
	if org != nil {
		rows, err = s.db.queries(ctx).WebhookEventList(ctx, dbq.WebhookEventListParams{
			OrganizationID: *org, Type: params.Type, CreatedAfter: params.CreatedAfter, CreatedBefore: params.CreatedBefore,
			Before: params.Before, Floor: params.Floor, RowLimit: params.RowLimit,
		})
	} else {
		rows, err = s.db.queries(ctx).WebhookEventListAnyOrganization(ctx, params)
	}
	if err != nil {
		return nil, nil, translate(err)
	}
	events := make([]*core.WebhookEventRecord, len(rows))
	for i, r := range rows {
		events[i] = webhookEventFromRow(r)
	}
	events, next := page(events, f.Limit, func(e *core.WebhookEventRecord) uuid.UUID { return e.ID })
	return events, next, nil
}

// clockSkewMargin widens the id window of a created_at filter. An event's created_at is the
// database's clock when its transaction began, its id (a UUIDv7) the service's clock when it
// was published; they differ by the transaction's length and the two clocks' skew, which this
// bounds. A wider window costs nothing: it prunes the same daily partitions.
const clockSkewMargin = time.Hour

// eventIDWindow is the range of ids a list of the events created in [after, until) (nil: no
// bound) below cursor (nil: the first page) walks: the ids written from after−margin to
// until+margin. The created_at conditions still decide which rows are listed; the window lets
// the plan prune the partitions outside it.
func eventIDWindow(cursor *uuid.UUID, after, until *time.Time) keyRange {
	r := keyRange{before: uuid.Max, floor: uuid.Nil}
	if cursor != nil {
		r.before = *cursor
	}
	if until != nil {
		if b := idBound(until.Add(clockSkewMargin)); bytes.Compare(b[:], r.before[:]) < 0 {
			r.before = b
		}
	}
	if after != nil {
		r.floor = idBound(after.Add(-clockSkewMargin))
	}
	return r
}

// idBound is partitionBound of a time a client gave, which may precede 1970 (no UUIDv7 does).
func idBound(t time.Time) uuid.UUID {
	if t.UnixMilli() <= 0 {
		return uuid.Nil
	}
	return partitionBound(t)
}

// FindEventByID implements core.WebhookDeliveryService.
func (s *WebhookDeliveryService) FindEventByID(ctx context.Context, id uuid.UUID) (*core.WebhookEventRecord, error) {
	q := s.db.queries(ctx)
	row, err := owned(ctx,
		func(org uuid.UUID) (dbq.WebhookEvent, error) {
			return q.WebhookEventGetByID(ctx, dbq.WebhookEventGetByIDParams{OrganizationID: org, ID: id})
		},
		func() (dbq.WebhookEvent, error) { return q.WebhookEventGetByIDAnyOrganization(ctx, id) },
		"Event", id)
	if err != nil {
		return nil, err
	}
	return webhookEventFromRow(row), nil
}

// deliveryStatuses are the stored statuses of each outcome the API shows.
var deliveryStatuses = map[string][]string{
	core.WebhookDeliveryPending:   {deliveryPending},
	core.WebhookDeliverySucceeded: {deliverySucceeded},
	core.WebhookDeliveryFailed:    {deliveryFailed, deliveryAbandoned},
}

// ListDeliveries implements core.WebhookDeliveryService: one query for the page of
// deliveries, one for the latest attempts of all of them.
func (s *WebhookDeliveryService) ListDeliveries(ctx context.Context, f core.WebhookDeliveryFilter) ([]*core.WebhookDelivery, *string, error) {
	var before *uuid.UUID
	if f.Cursor != nil {
		id, err := parseCursor(*f.Cursor)
		if err != nil {
			return nil, nil, err
		}
		before = &id
	}
	q := s.db.queries(ctx)
	endpoint, err := visibleEndpoint(ctx, q, f.EndpointID)
	if err != nil {
		return nil, nil, err
	}
	params := dbq.WebhookDeliveryListParams{
		OrganizationID: endpoint.OrganizationID, EndpointID: endpoint.ID, EventType: f.EventType, Before: before, RowLimit: int32(f.Limit) + 1,
	}
	if f.Status != nil {
		params.Statuses = deliveryStatuses[*f.Status]
	}
	rows, err := q.WebhookDeliveryList(ctx, params)
	if err != nil {
		return nil, nil, translate(err)
	}
	deliveries := make([]*core.WebhookDelivery, len(rows))
	for i, r := range rows {
		deliveries[i] = webhookDeliveryFromRow(r)
	}
	deliveries, next := page(deliveries, f.Limit, func(d *core.WebhookDelivery) uuid.UUID { return d.ID })
	if err := s.attachAttempts(ctx, q, endpoint.OrganizationID, deliveries); err != nil {
		return nil, nil, err
	}
	return deliveries, next, nil
}

// attachAttempts reads the latest attempts of deliveries (of organization org) into them.
func (s *WebhookDeliveryService) attachAttempts(ctx context.Context, q *dbq.Queries, org uuid.UUID, deliveries []*core.WebhookDelivery) error {
	if len(deliveries) == 0 {
		return nil
	}
	byID := make(map[uuid.UUID]*core.WebhookDelivery, len(deliveries))
	ids := make([]uuid.UUID, len(deliveries))
	eventIDs := make([]uuid.UUID, len(deliveries))
	for i, d := range deliveries {
		ids[i], eventIDs[i], byID[d.ID] = d.ID, d.EventID, d
		d.Attempts = []core.WebhookDeliveryAttempt{}
	}
	rows, err := q.WebhookDeliveryAttemptList(ctx, dbq.WebhookDeliveryAttemptListParams{
		DeliveryIds: ids, EventIds: eventIDs, OrganizationID: org, PerDelivery: core.MaxAttemptsListed,
	})
	if err != nil {
		return translate(err)
	}
	for _, r := range rows {
		d := byID[r.DeliveryID]
		d.Attempts = append(d.Attempts, core.WebhookDeliveryAttempt{
			Attempt: int(r.Attempt), AttemptedAt: r.AttemptedAt, Succeeded: r.Succeeded, StatusCode: intPtr(r.StatusCode),
			DurationMs: int(r.LatencyMs), ResponseBody: r.ResponseBody, Error: r.Error,
		})
	}
	return nil
}

// ResendDelivery implements core.WebhookDeliveryService.
func (s *WebhookDeliveryService) ResendDelivery(ctx context.Context, endpointID, deliveryID uuid.UUID) (int, error) {
	err := s.requeue(ctx, endpointID, func(ctx context.Context, q *dbq.Queries, endpoint dbq.WebhookEndpoint) ([]RequeuedDelivery, core.AuditEntry, error) {
		row, err := q.WebhookDeliveryResend(ctx, dbq.WebhookDeliveryResendParams{
			OrganizationID: endpoint.OrganizationID, EndpointID: endpoint.ID, ID: deliveryID,
		})
		if err != nil {
			return nil, core.AuditEntry{}, notFoundAs(err, "Delivery %s of webhook endpoint %s does not exist.", deliveryID, endpointID)
		}
		return []RequeuedDelivery{{ID: row.ID, EventID: row.EventID, Requeues: row.Requeues}},
			core.AuditEntry{Action: "webhook_endpoint.delivery_resent", After: map[string]any{"delivery_id": row.ID, "event_id": row.EventID}},
			nil
	})
	if err != nil {
		return 0, err
	}
	return 1, nil
}

// RecoverDeliveries implements core.WebhookDeliveryService: the deliveries that did not
// succeed are queued again, and the events the endpoint missed while it was disabled get
// a delivery each.
func (s *WebhookDeliveryService) RecoverDeliveries(ctx context.Context, endpointID uuid.UUID, since time.Time) (int, error) {
	var queued int
	err := s.requeue(ctx, endpointID, func(ctx context.Context, q *dbq.Queries, endpoint dbq.WebhookEndpoint) ([]RequeuedDelivery, core.AuditEntry, error) {
		schedule := int32(s.policy.MaxAttempts)
		rows, err := q.WebhookDeliveryRecover(ctx, dbq.WebhookDeliveryRecoverParams{
			OrganizationID: endpoint.OrganizationID, EndpointID: endpoint.ID, Since: since, Schedule: schedule,
		})
		if err != nil {
			return nil, core.AuditEntry{}, err
		}
		requeued := make([]RequeuedDelivery, len(rows))
		for i, r := range rows {
			requeued[i] = RequeuedDelivery{ID: r.ID, EventID: r.EventID, Requeues: r.Requeues}
		}
		missed, err := insertMissedDeliveries(ctx, q, endpoint, since, schedule)
		if err != nil {
			return nil, core.AuditEntry{}, err
		}
		requeued = append(requeued, missed...)
		queued = len(requeued)
		return requeued, core.AuditEntry{
			Action: "webhook_endpoint.deliveries_recovered",
			After:  map[string]any{"since": since, "requeued": len(rows), "missed": len(missed)},
		}, nil
	})
	return queued, err
}

// insertMissedDeliveries adds a delivery to endpoint, with a schedule of schedule attempts,
// of each event since since that it subscribes to and has none of: of the types publishing
// would have sent it (core.ReceivedEventTypes), so a deprecated alias of an event it receives
// under its successor's name is not sent beside it.
// An event a concurrent recover gave a delivery meanwhile is left to it (neither is refused).
func insertMissedDeliveries(ctx context.Context, q *dbq.Queries, endpoint dbq.WebhookEndpoint, since time.Time, schedule int32) ([]RequeuedDelivery, error) {
	events, err := q.WebhookEventListMissedByEndpoint(ctx, dbq.WebhookEventListMissedByEndpointParams{
		OrganizationID: endpoint.OrganizationID, EndpointID: endpoint.ID, Since: since,
		Floor: eventIDWindow(nil, &since, nil).floor, EndpointCreatedAt: endpoint.CreatedAt, EventTypes: core.ReceivedEventTypes(endpoint.EnabledEvents),
	})
	if err != nil || len(events) == 0 {
		return nil, err
	}
	ids := make([]uuid.UUID, len(events))
	for i := range events {
		if ids[i], err = uuid.NewV7(); err != nil {
			return nil, err
		}
	}
	rows, err := q.WebhookDeliveryInsertRecovered(ctx, dbq.WebhookDeliveryInsertRecoveredParams{
		Ids: ids, EventIds: events, OrganizationID: endpoint.OrganizationID, EndpointID: endpoint.ID, Schedule: schedule,
	})
	if err != nil {
		return nil, err
	}
	missed := make([]RequeuedDelivery, len(rows))
	for i, r := range rows {
		missed[i] = RequeuedDelivery{ID: r.ID, EventID: r.EventID}
	}
	return missed, nil
}

// requeue runs change, which queues deliveries of an enabled endpoint again, in one
// transaction with their jobs and the audit entry change describes. An endpoint disabled by a
// failing attempt at the same moment abandons what this queued (or its first attempt does):
// nothing is lost, recover queues it again once the endpoint is enabled.
func (s *WebhookDeliveryService) requeue(ctx context.Context, endpointID uuid.UUID,
	change func(ctx context.Context, q *dbq.Queries, endpoint dbq.WebhookEndpoint) ([]RequeuedDelivery, core.AuditEntry, error)) error {
	return s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		endpoint, err := visibleEndpoint(ctx, q, endpointID)
		if err != nil {
			return err
		}
		if endpoint.Status != core.WebhookEndpointEnabled {
			return core.Errorf(core.EInvalidTransition,
				"Webhook endpoint %s is disabled; enable it again before sending it deliveries.", endpointID)
		}
		requeued, entry, err := change(ctx, q, endpoint)
		if err != nil {
			return err
		}
		if err := s.db.enqueue(ctx, func(jobs Jobs, tx pgx.Tx) error {
			return jobs.RequeueWebhookDeliveries(ctx, tx, endpoint.OrganizationID, requeued)
		}); err != nil {
			return err
		}
		entry.OrganizationID, entry.ResourceType, entry.ResourceID = &endpoint.OrganizationID, "webhook_endpoint", endpoint.ID.String()
		return audit(ctx, q, entry)
	})
}

func webhookEventFromRow(r dbq.WebhookEvent) *core.WebhookEventRecord {
	return &core.WebhookEventRecord{ID: r.ID, Type: core.EventType(r.Type), CreatedAt: r.CreatedAt, OrganizationID: r.OrganizationID, Data: r.Data}
}

func webhookDeliveryFromRow(r dbq.WebhookDeliveryListRow) *core.WebhookDelivery {
	d := &core.WebhookDelivery{
		ID: r.ID, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, EndpointID: r.EndpointID, EventID: r.EventID, EventType: r.EventType,
		Status: r.Status, AttemptCount: int(r.Attempts), LastError: r.LastError, CompletedAt: r.CompletedAt,
	}
	switch r.Status {
	case deliveryPending:
		next := r.NextAttemptAt
		d.NextAttemptAt = &next
	case deliveryAbandoned:
		d.Status = core.WebhookDeliveryFailed
	}
	return d
}

// intPtr widens an optional int32 column.
func intPtr(v *int32) *int {
	if v == nil {
		return nil
	}
	n := int(*v)
	return &n
}

// StreamEvents implements core.WebhookDeliveryService.
func (s *WebhookDeliveryService) StreamEvents(ctx context.Context, f core.EventStreamFilter) ([]*core.WebhookEventRecord, error) {
	params := dbq.WebhookEventStreamParams{OrganizationID: f.OrganizationID, After: f.After, Sent: f.Except, RowLimit: int32(f.Limit)}
	if len(f.Types) > 0 {
		params.Types = f.Types
	}
	if params.Sent == nil {
		params.Sent = []uuid.UUID{}
	}
	rows, err := s.db.queries(ctx).WebhookEventStream(ctx, params)
	if err != nil {
		return nil, translate(err)
	}
	events := make([]*core.WebhookEventRecord, len(rows))
	for i, r := range rows {
		events[i] = webhookEventFromRow(r)
	}
	return events, nil
}
