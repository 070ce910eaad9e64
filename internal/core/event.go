package core

import (
	"encoding/json"

	"github.com/google/uuid"
)

// EventType is the kind of a webhook event (the WebhookEventType enum of the document).
type EventType string

// Webhook event types. Every one has a publisher: the service whose change it reports
// publishes it in the transaction of that change.
const (
	EventSubscriptionCreated     EventType = "subscription.created"
	EventSubscriptionActivated   EventType = "subscription.activated"
	EventSubscriptionPlanChanged EventType = "subscription.plan_changed"
	EventSubscriptionCancelled   EventType = "subscription.cancelled"
	EventSubscriptionReactivated EventType = "subscription.reactivated"
	EventSubscriptionSuspended   EventType = "subscription.suspended"
	EventSubscriptionResumed     EventType = "subscription.resumed"
	EventSubscriptionTerminated  EventType = "subscription.terminated"
	EventSubscriptionDegraded    EventType = "subscription.degraded"
	EventSubscriptionRestored    EventType = "subscription.restored"
	EventBillingInvoiceIssued    EventType = "billing_invoice.issued" // deprecated alias of invoice.issued
	EventInvoiceIssued           EventType = "invoice.issued"
	EventInvoicePaid             EventType = "invoice.paid"
	EventInvoicePaymentFailed    EventType = "invoice.payment_failed"
	EventInvoiceVoided           EventType = "invoice.voided"
	EventInvoiceUncollectible    EventType = "invoice.uncollectible"
	EventSubscriptionRenewed     EventType = "subscription.renewed"
	// The steps of dunning (dunning.go), each with data the subscription after it.
	EventSubscriptionOverdue            EventType = "subscription.overdue"
	EventSubscriptionPaymentRetryFailed EventType = "subscription.payment_retry_failed"
	EventSubscriptionWrittenOff         EventType = "subscription.written_off"
	EventSubscriptionRecovered          EventType = "subscription.recovered"
	EventConnectedBusinessCreated       EventType = "connected_business.created"
	EventConnectedBusinessUpdated       EventType = "connected_business.updated"
	EventAPIKeyCreated                  EventType = "api_key.created"
	EventAPIKeyRevoked                  EventType = "api_key.revoked"
	EventAPIKeyRotated                  EventType = "api_key.rotated"
	EventSupportCaseOpened              EventType = "support_case.opened"
	EventSupportCaseClosed              EventType = "support_case.closed"
	EventSupportCaseUpdated             EventType = "support_case.updated"
	EventSupportCaseMessageCreated      EventType = "support_case.message_created"
	EventSpendControlWarningReached     EventType = "spend_control.warning_reached"
	EventSpendControlHardLimitReached   EventType = "spend_control.hard_limit_reached"
	EventTaxInvoiceGenerated            EventType = "tax_invoice.generated"
	EventProductUpdated                 EventType = "product.updated"
	EventPlanDeprecated                 EventType = "plan.deprecated"
	EventPlanRetired                    EventType = "plan.retired"
	EventWebhookEndpointTest            EventType = "webhook_endpoint.test"
	EventWebhookEndpointUpdated         EventType = "webhook_endpoint.updated"
	EventWebhookEndpointSecretRotated   EventType = "webhook_endpoint.secret_rotated"
	EventWebhookEndpointDisabled        EventType = "webhook_endpoint.disabled"
	EventOrganizationUpdated            EventType = "organization.updated"
	EventEGSUnitRegistered              EventType = "egs_unit.registered"
	EventEGSUnitProductionIssued        EventType = "egs_unit.production_certificate_issued"
	EventEGSUnitRevoked                 EventType = "egs_unit.revoked"
	// Issue 26: the tax document of a billing invoice (its tax invoice, or the credit note of
	// a void) was issued by the platform, or the engine refused the tax invoice.
	EventInvoiceTaxDocumentIssued EventType = "invoice.tax_document_issued"
	EventInvoiceTaxDocumentFailed EventType = "invoice.tax_document_failed"
	EventTaxInvoiceSubmitted      EventType = "tax_invoice.submitted"
	// Issue 26 (billgaps): an entry of the credit balance's ledger (data: the entry), and a
	// retry of a failed tax document (data: the invoice's tax documents, pending again).
	EventCreditBalanceUpdated      EventType = "credit_balance.updated"
	EventInvoiceTaxDocumentRetried EventType = "invoice.tax_document_retried"
)

// EventTypes returns every event type, in the order of the document.
func EventTypes() []EventType {
	return []EventType{
		EventSubscriptionCreated, EventSubscriptionActivated, EventSubscriptionPlanChanged,
		EventSubscriptionCancelled, EventSubscriptionReactivated, EventSubscriptionSuspended,
		EventSubscriptionResumed, EventSubscriptionTerminated,
		EventSubscriptionDegraded, EventSubscriptionRestored, EventBillingInvoiceIssued,
		EventInvoiceIssued, EventInvoicePaid, EventInvoicePaymentFailed, EventInvoiceVoided, EventInvoiceUncollectible,
		EventConnectedBusinessCreated, EventConnectedBusinessUpdated,
		EventAPIKeyCreated, EventAPIKeyRevoked, EventAPIKeyRotated,
		EventSupportCaseOpened, EventSupportCaseClosed,
		EventSupportCaseUpdated, EventSupportCaseMessageCreated,
		EventSpendControlWarningReached, EventSpendControlHardLimitReached,
		EventTaxInvoiceGenerated, EventProductUpdated, EventPlanDeprecated, EventPlanRetired,
		EventWebhookEndpointTest,
		EventOrganizationUpdated,
		EventWebhookEndpointUpdated, EventWebhookEndpointSecretRotated, EventWebhookEndpointDisabled,
		EventSubscriptionRenewed,
		EventSubscriptionOverdue, EventSubscriptionPaymentRetryFailed, EventSubscriptionWrittenOff, EventSubscriptionRecovered,
		EventEGSUnitRegistered, EventEGSUnitProductionIssued, EventEGSUnitRevoked,
		EventInvoiceTaxDocumentIssued, EventInvoiceTaxDocumentFailed,
		EventTaxInvoiceSubmitted,
		EventCreditBalanceUpdated, EventInvoiceTaxDocumentRetried,
	}
}

// SucceededBy is the event type that replaces t when t is a deprecated alias, "" otherwise.
// An endpoint naming both receives the successor only, so one change never reaches it twice;
// publishing and recover alike (see ReceivedEventTypes).
func (t EventType) SucceededBy() EventType {
	if t == EventBillingInvoiceIssued {
		return EventInvoiceIssued
	}
	return ""
}

// ReceivedEventTypes are the types of the events an endpoint that lists enabled receives:
// enabled without each deprecated alias whose successor it lists too.
func ReceivedEventTypes(enabled []string) []string {
	listed := make(map[string]bool, len(enabled))
	for _, t := range enabled {
		listed[t] = true
	}
	received := make([]string, 0, len(enabled))
	for _, t := range enabled {
		if successor := EventType(t).SucceededBy(); successor == "" || !listed[string(successor)] {
			received = append(received, t)
		}
	}
	return received
}

// EventEncoder renders the data of an event: the resource v (a *Subscription, *APIKey, …)
// as the API shows it. The transport layer implements it with its response converters, so
// an event's data and the API's answer are one rendering; storage calls it in the
// transaction that publishes the event.
type EventEncoder interface {
	Encode(t EventType, v any) (json.RawMessage, error)
}

// WebhookTestEvent is the data of a webhook_endpoint.test event.
type WebhookTestEvent struct {
	EndpointID uuid.UUID
	Message    string
}
