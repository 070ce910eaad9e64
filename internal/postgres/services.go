package postgres

import "github.com/provider/coreapi/internal/core"

// NewServices returns every core service over d.
func NewServices(d *DB) core.Services {
	keys := NewAPIKeyService(d)
	return core.Services{
		Organizations: NewOrganizationService(d),
		APIKeys:       keys,
		Credentials:   keys,
		SupportCases:  NewSupportCaseService(d),
		Growth:        NewGrowthService(d),
		RequestLogs:   NewRequestLogService(d),
	}
}
