package postgres

import "github.com/provider/coreapi/internal/core"

// NewServices returns every core service over d.
func NewServices(d *DB) core.Services {
	return core.Services{
		Organizations: NewOrganizationService(d),
		Catalogue:     NewCatalogueService(d),
		Subscriptions: NewSubscriptionService(d),
	}
}
