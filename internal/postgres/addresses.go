package postgres

import (
	"context"
	"errors"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/address"
	"github.com/provider/coreapi/internal/core"
)

// AddressService implements core.AddressService over the embedded synthetic data set; the
// database only records usage.
type AddressService struct{ db *DB }

var _ core.AddressService = (*AddressService)(nil)

// NewAddressService returns the address service over d.
func NewAddressService(d *DB) *AddressService { return &AddressService{db: d} }

// ResolveShortAddress implements core.AddressService.
func (s *AddressService) ResolveShortAddress(ctx context.Context, shortAddress, language string) (*address.Resolution, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if !p.IsOperator() {
		if err := s.db.entitle(ctx, p.OrganizationID, core.Access{Act: core.ActUseProduct, Environment: p.TrafficEnvironment(), Product: productAddress}); err != nil {
			return nil, err
		}
		if err := checkSpend(ctx, s.db.queries(ctx), p.OrganizationID, productAddress); err != nil {
			return nil, translate(err)
		}
	}
	res, err := address.Resolve(shortAddress, language)
	if errors.Is(err, address.ErrMalformed) {
		return nil, &core.Error{Code: core.EValidation, Message: "short_address must be four letters and four digits, e.g. RRRD2929.",
			Fields: []core.FieldError{{Location: "body", Pointer: "/short_address", Code: "pattern", Message: err.Error()}}}
	}
	if err != nil {
		return nil, err
	}
	if p.IsOperator() {
		return res, nil // the request names no organization to count it for
	}
	err = s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		return s.db.recordUsage(ctx, q, p.OrganizationID, productAddress)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}
