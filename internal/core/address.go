package core

import (
	"context"

	"github.com/provider/coreapi/internal/address"
)

// AddressService resolves short addresses.
type AddressService interface {
	// ResolveShortAddress resolves shortAddress in language ("en" or "ar"). An unknown code
	// is a resolution with status not_found, not an error. A resolution by an organization
	// principal records one address usage unit for its organization; the operator's are not
	// counted (the request names no organization). Errors: EValidation when the code is not
	// four letters and four digits.
	ResolveShortAddress(ctx context.Context, shortAddress, language string) (*address.Resolution, error)
}
