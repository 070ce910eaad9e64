package core

import (
	"context"
	"encoding/json"
	"slices"
	"time"
	"unicode/utf8"

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

// Support case statuses (docs/design.md, "Support workflow").
const (
	SupportCaseOpen              = "open"
	SupportCaseInProgress        = "in_progress"
	SupportCaseWaitingOnCustomer = "waiting_on_customer"
	SupportCaseResolved          = "resolved"
	SupportCaseClosed            = "closed"
)

// supportCaseMoves is the support workflow: the statuses a case may move to from each status.
// The operator walks a case open → in_progress → waiting_on_customer → resolved → closed, sends
// it back to in_progress from waiting_on_customer (a customer's message does so too) and from
// resolved (a reopening). Closing is allowed from every status but closed, because the
// specification's close operation closes a case in any state; closed is final.
var supportCaseMoves = map[string][]string{
	SupportCaseOpen:              {SupportCaseInProgress, SupportCaseClosed},
	SupportCaseInProgress:        {SupportCaseWaitingOnCustomer, SupportCaseClosed},
	SupportCaseWaitingOnCustomer: {SupportCaseResolved, SupportCaseInProgress, SupportCaseClosed},
	SupportCaseResolved:          {SupportCaseInProgress, SupportCaseClosed},
	SupportCaseClosed:            nil,
}

// SupportCaseUpdate is a change to a case's workflow state; unset fields stay as they are.
// AssignedTeam set to nil unassigns the case.
type SupportCaseUpdate struct {
	Status       Field[string]
	AssignedTeam Field[string]
}

// Apply changes c as u asks at now and reports whether anything changed. A status equal to the
// current one is not a move; any other must be in the workflow table, else EInvalidTransition
// naming the current status. Nothing of a closed case changes (EInvalidTransition). resolved_at
// is set when the case is resolved, cleared when a resolved case is reopened (it always tells
// when the current resolution happened), and set on closing unless the case was resolved.
func (c *SupportCase) Apply(u SupportCaseUpdate, now time.Time) (changed bool, err error) {
	to := c.Status
	if u.Status.Set && u.Status.Value != nil {
		to = *u.Status.Value
	}
	teamChanges := u.AssignedTeam.Set && !equalPtr(u.AssignedTeam.Value, c.AssignedTeam)
	if to == c.Status && !teamChanges {
		return false, nil
	}
	if c.Status == SupportCaseClosed {
		return false, Errorf(EInvalidTransition, "Support case %s is closed, which is final: nothing of it changes.", c.ID)
	}
	if to != c.Status {
		if !slices.Contains(supportCaseMoves[c.Status], to) {
			return false, Errorf(EInvalidTransition, "Cannot move support case %s to %s: its status is %s, which moves only to %s.",
				c.ID, to, c.Status, orList(supportCaseMoves[c.Status]))
		}
		switch {
		case to == SupportCaseResolved:
			c.ResolvedAt = &now
		case to == SupportCaseClosed:
			if c.ResolvedAt == nil {
				c.ResolvedAt = &now
			}
		case c.Status == SupportCaseResolved: // reopened
			c.ResolvedAt = nil
		}
		c.Status = to
	}
	if teamChanges {
		c.AssignedTeam = u.AssignedTeam.Value
	}
	c.UpdatedAt = now
	return true, nil
}

// Close is the close operation: the workflow's move to closed at now. Unlike a PATCH sending
// the current status, closing a closed case is an action that cannot happen:
// EInvalidTransition.
func (c *SupportCase) Close(now time.Time) error {
	if c.Status == SupportCaseClosed {
		return Errorf(EInvalidTransition, "Support case %s is already closed.", c.ID)
	}
	_, err := c.Apply(moveTo(SupportCaseClosed), now)
	return err
}

// CheckMessage refuses a message on a closed case (EInvalidTransition).
func (c *SupportCase) CheckMessage() error {
	if c.Status == SupportCaseClosed {
		return Errorf(EInvalidTransition, "Support case %s is closed; a closed case takes no messages.", c.ID)
	}
	return nil
}

// AnswerFromCustomer applies the customer's message to the workflow at now: a case waiting on
// the customer goes back to in_progress. It reports whether the case changed.
func (c *SupportCase) AnswerFromCustomer(now time.Time) bool {
	if c.Status != SupportCaseWaitingOnCustomer {
		return false
	}
	changed, err := c.Apply(moveTo(SupportCaseInProgress), now)
	return err == nil && changed // the table allows the move
}

// moveTo is the update that moves a case to status.
func moveTo(status string) SupportCaseUpdate {
	return SupportCaseUpdate{Status: Field[string]{Set: true, Value: &status}}
}

// Authors of support case messages: the case's organization, or the provider's staff.
const (
	SupportAuthorCustomer = "customer"
	SupportAuthorProvider = "provider"
)

// SupportAuthorOf is the author side of messages p writes: the operator writes as the provider,
// an organization as the customer.
func SupportAuthorOf(p *Principal) string {
	if p.IsOperator() {
		return SupportAuthorProvider
	}
	return SupportAuthorCustomer
}

// SupportCaseMessage is one message of a case's conversation. Its JSON form is its audit
// summary, which keeps the body's length but not the body: the conversation is the record of
// the text, and the audit trail, read more widely and kept apart, need not hold up to 8000
// characters of a customer's words a second time.
type SupportCaseMessage struct {
	ID             uuid.UUID `json:"id"`
	OrganizationID uuid.UUID `json:"organization_id"`
	SupportCaseID  uuid.UUID `json:"support_case_id"`
	Author         string    `json:"author"`
	Body           string    `json:"-"`
	CreatedAt      time.Time `json:"created_at"`
}

// MarshalJSON renders the audit summary: the message with body_length instead of its body.
func (m *SupportCaseMessage) MarshalJSON() ([]byte, error) {
	type summary SupportCaseMessage // without this method
	return json.Marshal(struct {
		*summary
		BodyLength int `json:"body_length"`
	}{(*summary)(m), utf8.RuneCountInString(m.Body)})
}

// SupportCaseMessageFilter selects a page of one case's messages.
type SupportCaseMessageFilter struct {
	SupportCaseID uuid.UUID
	Cursor        *string // the next_cursor of the previous page
	Limit         int
}

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
	// CloseSupportCase closes a case (SupportCase.Close) and audits it. A closed case is
	// EInvalidTransition.
	CloseSupportCase(ctx context.Context, id uuid.UUID) (*SupportCase, error)
	// UpdateSupportCase moves a case along the workflow and routes it (SupportCase.Apply),
	// audited when something changed. Operator only: an organization is EForbidden before any
	// case is read. ENotFound, EInvalidTransition.
	UpdateSupportCase(ctx context.Context, id uuid.UUID, u SupportCaseUpdate) (*SupportCase, error)
	// CreateSupportCaseMessage adds a message by the caller's side (SupportAuthorOf) to a case
	// the caller may see, and applies a customer's answer to the workflow
	// (SupportCase.AnswerFromCustomer); audited. ENotFound, EInvalidTransition on a closed case.
	CreateSupportCaseMessage(ctx context.Context, caseID uuid.UUID, body string) (*SupportCaseMessage, error)
	// ListSupportCaseMessages returns a page of a case's messages, oldest first, and the cursor
	// of the next page. ENotFound for a case the caller may not see.
	ListSupportCaseMessages(ctx context.Context, f SupportCaseMessageFilter) ([]*SupportCaseMessage, *string, error)
}
