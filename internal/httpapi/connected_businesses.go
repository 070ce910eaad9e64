package httpapi

import (
	"context"

	"github.com/google/uuid"
	"github.com/oapi-codegen/nullable"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/core"
)

// defaultBusinessLimit is the page size of the connected-business list (the specification's).
const defaultBusinessLimit = 25

// defaultCredentialName names a credential created without a name (the specification's).
const defaultCredentialName = "Connected business sandbox key"

// CreateConnectedBusiness implements POST /v1/connected-businesses.
func (s *Server) CreateConnectedBusiness(ctx context.Context, req api.CreateConnectedBusinessRequestObject) (api.CreateConnectedBusinessResponseObject, error) {
	b := req.Body
	var products []string
	for _, p := range deref(b.Products) {
		products = append(products, string(p))
	}
	cb, err := s.cfg.Services.Businesses.CreateConnectedBusiness(ctx, core.ConnectedBusinessCreate{
		ExternalReference:               b.ExternalReference,
		DisplayName:                     b.DisplayName,
		LegalNameEn:                     b.LegalNameEn,
		LegalNameAr:                     valueOf(b.LegalNameAr),
		VatReference:                    valueOf(b.VatReference),
		CommercialRegistrationReference: valueOf(b.CommercialRegistrationReference),
		NationalAddressReference:        valueOf(b.NationalAddressReference),
		Products:                        products,
	})
	if err != nil {
		return nil, err
	}
	return api.CreateConnectedBusiness201JSONResponse{Body: toAPIBusinessDetail(cb)}, nil
}

// ListConnectedBusinesses implements GET /v1/connected-businesses.
func (s *Server) ListConnectedBusinesses(ctx context.Context, req api.ListConnectedBusinessesRequestObject) (api.ListConnectedBusinessesResponseObject, error) {
	list, next, err := s.cfg.Services.Businesses.ListConnectedBusinesses(ctx, req.Params.Cursor, valueOr(req.Params.Limit, defaultBusinessLimit))
	if err != nil {
		return nil, err
	}
	items := make([]api.ConnectedBusiness, len(list))
	for i, cb := range list {
		items[i] = toAPIBusiness(cb)
	}
	return api.ListConnectedBusinesses200JSONResponse{Body: api.ConnectedBusinessList{Items: items, NextCursor: uuidNullable(next)}}, nil
}

// GetConnectedBusiness implements GET /v1/connected-businesses/{id}.
func (s *Server) GetConnectedBusiness(ctx context.Context, req api.GetConnectedBusinessRequestObject) (api.GetConnectedBusinessResponseObject, error) {
	cb, err := s.cfg.Services.Businesses.FindConnectedBusinessByID(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.GetConnectedBusiness200JSONResponse{Body: toAPIBusinessDetail(cb)}, nil
}

// UpdateConnectedBusiness implements PATCH /v1/connected-businesses/{id}.
func (s *Server) UpdateConnectedBusiness(ctx context.Context, req api.UpdateConnectedBusinessRequestObject) (api.UpdateConnectedBusinessResponseObject, error) {
	b := req.Body
	cb, err := s.cfg.Services.Businesses.UpdateConnectedBusiness(ctx, req.Id, core.ConnectedBusinessUpdate{
		DisplayName:     presentField(b.DisplayName),
		LegalNameEn:     presentField(b.LegalNameEn),
		LegalNameAr:     patchField(b.LegalNameAr),
		VatReference:    patchField(b.VatReference),
		LifecycleStatus: presentField(b.LifecycleStatus),
	})
	if err != nil {
		return nil, err
	}
	return api.UpdateConnectedBusiness200JSONResponse{Body: toAPIBusiness(cb)}, nil
}

// CreateConnectedBusinessCredential implements POST /v1/connected-businesses/{id}/credentials.
func (s *Server) CreateConnectedBusinessCredential(ctx context.Context, req api.CreateConnectedBusinessCredentialRequestObject) (api.CreateConnectedBusinessCredentialResponseObject, error) {
	cred, err := s.cfg.Services.Businesses.CreateCredential(ctx, req.Id, string(req.Body.Product), valueOr(req.Body.Name, defaultCredentialName))
	if err != nil {
		return nil, err
	}
	return api.CreateConnectedBusinessCredential201JSONResponse{Body: api.ConnectedBusinessCredential{
		Id: cred.ID, Prefix: cred.Prefix, FullKey: cred.FullKey, Product: api.SandboxProduct(cred.Product),
		ConnectedBusinessId: cred.ConnectedBusinessID, ServiceResourceId: cred.ServiceResourceID,
	}}, nil
}

// patchField reads an optional nullable PATCH field: absent, null or a value.
func patchField[T any](n nullable.Nullable[T]) core.Field[T] {
	if !n.IsSpecified() {
		return core.Field[T]{}
	}
	return core.Field[T]{Set: true, Value: valueOf(n)}
}

// presentField reads an optional PATCH field that cannot be null: absent or a value.
func presentField[T ~string](v *T) core.Field[string] {
	if v == nil {
		return core.Field[string]{}
	}
	s := string(*v)
	return core.Field[string]{Set: true, Value: &s}
}

func uuidNullable(next *string) nullable.Nullable[api.ConnectedBusinessCursor] {
	if next == nil {
		return null[api.ConnectedBusinessCursor]()
	}
	id, err := uuid.Parse(*next)
	if err != nil {
		return null[api.ConnectedBusinessCursor]()
	}
	return nullable.NewNullableWithValue(id)
}

func toAPIBusiness(cb *core.ConnectedBusiness) api.ConnectedBusiness {
	return api.ConnectedBusiness{
		Id: cb.ID, CreatedAt: cb.CreatedAt, UpdatedAt: cb.UpdatedAt,
		PlatformOrganizationId:          cb.PlatformOrganizationID.String(),
		ExternalReference:               cb.ExternalReference,
		DisplayName:                     cb.DisplayName,
		LegalNameAr:                     nullableFrom(cb.LegalNameAr),
		LegalNameEn:                     cb.LegalNameEn,
		VatReference:                    nullableFrom(cb.VatReference),
		CommercialRegistrationReference: nullableFrom(cb.CommercialRegistrationReference),
		NationalAddressReference:        nullableFrom(cb.NationalAddressReference),
		LifecycleStatus:                 api.ConnectedBusinessLifecycleStatus(cb.LifecycleStatus),
	}
}

func toAPIBusinessDetail(cb *core.ConnectedBusiness) api.ConnectedBusinessDetail {
	s := toAPIBusiness(cb)
	resources := make([]api.ConnectedBusinessResource, len(cb.Resources))
	for i, r := range cb.Resources {
		resources[i] = api.ConnectedBusinessResource{Id: r.ID, CapabilityId: r.CapabilityID, LifecycleStatus: r.LifecycleStatus}
	}
	return api.ConnectedBusinessDetail{
		Id: s.Id, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt, PlatformOrganizationId: s.PlatformOrganizationId,
		ExternalReference: s.ExternalReference, DisplayName: s.DisplayName, LegalNameAr: s.LegalNameAr,
		LegalNameEn: s.LegalNameEn, VatReference: s.VatReference,
		CommercialRegistrationReference: s.CommercialRegistrationReference,
		NationalAddressReference:        s.NationalAddressReference, LifecycleStatus: s.LifecycleStatus,
		Resources: resources,
	}
}
