package httpapi

import (
	"encoding/json"
	"fmt"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/core"
)

// EventEncoder renders the data of webhook events with the converters of the API's
// responses, so an event's data is the resource exactly as the API answers it (the schema
// the WebhookEventType table of the document names). Storage calls it when it publishes.
type EventEncoder struct{}

var _ core.EventEncoder = EventEncoder{}

// Encode implements core.EventEncoder.
func (EventEncoder) Encode(t core.EventType, v any) (json.RawMessage, error) {
	data, err := eventData(v)
	if err != nil {
		return nil, fmt.Errorf("httpapi: data of event %s: %w", t, err)
	}
	return json.Marshal(data)
}

func eventData(v any) (any, error) {
	switch v := v.(type) {
	case *core.Organization:
		return toAPIOrganization(v), nil
	case *core.Subscription:
		return toAPISubscription(v), nil
	case *core.BillingInvoice:
		return toAPIBillingInvoice(v), nil
	case *core.ConnectedBusiness:
		return toAPIBusiness(v), nil // the summary: the resources are the detail's
	case *core.APIKey:
		return toAPIKey(v), nil
	case *core.SupportCase:
		return toAPISupportCase(v)
	case *core.SupportCaseMessage:
		return toAPISupportCaseMessage(v), nil
	case *core.SpendControlStatus:
		return toAPISpendControlStatus(v), nil
	case *core.TaxInvoice:
		return toAPITaxInvoiceEventData(v), nil
	case *core.EGSUnit:
		return toAPIEgsUnit(v), nil
	case *core.InvoiceTaxDocuments:
		return toAPIInvoiceTaxDocuments(v), nil
	case *core.CreditTransaction:
		return toAPICreditTransaction(v), nil
	case *core.PlatformTaxRequest:
		return toAPITaxInvoiceRequest(v), nil // not an event's data: the request stored with a platform document
	case *core.TaxInvoiceSubmission:
		return toAPITaxInvoiceSubmission(v), nil
	case *core.Product:
		return toAPIProduct(v), nil
	case *core.Plan:
		return toAPIPlan(v), nil // the Plan schema: its prices are listPlans's
	case *core.WebhookEndpoint:
		return toAPIWebhookEndpoint(v), nil
	case *core.WebhookTestEvent:
		return api.WebhookTestEventData{WebhookEndpointId: v.EndpointID, Message: v.Message}, nil
	}
	return nil, fmt.Errorf("no rendering of %T", v)
}

// toAPITaxInvoiceEventData is the data of tax_invoice.generated: the invoice's identity and
// total, never its XML or request.
func toAPITaxInvoiceEventData(t *core.TaxInvoice) api.TaxInvoiceEventData {
	return api.TaxInvoiceEventData{
		Id: t.ID, OrganizationId: t.OrganizationID.String(), Status: t.Status, InvoiceType: t.Invoice.Type,
		Uuid: t.UUID, Icv: t.ICV, PayableAmount: t.Invoice.Totals.Payable, Currency: t.Invoice.Totals.Currency,
		CreatedAt: t.CreatedAt,
	}
}
