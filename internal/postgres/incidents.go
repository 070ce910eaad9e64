package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// IncidentService implements core.IncidentService. Every change holds the product's row
// (ProductLockForIncidents) for its transaction, and resume and the end of provisioning hold
// it shared before they read the product's open incidents (SubscriptionService.act,
// DB.ProvisionSubscription): so two operators resolving at once, or a service starting while
// an incident opens, always end with the service status the open incidents imply.
type IncidentService struct {
	db  *DB
	now func() time.Time
}

var _ core.IncidentService = (*IncidentService)(nil)

// NewIncidentService returns the incident service over d.
func NewIncidentService(d *DB) *IncidentService { return &IncidentService{db: d, now: now} }

// OpenIncident implements core.IncidentService.
func (s *IncidentService) OpenIncident(ctx context.Context, productID uuid.UUID, summary string) (*core.Incident, error) {
	if err := incidentsByOperatorOnly(ctx); err != nil {
		return nil, err
	}
	if err := core.CheckIncidentSummary(summary); err != nil {
		return nil, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	var inc *core.Incident
	err = s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		if err := lockProductIncidents(ctx, q, productID); err != nil {
			return err
		}
		at := s.now()
		row, err := q.ProductIncidentInsert(ctx, dbq.ProductIncidentInsertParams{ID: id, ProductID: productID, Summary: summary, OpenedAt: at})
		if err != nil {
			return err
		}
		inc = incidentFromRow(row)
		if err := auditIncident(ctx, q, "product_incident.opened", nil, inc); err != nil {
			return err
		}
		return s.moveSubscriptions(ctx, q, inc, core.IncidentMoves(true), core.EventSubscriptionDegraded, at)
	})
	return inc, err
}

// ResolveIncident implements core.IncidentService.
func (s *IncidentService) ResolveIncident(ctx context.Context, productID, incidentID uuid.UUID) (*core.Incident, error) {
	if err := incidentsByOperatorOnly(ctx); err != nil {
		return nil, err
	}
	var inc *core.Incident
	err := s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		if err := lockProductIncidents(ctx, q, productID); err != nil {
			return err
		}
		row, err := q.ProductIncidentGetByID(ctx, dbq.ProductIncidentGetByIDParams{ProductID: productID, ID: incidentID})
		if err != nil {
			return incidentNotFound(err, productID, incidentID)
		}
		before := incidentFromRow(row)
		if err := before.CheckResolve(); err != nil {
			return err
		}
		at := s.now()
		if row, err = q.ProductIncidentResolve(ctx, dbq.ProductIncidentResolveParams{ProductID: productID, ID: incidentID, ResolvedAt: &at}); err != nil {
			return err
		}
		inc = incidentFromRow(row)
		if err := auditIncident(ctx, q, "product_incident.resolved", before, inc); err != nil {
			return err
		}
		stillOpen, err := q.ProductIncidentOpenExists(ctx, productID)
		if err != nil || stillOpen {
			return err // another open incident keeps the services degraded
		}
		return s.moveSubscriptions(ctx, q, inc, core.IncidentMoves(false), core.EventSubscriptionRestored, at)
	})
	return inc, err
}

// moveSubscriptions applies move to every subscription of the incident's product, of every
// organization, at once: it locks those whose service status is move.From, stores move.To
// for all of them in one statement, and records each change in its organization's audit
// trail (reason: the incident) with its webhook event, whose name is also the audit action.
func (s *IncidentService) moveSubscriptions(ctx context.Context, q *dbq.Queries, inc *core.Incident, move core.IncidentMove, event core.EventType, at time.Time) error {
	locked, err := q.SubscriptionLockByProductServiceAnyOrganization(ctx, dbq.SubscriptionLockByProductServiceAnyOrganizationParams{
		ProductID: inc.ProductID, ServiceStatus: move.From,
	})
	if err != nil || len(locked) == 0 {
		return err
	}
	before := make(map[uuid.UUID]*core.Subscription, len(locked))
	ids := make([]uuid.UUID, len(locked))
	for i, r := range locked {
		if before[r.ID], err = subscriptionFromRow(r); err != nil {
			return err
		}
		ids[i] = r.ID
	}
	moved, err := q.SubscriptionSetServiceAnyOrganization(ctx, dbq.SubscriptionSetServiceAnyOrganizationParams{Ids: ids, ServiceStatus: move.To, UpdatedAt: at})
	if err != nil {
		return err
	}
	reason := fmt.Sprintf("Incident %s (%s): %s", inc.ID, inc.Status, inc.Summary)
	for _, r := range moved {
		sub, err := subscriptionFromRow(r)
		if err != nil {
			return err
		}
		if err := audit(ctx, q, core.AuditEntry{
			OrganizationID: &sub.OrganizationID,
			Action:         string(event),
			ResourceType:   "subscription",
			ResourceID:     sub.ID.String(),
			Before:         before[sub.ID],
			After:          sub,
			Reason:         reason,
		}); err != nil {
			return err
		}
		if err := s.db.publish(ctx, q, sub.OrganizationID, event, sub); err != nil {
			return err
		}
	}
	return nil
}

// FindIncident implements core.IncidentService.
func (s *IncidentService) FindIncident(ctx context.Context, productID, incidentID uuid.UUID) (*core.Incident, error) {
	q := s.db.queries(ctx)
	if err := s.readableProduct(ctx, q, productID); err != nil {
		return nil, err
	}
	row, err := q.ProductIncidentGetByID(ctx, dbq.ProductIncidentGetByIDParams{ProductID: productID, ID: incidentID})
	if err != nil {
		return nil, incidentNotFound(err, productID, incidentID)
	}
	return incidentFromRow(row), nil
}

// ListIncidents implements core.IncidentService. One more row than the page is read to know
// whether another page follows.
func (s *IncidentService) ListIncidents(ctx context.Context, productID uuid.UUID, f core.IncidentFilter) (*core.IncidentPage, error) {
	limit := f.Limit
	after, err := afterCursor(f.Cursor)
	if err != nil {
		return nil, err
	}
	q := s.db.queries(ctx)
	if err := s.readableProduct(ctx, q, productID); err != nil {
		return nil, err
	}
	var rows []dbq.ProductIncident
	if f.Status != "" {
		rows, err = q.ProductIncidentListByStatus(ctx, dbq.ProductIncidentListByStatusParams{
			ProductID: productID, Status: f.Status, After: orLeast(after), MaxRows: int32(limit + 1)})
	} else {
		rows, err = q.ProductIncidentList(ctx, dbq.ProductIncidentListParams{ProductID: productID, After: after, MaxRows: int32(limit + 1)})
	}
	if err != nil {
		return nil, translate(err)
	}
	items := make([]*core.Incident, len(rows))
	for i, r := range rows {
		items[i] = incidentFromRow(r)
	}
	p := &core.IncidentPage{}
	p.Items, p.NextCursor = page(items, limit, func(i *core.Incident) uuid.UUID { return i.ID })
	return p, nil
}

// incidentsByOperatorOnly refuses every principal but the operator: only it declares and resolves incidents.
func incidentsByOperatorOnly(ctx context.Context) error {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return err
	}
	if !p.IsOperator() {
		return core.Errorf(core.EForbidden, "Only the operator may declare or resolve incidents.")
	}
	return nil
}

// readableProduct checks that the product whose incidents are read exists and that the
// principal sees it in the catalogue (an internal_only product is 404 to other organizations).
func (s *IncidentService) readableProduct(ctx context.Context, q *dbq.Queries, productID uuid.UUID) error {
	row, err := q.ProductGetByID(ctx, productID)
	if err == nil {
		audience, err := s.db.catalogueAudience(ctx, q)
		if err != nil {
			return err
		}
		if !audience.SeesProduct(row.Availability) {
			return notFoundAs(pgx.ErrNoRows, "Product %s does not exist.", productID)
		}
	}
	return notFoundAs(err, "Product %s does not exist.", productID)
}

// lockProductIncidents holds the product's incidents still until the transaction ends.
func lockProductIncidents(ctx context.Context, q *dbq.Queries, productID uuid.UUID) error {
	_, err := q.ProductLockForIncidents(ctx, productID)
	return notFoundAs(err, "Product %s does not exist.", productID)
}

// holdIncidentsOfSubscription holds the incidents of the subscription's product still (shared)
// and reports whether one is open: called before the subscription's row is locked, the order
// every transaction takes these locks in. Another organization's subscription is ENotFound
// and locks nothing.
func holdIncidentsOfSubscription(ctx context.Context, q *dbq.Queries, subscriptionID uuid.UUID) (bool, error) {
	productID, err := owned(ctx,
		func(org uuid.UUID) (uuid.UUID, error) {
			return q.ProductLockForSubscription(ctx, dbq.ProductLockForSubscriptionParams{OrganizationID: org, ID: subscriptionID})
		},
		func() (uuid.UUID, error) { return q.ProductLockForSubscriptionAnyOrganization(ctx, subscriptionID) },
		"Subscription", subscriptionID)
	if err != nil {
		return false, err
	}
	return q.ProductIncidentOpenExists(ctx, productID)
}

func incidentNotFound(err error, productID, incidentID uuid.UUID) error {
	return notFoundAs(err, "Incident %s of product %s does not exist.", incidentID, productID)
}

func auditIncident(ctx context.Context, q *dbq.Queries, action string, before, after *core.Incident) error {
	e := core.AuditEntry{Action: action, ResourceType: "product_incident", ResourceID: after.ID.String(), After: after}
	if before != nil {
		e.Before = before
	}
	return audit(ctx, q, e)
}

func incidentFromRow(r dbq.ProductIncident) *core.Incident {
	return &core.Incident{
		ID:         r.ID,
		CreatedAt:  r.CreatedAt,
		UpdatedAt:  r.UpdatedAt,
		ProductID:  r.ProductID,
		Summary:    r.Summary,
		Status:     r.Status,
		OpenedAt:   r.OpenedAt,
		ResolvedAt: r.ResolvedAt,
	}
}
