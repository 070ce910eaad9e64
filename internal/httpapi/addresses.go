package httpapi

import (
	"context"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/address"
)

// ResolveShortAddress implements POST /v1/address/resolve-short.
func (s *Server) ResolveShortAddress(ctx context.Context, req api.ResolveShortAddressRequestObject) (api.ResolveShortAddressResponseObject, error) {
	res, err := s.cfg.Services.Addresses.ResolveShortAddress(ctx, req.Body.ShortAddress, string(req.Body.Language))
	if err != nil {
		return nil, err
	}
	return api.ResolveShortAddress200JSONResponse{Body: toAPIShortAddressResult(res)}, nil
}

func toAPIShortAddressResult(r *address.Resolution) api.ShortAddressResult {
	a := r.Address
	out := api.ShortAddressResult{
		Status:       api.ShortAddressStatus(r.Status),
		ShortAddress: r.ShortAddress,
		Language:     api.Language(r.Language),
		Address: api.ResolvedAddress{
			BuildingNumber:   nullableFrom(a.BuildingNumber),
			Street:           nullableFrom(a.Street),
			District:         nullableFrom(a.District),
			City:             nullableFrom(a.City),
			Region:           nullableFrom(a.Region),
			PostalCode:       nullableFrom(a.PostalCode),
			AdditionalNumber: nullableFrom(a.AdditionalNumber),
			Latitude:         nullableFrom(a.Latitude),
			Longitude:        nullableFrom(a.Longitude),
		},
		MissingFields: make([]api.AddressField, len(r.MissingFields)),
		Provenance: api.AddressProvenance{
			Source:                  r.Provenance.Source,
			DatasetVersion:          r.Provenance.DatasetVersion,
			Authoritative:           r.Provenance.Authoritative,
			ExternalSourceConsulted: r.Provenance.ExternalSourceConsulted,
			Note:                    r.Provenance.Note,
		},
	}
	for i, f := range r.MissingFields {
		out.MissingFields[i] = api.AddressField(f)
	}
	return out
}
