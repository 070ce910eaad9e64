// Package core is the domain of the Provider Core API: its entities, the services that act on
// them, the principal making a request, and the one error type every layer speaks.
//
// core imports neither HTTP nor generated code; internal/httpapi translates to and from the
// OpenAPI types and internal/postgres implements the services over PostgreSQL.
package core

// Services are every service the transport layer calls. internal/postgres builds them all
// (postgres.NewServices); tests and main wire them in one line.
type Services struct {
	Organizations OrganizationService
	APIKeys       APIKeyService
	Credentials   CredentialService
	Idempotency   IdempotencyService
	Businesses    ConnectedBusinessService
	Spend         SpendService
	Audit         AuditService
	Onboarding    OnboardingService
	TaxInvoices   TaxInvoiceService
	// TaxValidation validates tax invoices without generating them.
	TaxValidation TaxInvoiceValidationService
	// EGSUnits registers EGS units from CSRs and issues their sandbox certificates.
	EGSUnits      EGSUnitService
	Addresses     AddressService
	Catalogue     CatalogueService
	Subscriptions SubscriptionService
	SupportCases  SupportCaseService
	Growth        GrowthService
	RequestLogs   RequestLogService
	Operators     OperatorTokenService
	Webhooks      WebhookService
	Incidents     IncidentService
	TestClocks    TestClockService
	Invoices      InvoiceService
	Credits       CreditService

	// WebhookDeliveries shows events and deliveries, and sends deliveries again.
	WebhookDeliveries WebhookDeliveryService
}

// equalPtr reports whether two optional values are both absent or both present and equal.
func equalPtr[T comparable](a, b *T) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}
