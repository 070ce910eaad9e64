package core

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Incident statuses.
const (
	IncidentOpen     = "open"
	IncidentResolved = "resolved"
)

// Incident is an incident the operator declared on a product (docs/design.md, "Incidents and
// degraded service"). It is the provider's, not an organization's: every principal may read
// it. The JSON form is its audit summary.
type Incident struct {
	ID         uuid.UUID  `json:"id"`
	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
	ProductID  uuid.UUID  `json:"product_id"`
	Summary    string     `json:"summary"`
	Status     string     `json:"status"`
	OpenedAt   time.Time  `json:"opened_at"`
	ResolvedAt *time.Time `json:"resolved_at"`
}

// CheckIncidentSummary refuses a summary of white space only: customers read it.
func CheckIncidentSummary(summary string) error {
	if strings.TrimSpace(summary) != "" {
		return nil
	}
	const msg = "The summary must say what is wrong; it is white space only."
	return &Error{Code: EUnprocessable, Message: msg, Fields: []FieldError{{Location: "body", Pointer: "/summary", Code: "blank", Message: msg}}}
}

// CheckResolve returns nil when the incident may be resolved: only an open one may.
func (i *Incident) CheckResolve() error {
	if i.Status != IncidentOpen {
		return Errorf(EInvalidTransition, "Cannot resolve incident %s: its status is %s; resolve is allowed only from status open.", i.ID, i.Status)
	}
	return nil
}

// IncidentFilter selects a page of a product's incidents.
type IncidentFilter struct {
	// Status, when not empty, keeps the incidents of that status.
	Status string
	// Cursor is the NextCursor of the previous page; nil for the first page.
	Cursor *string
	// Limit is the page size, 1..MaxPageLimit.
	Limit int
}

// IncidentPage is one page of incidents. NextCursor is nil on the last page.
type IncidentPage struct {
	Items      []*Incident
	NextCursor *string
}

// IncidentService declares and resolves product incidents. Declaring and resolving are the
// operator's (EForbidden for anyone else, before anything is read); reading is open to every
// principal. An unknown product, or an incident of another product, is ENotFound.
type IncidentService interface {
	// OpenIncident declares an incident on the product: in the same transaction every live
	// subscription of it whose service is active becomes degraded (IncidentMoves).
	OpenIncident(ctx context.Context, productID uuid.UUID, summary string) (*Incident, error)
	// ResolveIncident resolves an open incident (EInvalidTransition otherwise); when it was
	// the product's last open one, its degraded subscriptions become active again.
	ResolveIncident(ctx context.Context, productID, incidentID uuid.UUID) (*Incident, error)
	// FindIncident returns one incident of the product.
	FindIncident(ctx context.Context, productID, incidentID uuid.UUID) (*Incident, error)
	// ListIncidents returns a page of the product's incidents in id (declaration) order. A
	// cursor this service did not issue is EValidation.
	ListIncidents(ctx context.Context, productID uuid.UUID, f IncidentFilter) (*IncidentPage, error)
}
