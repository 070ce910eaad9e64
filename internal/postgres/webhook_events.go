package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// publish stores webhook event t of organization orgID, its data the resource v as d.Events
// renders it, and queues a delivery to every enabled endpoint of the organization subscribed
// to t (and to none of except), all in the caller's transaction q: the event is stored
// exactly when its change commits (the outbox). Each service calls it next to the change the
// event reports.
func (d *DB) publish(ctx context.Context, q *dbq.Queries, orgID uuid.UUID, t core.EventType, v any, except ...core.EventType) error {
	p := new(Pipeline)
	deliver, err := d.queuePublish(ctx, p, orgID, t, v, except...)
	if err != nil {
		return err
	}
	if err := p.Run(q); err != nil {
		return err
	}
	return deliver(q)
}

// queuePublish is publish with the event's statement queued in p: the function returned
// queues the deliveries, once p has been sent, through q (the transaction's).
func (d *DB) queuePublish(ctx context.Context, p *Pipeline, orgID uuid.UUID, t core.EventType, v any, except ...core.EventType) (func(q *dbq.Queries) error, error) {
	data, err := d.eventData(t, v)
	if err != nil {
		return nil, err
	}
	eventID, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	exceptTypes := make([]string, len(except))
	for i, e := range except {
		exceptTypes[i] = string(e)
	}
	var endpoints []uuid.UUID
	p.Add(func(q *dbq.Queries) (err error) {
		endpoints, err = q.WebhookEventInsertListSubscribed(ctx, dbq.WebhookEventInsertListSubscribedParams{
			ID: eventID, OrganizationID: orgID, Type: string(t), Data: data, ExceptTypes: exceptTypes,
		})
		return err
	})
	return func(q *dbq.Queries) error {
		for _, endpointID := range endpoints {
			if err := d.insertWebhookDelivery(ctx, q, orgID, eventID, endpointID); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// errNoEventEncoder is the error of publishing through a DB without an encoder.
var errNoEventEncoder = errors.New("postgres: DB.Events is not set; webhook events cannot be rendered")

// storeEvent stores webhook event t with data v and returns its id, queuing no delivery.
func (d *DB) storeEvent(ctx context.Context, q *dbq.Queries, orgID uuid.UUID, t core.EventType, v any) (uuid.UUID, error) {
	data, err := d.eventData(t, v)
	if err != nil {
		return uuid.Nil, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.Nil, err
	}
	_, err = q.WebhookEventInsert(ctx, dbq.WebhookEventInsertParams{ID: id, OrganizationID: orgID, Type: string(t), Data: data})
	return id, err
}

// eventData is the data of webhook event t reporting v, as d.Events renders it.
func (d *DB) eventData(t core.EventType, v any) ([]byte, error) {
	if d.Events == nil {
		return nil, errNoEventEncoder
	}
	data, err := d.Events.Encode(t, v)
	if err != nil {
		return nil, fmt.Errorf("webhook event %s: %w", t, err)
	}
	return data, nil
}

// insertWebhookDelivery stores a delivery of event eventID to endpoint endpointID and queues
// its first attempt, both in the transaction of ctx (the one q runs in).
func (d *DB) insertWebhookDelivery(ctx context.Context, q *dbq.Queries, orgID, eventID, endpointID uuid.UUID) error {
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	if err := q.WebhookDeliveryInsert(ctx, dbq.WebhookDeliveryInsertParams{ID: id, OrganizationID: orgID, EventID: eventID, EndpointID: endpointID}); err != nil {
		return err
	}
	return d.enqueue(ctx, func(jobs Jobs, tx pgx.Tx) error { return jobs.InsertWebhookDelivery(ctx, tx, orgID, eventID, id) })
}
