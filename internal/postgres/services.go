package postgres

import (
	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/secretbox"
	"github.com/provider/coreapi/internal/webhook"
)

// NewServices returns every core service over d; box encrypts what must not be stored in
// clear but must be read back, and hooks is the webhook policy (which endpoint URLs may be
// registered).
func NewServices(d *DB, box *secretbox.Box, hooks webhook.Policy) core.Services {
	keys := NewAPIKeyService(d)
	s := core.Services{
		Organizations: NewOrganizationService(d),
		APIKeys:       keys,
		Credentials:   keys,
		Idempotency:   NewIdempotencyService(d, box),
		Businesses:    NewConnectedBusinessService(d),
		Spend:         NewSpendService(d),
		Audit:         NewAuditService(d),
		TaxInvoices:   NewTaxInvoiceService(d, box),
		TaxValidation: NewTaxInvoiceValidationService(d),
		EGSUnits:      NewEGSUnitService(d, box),
		Addresses:     NewAddressService(d),
		Catalogue:     NewCatalogueService(d),
		Subscriptions: NewSubscriptionService(d),
		SupportCases:  NewSupportCaseService(d),
		Growth:        NewGrowthService(d),
		RequestLogs:   NewRequestLogService(d),
		Operators:     NewOperatorTokenService(d),
		Webhooks:      NewWebhookService(d, box, hooks),
		Incidents:     NewIncidentService(d),
		TestClocks:    NewTestClockService(d),
		Invoices:      NewInvoiceService(d),
		Credits:       NewCreditService(d),
	}
	s.WebhookDeliveries = NewWebhookDeliveryService(d, hooks)
	s.Onboarding = NewOnboardingService(d, s.Organizations, s.Subscriptions, s.APIKeys, s.Growth)
	return s
}
