package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// webhookEventRule says which webhook event an audited action publishes and how the audit
// entry's After value becomes the event's data, in the schema the document gives the type.
type webhookEventRule struct {
	eventType string
	data      func(after any) (any, error)
}

// webhookEvents maps audit actions to the webhook events they publish. audit() consults it in
// the transaction of every state change, so an event is stored exactly when its change
// commits (the outbox). Actions not listed publish nothing. Where the names differ:
// provisioning completing activates the subscription, and selecting a plan changes it.
var webhookEvents = map[string]webhookEventRule{
	"subscription.created":          {core.WebhookEventSubscriptionCreated, subscriptionEvent},
	"subscription.provisioned":      {core.WebhookEventSubscriptionActivated, subscriptionEvent},
	"subscription.plan_selected":    {core.WebhookEventSubscriptionPlanChanged, subscriptionEvent},
	"subscription.plan_changed":     {core.WebhookEventSubscriptionPlanChanged, subscriptionEvent},
	"subscription.cancelled":        {core.WebhookEventSubscriptionCancelled, subscriptionEvent},
	"subscription.reactivated":      {core.WebhookEventSubscriptionReactivated, subscriptionEvent},
	"subscription.suspended":        {core.WebhookEventSubscriptionSuspended, subscriptionEvent},
	"subscription.resumed":          {core.WebhookEventSubscriptionResumed, subscriptionEvent},
	"subscription.terminated":       {core.WebhookEventSubscriptionTerminated, subscriptionEvent},
	"billing_invoice.issued":        {core.WebhookEventBillingInvoiceIssued, billingInvoiceEvent},
	"connected_business.created":    {core.WebhookEventConnectedBusinessCreated, connectedBusinessEvent},
	"connected_business.updated":    {core.WebhookEventConnectedBusinessUpdated, connectedBusinessEvent},
	"api_key.created":               {core.WebhookEventAPIKeyCreated, apiKeyEvent},
	"api_key.revoked":               {core.WebhookEventAPIKeyRevoked, apiKeyEvent},
	"api_key.rotated":               {core.WebhookEventAPIKeyRotated, rotatedAPIKeyEvent},
	"support_case.opened":           {core.WebhookEventSupportCaseOpened, supportCaseEvent},
	"support_case.closed":           {core.WebhookEventSupportCaseClosed, supportCaseEvent},
	"spend_control.warning_reached": {core.WebhookEventSpendControlWarningReached, spendControlEvent},
	"spend_control.hard_limit_reached": {
		core.WebhookEventSpendControlHardLimitReached, spendControlEvent},
	"tax_invoice.generated": {core.WebhookEventTaxInvoiceGenerated, taxInvoiceEvent},
}

// publishWebhookEvent stores the webhook event of audit entry e, if its action has one, and
// queues a delivery to every enabled endpoint of the organization subscribed to its type, all
// in the caller's transaction q.
func publishWebhookEvent(ctx context.Context, q *dbq.Queries, e core.AuditEntry) error {
	rule, ok := webhookEvents[e.Action]
	if !ok || e.OrganizationID == nil {
		return nil
	}
	data, err := rule.data(e.After)
	if err != nil {
		return fmt.Errorf("webhook event of %s: %w", e.Action, err)
	}
	eventID, err := insertWebhookEvent(ctx, q, *e.OrganizationID, rule.eventType, data)
	if err != nil {
		return err
	}
	endpoints, err := q.WebhookEndpointListSubscribed(ctx, dbq.WebhookEndpointListSubscribedParams{
		OrganizationID: *e.OrganizationID, EventType: rule.eventType,
	})
	if err != nil {
		return err
	}
	for _, endpointID := range endpoints {
		if err := insertWebhookDelivery(ctx, q, *e.OrganizationID, eventID, endpointID); err != nil {
			return err
		}
	}
	return nil
}

func insertWebhookEvent(ctx context.Context, q *dbq.Queries, orgID uuid.UUID, eventType string, data any) (uuid.UUID, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.Nil, err
	}
	b, err := json.Marshal(data)
	if err != nil {
		return uuid.Nil, err
	}
	_, err = q.WebhookEventInsert(ctx, dbq.WebhookEventInsertParams{ID: id, OrganizationID: orgID, Type: eventType, Data: b})
	return id, err
}

func insertWebhookDelivery(ctx context.Context, q *dbq.Queries, orgID, eventID, endpointID uuid.UUID) error {
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	if err := q.WebhookDeliveryInsert(ctx, dbq.WebhookDeliveryInsertParams{ID: id, OrganizationID: orgID, EventID: eventID, EndpointID: endpointID}); err != nil {
		return err
	}
	return enqueue(q, func(jobs Jobs, tx pgx.Tx) error { return jobs.InsertWebhookDelivery(ctx, tx, orgID, id) })
}

// webhookEventBody is the body of a delivery (the document's WebhookEvent).
type webhookEventBody struct {
	ID             uuid.UUID       `json:"id"`
	Type           string          `json:"type"`
	CreatedAt      time.Time       `json:"created_at"`
	OrganizationID uuid.UUID       `json:"organization_id"`
	Data           json.RawMessage `json:"data"`
}

// The data of each event type, field for field the schema of the document. The audit
// summaries are core structs whose JSON is close but not equal (internal fields, derived
// fields), so each is converted here, explicitly; a test validates every event against the
// document.

// subscriptionEventData is the document's Subscription.
type subscriptionEventData struct {
	ID                    uuid.UUID  `json:"id"`
	CreatedAt             time.Time  `json:"created_at"`
	UpdatedAt             time.Time  `json:"updated_at"`
	OrganizationID        uuid.UUID  `json:"organization_id"`
	ProductID             uuid.UUID  `json:"product_id"`
	PlanID                uuid.UUID  `json:"plan_id"`
	CommercialStatus      string     `json:"commercial_status"`
	ServiceStatus         string     `json:"service_status"`
	BillingStatus         string     `json:"billing_status"`
	ProvisioningRequestID *string    `json:"provisioning_request_id"`
	StartedAt             time.Time  `json:"started_at"`
	RenewsAt              *time.Time `json:"renews_at"`
	SuspendedAt           *time.Time `json:"suspended_at"`
	TerminatedAt          *time.Time `json:"terminated_at"`
}

func subscriptionEvent(after any) (any, error) {
	s, err := summaryAs[core.Subscription](after)
	if err != nil {
		return nil, err
	}
	return subscriptionEventData{
		ID: s.ID, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt, OrganizationID: s.OrganizationID,
		ProductID: s.ProductID, PlanID: s.PlanID, CommercialStatus: s.CommercialStatus,
		ServiceStatus: s.ServiceStatus, BillingStatus: s.BillingStatus, ProvisioningRequestID: s.ProvisioningRequestID,
		StartedAt: s.StartedAt, RenewsAt: s.RenewsAt, SuspendedAt: s.SuspendedAt, TerminatedAt: s.TerminatedAt,
	}, nil
}

// billingInvoiceEventData is the document's BillingInvoice.
type billingInvoiceEventData struct {
	ID             uuid.UUID `json:"id"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
	OrganizationID uuid.UUID `json:"organization_id"`
	BillingPeriod  struct {
		Start string `json:"start"`
		End   string `json:"end"`
	} `json:"billing_period"`
	Subtotal          int64      `json:"subtotal"`
	Discount          int64      `json:"discount"`
	Tax               int64      `json:"tax"`
	Total             int64      `json:"total"`
	Currency          string     `json:"currency"`
	Status            string     `json:"status"`
	TaxDocumentStatus string     `json:"tax_document_status"`
	IssuedAt          *time.Time `json:"issued_at"`
	DueAt             *time.Time `json:"due_at"`
	PaidAt            *time.Time `json:"paid_at"`
}

func billingInvoiceEvent(after any) (any, error) {
	inv, err := summaryAs[core.BillingInvoice](after)
	if err != nil {
		return nil, err
	}
	d := billingInvoiceEventData{
		ID: inv.ID, CreatedAt: inv.CreatedAt, UpdatedAt: inv.UpdatedAt, OrganizationID: inv.OrganizationID,
		Subtotal: inv.Subtotal, Discount: inv.Discount, Tax: inv.Tax, Total: inv.Total, Currency: inv.Currency,
		Status: inv.Status, TaxDocumentStatus: inv.TaxDocumentStatus, IssuedAt: inv.IssuedAt, DueAt: inv.DueAt, PaidAt: inv.PaidAt,
	}
	d.BillingPeriod.Start, d.BillingPeriod.End = inv.PeriodStart.Format(time.DateOnly), inv.PeriodEnd.Format(time.DateOnly)
	return d, nil
}

// connectedBusinessEventData is the document's ConnectedBusiness (the summary, without the
// resources of the detail).
type connectedBusinessEventData struct {
	ID                              uuid.UUID `json:"id"`
	CreatedAt                       time.Time `json:"created_at"`
	UpdatedAt                       time.Time `json:"updated_at"`
	PlatformOrganizationID          uuid.UUID `json:"platform_organization_id"`
	ExternalReference               string    `json:"external_reference"`
	DisplayName                     string    `json:"display_name"`
	LegalNameAr                     *string   `json:"legal_name_ar"`
	LegalNameEn                     string    `json:"legal_name_en"`
	VatReference                    *string   `json:"vat_reference"`
	CommercialRegistrationReference *string   `json:"commercial_registration_reference"`
	NationalAddressReference        *string   `json:"national_address_reference"`
	LifecycleStatus                 string    `json:"lifecycle_status"`
}

func connectedBusinessEvent(after any) (any, error) {
	cb, err := summaryAs[core.ConnectedBusiness](after)
	if err != nil {
		return nil, err
	}
	return connectedBusinessEventData{
		ID: cb.ID, CreatedAt: cb.CreatedAt, UpdatedAt: cb.UpdatedAt, PlatformOrganizationID: cb.PlatformOrganizationID,
		ExternalReference: cb.ExternalReference, DisplayName: cb.DisplayName, LegalNameAr: cb.LegalNameAr,
		LegalNameEn: cb.LegalNameEn, VatReference: cb.VatReference,
		CommercialRegistrationReference: cb.CommercialRegistrationReference,
		NationalAddressReference:        cb.NationalAddressReference, LifecycleStatus: cb.LifecycleStatus,
	}, nil
}

// apiKeyEventData is the document's ApiKey: never a secret, with the status derived when the
// event happened.
type apiKeyEventData struct {
	ID              uuid.UUID  `json:"id"`
	CreatedAt       time.Time  `json:"created_at"`
	UpdatedAt       time.Time  `json:"updated_at"`
	OrganizationID  uuid.UUID  `json:"organization_id"`
	Name            string     `json:"name"`
	Prefix          string     `json:"prefix"`
	Environment     string     `json:"environment"`
	Scopes          []string   `json:"scopes"`
	AllowedOrigins  []string   `json:"allowed_origins"`
	AllowedIPs      []string   `json:"allowed_ips"`
	RateLimitPolicy *string    `json:"rate_limit_policy"`
	Status          string     `json:"status"`
	CreatedBy       string     `json:"created_by"`
	LastUsedAt      *time.Time `json:"last_used_at"`
	ExpiresAt       *time.Time `json:"expires_at"`
	RevokedAt       *time.Time `json:"revoked_at"`
}

func apiKeyEvent(after any) (any, error) {
	k, err := summaryAs[core.APIKey](after)
	if err != nil {
		return nil, err
	}
	return apiKeyEventData{
		ID: k.ID, CreatedAt: k.CreatedAt, UpdatedAt: k.UpdatedAt, OrganizationID: k.OrganizationID,
		Name: k.Name, Prefix: k.Prefix, Environment: k.Environment, Scopes: nonNil(k.Scopes),
		AllowedOrigins: nonNil(k.AllowedOrigins), AllowedIPs: nonNil(k.AllowedIPs), RateLimitPolicy: k.RateLimitPolicy,
		Status: k.Status(time.Now()), CreatedBy: k.CreatedBy, LastUsedAt: k.LastUsedAt, ExpiresAt: k.ExpiresAt, RevokedAt: k.RevokedAt,
	}, nil
}

// apiKeyRotation is the audit summary of a rotation; its event is about the rotated (old) key.
type apiKeyRotation struct {
	Old         *core.APIKey `json:"old"`
	Replacement core.APIKey  `json:"replacement"`
}

func rotatedAPIKeyEvent(after any) (any, error) {
	r, err := summaryAs[apiKeyRotation](after)
	if err != nil {
		return nil, err
	}
	return apiKeyEvent(r.Old)
}

// supportCaseEvent passes the summary through: support cases are not implemented yet, and
// their audit summary must be the document's SupportCase when they are (the event test lists
// these types as unreachable until then, and fails once support cases answer).
func supportCaseEvent(after any) (any, error) {
	if after == nil {
		return nil, fmt.Errorf("no support case")
	}
	return after, nil
}

// spendControlStatusEventData is the document's SpendControlStatus.
type spendControlStatusEventData struct {
	ID                      uuid.UUID `json:"id"`
	OrganizationID          uuid.UUID `json:"organization_id"`
	Product                 string    `json:"product"`
	WarningThresholdPercent int       `json:"warning_threshold_percent"`
	MonthlyBudgetMinorUnits *int64    `json:"monthly_budget_minor_units"`
	HardOperationLimit      *int64    `json:"hard_operation_limit"`
	NotificationRecipients  []string  `json:"notification_recipients"`
	Enabled                 bool      `json:"enabled"`
	CurrentOperations       int64     `json:"current_operations"`
	WarningReached          bool      `json:"warning_reached"`
	HardLimitReached        bool      `json:"hard_limit_reached"`
}

func spendControlEvent(after any) (any, error) {
	s, err := summaryAs[core.SpendControlStatus](after)
	if err != nil {
		return nil, err
	}
	return spendControlStatusEventData{
		ID: s.ID, OrganizationID: s.OrganizationID, Product: s.Product, WarningThresholdPercent: s.WarningThresholdPercent,
		MonthlyBudgetMinorUnits: s.MonthlyBudgetMinorUnits, HardOperationLimit: s.HardOperationLimit,
		NotificationRecipients: nonNil(s.NotificationRecipients), Enabled: s.Enabled,
		CurrentOperations: s.CurrentOperations, WarningReached: s.WarningReached, HardLimitReached: s.HardLimitReached,
	}, nil
}

// taxInvoiceAudit is the audit summary of a generated tax invoice (never its XML or request).
type taxInvoiceAudit struct {
	ID             uuid.UUID `json:"id"`
	OrganizationID uuid.UUID `json:"organization_id"`
	// ConnectedBusinessID is the seller when a connected business issued the invoice.
	ConnectedBusinessID *uuid.UUID `json:"connected_business_id,omitempty"`
	Number              string     `json:"number"`
	UUID                uuid.UUID  `json:"uuid"`
	EGSUnitID           string     `json:"egs_unit_id"`
	ICV                 int64      `json:"icv"`
	InvoiceHash         string     `json:"invoice_hash"`
	Valid               bool       `json:"valid"`
	Status              string     `json:"status"`
	InvoiceType         string     `json:"invoice_type"`
	PayableAmount       int64      `json:"payable_amount"`
	Currency            string     `json:"currency"`
	CreatedAt           time.Time  `json:"created_at"`
}

// taxInvoiceEventData is the document's TaxInvoiceEventData.
type taxInvoiceEventData struct {
	ID             uuid.UUID `json:"id"`
	OrganizationID uuid.UUID `json:"organization_id"`
	Status         string    `json:"status"`
	InvoiceType    string    `json:"invoice_type"`
	UUID           uuid.UUID `json:"uuid"`
	ICV            int64     `json:"icv"`
	PayableAmount  int64     `json:"payable_amount"`
	Currency       string    `json:"currency"`
	CreatedAt      time.Time `json:"created_at"`
}

func taxInvoiceEvent(after any) (any, error) {
	t, err := summaryAs[taxInvoiceAudit](after)
	if err != nil {
		return nil, err
	}
	return taxInvoiceEventData{
		ID: t.ID, OrganizationID: t.OrganizationID, Status: t.Status, InvoiceType: t.InvoiceType, UUID: t.UUID,
		ICV: t.ICV, PayableAmount: t.PayableAmount, Currency: t.Currency, CreatedAt: t.CreatedAt,
	}, nil
}

// webhookTestEventData is the document's WebhookTestEventData.
type webhookTestEventData struct {
	WebhookEndpointID uuid.UUID `json:"webhook_endpoint_id"`
	Message           string    `json:"message"`
}

// summaryAs reads an audit summary that is a T or a *T.
func summaryAs[T any](after any) (*T, error) {
	switch v := after.(type) {
	case *T:
		if v != nil {
			return v, nil
		}
	case T:
		return &v, nil
	}
	var want T
	return nil, fmt.Errorf("audit summary is %T, not %T", after, want)
}
