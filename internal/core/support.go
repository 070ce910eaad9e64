package core

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// SupportCase is a customer's request for help. The JSON form is its audit summary.
type SupportCase struct {
	ID             uuid.UUID  `json:"id"`
	OrganizationID uuid.UUID  `json:"organization_id"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
	ProductID      *string    `json:"product_id"`
	ResourceID     *string    `json:"resource_id"`
	Severity       string     `json:"severity"`
	Category       string     `json:"category"`
	Status         string     `json:"status"`
	AssignedTeam   *string    `json:"assigned_team"`
	OpenedAt       time.Time  `json:"opened_at"`
	ResolvedAt     *time.Time `json:"resolved_at"`
	Subject        *string    `json:"subject"`
	Description    *string    `json:"description"`
	RequestID      *string    `json:"request_id"`
	Environment    *string    `json:"environment"`
	// Diagnostics is a flat JSON object (values string, number, boolean or null).
	Diagnostics json.RawMessage `json:"diagnostics"`
}

// Support case statuses the service sets itself.
const (
	SupportCaseOpen   = "open"
	SupportCaseClosed = "closed"
)

// SupportTeamFor routes a new case: billing questions to billing; technical, account and
// other questions to support; provisioning to provider_ops; and every critical case to
// provider_ops, whatever its category, because it needs the people who can act on the
// platform at once.
func SupportTeamFor(category, severity string) string {
	if severity == "critical" {
		return "provider_ops"
	}
	switch category {
	case "billing":
		return "billing"
	case "provisioning":
		return "provider_ops"
	default:
		return "support"
	}
}

// SupportCaseCreate is the input of SupportCaseService.CreateSupportCase.
type SupportCaseCreate struct {
	OrganizationID uuid.UUID // must be one the caller may act for (Principal.ActsFor)
	Subject        string
	Description    string
	Severity       string
	Category       string
	ProductID      *string
	ResourceID     *string
	RequestID      *string
	Environment    *string
	Diagnostics    json.RawMessage // a flat JSON object; nil means {}
}

// SupportCaseFilter selects cases for SupportCaseService.ListSupportCases.
type SupportCaseFilter struct {
	OrganizationID uuid.UUID // required; one the caller may act for
	Status         *string   // nil: any status
	Cursor         *string   // the next_cursor of the previous page
	Limit          int
}

// SupportCaseService manages support cases. An organization principal sees only its own
// cases: another organization's case is ENotFound, another organization_id EForbidden.
type SupportCaseService interface {
	// CreateSupportCase opens a case routed by SupportTeamFor and audits it. A product_id
	// that names no product, or a resource_id that names no resource of the organization, is
	// EUnprocessable; so is an organization that does not exist.
	CreateSupportCase(ctx context.Context, in SupportCaseCreate) (*SupportCase, error)
	// ListSupportCases returns a page of cases in creation order and the cursor of the next page.
	ListSupportCases(ctx context.Context, f SupportCaseFilter) ([]*SupportCase, *string, error)
	FindSupportCaseByID(ctx context.Context, id uuid.UUID) (*SupportCase, error)
	// CloseSupportCase closes a case (resolved_at set if it was not) and audits it. A closed
	// case is EInvalidTransition.
	CloseSupportCase(ctx context.Context, id uuid.UUID) (*SupportCase, error)
}
