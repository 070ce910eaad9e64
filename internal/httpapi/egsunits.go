package httpapi

import (
	"context"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/core"
)

// egsUnitNotice says in every unit that it is synthetic.
const egsUnitNotice = "Sandbox EGS unit: certificates issued by the sandbox CA, not by the tax authority, not valid for tax purposes."

// CreateEgsUnit implements POST /v1/taxauth/egs-units.
func (s *Server) CreateEgsUnit(ctx context.Context, req api.CreateEgsUnitRequestObject) (api.CreateEgsUnitResponseObject, error) {
	org, err := core.OrganizationIn(ctx, req.Body.OrganizationId, "/organization_id")
	if err != nil {
		return nil, err
	}
	unit, err := s.cfg.Services.EGSUnits.CreateEGSUnit(ctx, core.EGSUnitCreate{OrganizationID: org, CSR: req.Body.Csr, PrivateKey: req.Body.PrivateKey})
	if err != nil {
		return nil, err
	}
	return api.CreateEgsUnit201JSONResponse{Body: toAPIEgsUnit(unit)}, nil
}

// ListEgsUnits implements GET /v1/taxauth/egs-units.
func (s *Server) ListEgsUnits(ctx context.Context, req api.ListEgsUnitsRequestObject) (api.ListEgsUnitsResponseObject, error) {
	org, err := core.OrganizationIn(ctx, req.Params.OrganizationId, "organization_id")
	if err != nil {
		return nil, err
	}
	units, err := s.cfg.Services.EGSUnits.ListEGSUnits(ctx, org)
	if err != nil {
		return nil, err
	}
	items := make([]api.EgsUnit, len(units))
	for i, u := range units {
		items[i] = toAPIEgsUnit(u)
	}
	return api.ListEgsUnits200JSONResponse{Body: api.EgsUnitList{Items: items}}, nil
}

// GetEgsUnit implements GET /v1/taxauth/egs-units/{id}.
func (s *Server) GetEgsUnit(ctx context.Context, req api.GetEgsUnitRequestObject) (api.GetEgsUnitResponseObject, error) {
	unit, err := s.cfg.Services.EGSUnits.FindEGSUnit(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.GetEgsUnit200JSONResponse{Body: toAPIEgsUnit(unit)}, nil
}

// IssueEgsUnitProductionCertificate implements POST /v1/taxauth/egs-units/{id}/production-certificate.
func (s *Server) IssueEgsUnitProductionCertificate(ctx context.Context, req api.IssueEgsUnitProductionCertificateRequestObject) (api.IssueEgsUnitProductionCertificateResponseObject, error) {
	unit, err := s.cfg.Services.EGSUnits.IssueEGSUnitProductionCertificate(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.IssueEgsUnitProductionCertificate200JSONResponse{Body: toAPIEgsUnit(unit)}, nil
}

// RevokeEgsUnit implements POST /v1/taxauth/egs-units/{id}/revoke.
func (s *Server) RevokeEgsUnit(ctx context.Context, req api.RevokeEgsUnitRequestObject) (api.RevokeEgsUnitResponseObject, error) {
	unit, err := s.cfg.Services.EGSUnits.RevokeEGSUnit(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.RevokeEgsUnit200JSONResponse{Body: toAPIEgsUnit(unit)}, nil
}

func toAPIEgsUnit(u *core.EGSUnit) api.EgsUnit {
	out := api.EgsUnit{
		Id: u.ID, OrganizationId: u.OrganizationID.String(), Status: api.EgsUnitStatus(u.Status),
		CommonName: u.CommonName, SerialNumber: u.SerialNumber, VatNumber: u.VATNumber,
		OrganizationUnitName: u.OrganizationUnitName, OrganizationName: u.OrganizationName, Country: u.Country,
		InvoiceTypes: u.InvoiceTypes, Location: u.Location, Industry: u.Industry,
		Compliance: api.EgsUnitCompliance{
			RequiredKinds: invoiceTypes(u.RequiredKinds), PassedKinds: invoiceTypes(u.PassedKinds), MissingKinds: invoiceTypes(u.MissingKinds()),
		},
		ComplianceCertificate: toAPIEgsCertificate(u.ComplianceCertificate),
		ProductionCertificate: null[api.EgsProductionCertificate](),
		CreatedAt:             u.CreatedAt, UpdatedAt: u.UpdatedAt, RevokedAt: nullableFrom(u.RevokedAt),
		Sandbox: true, Notice: egsUnitNotice,
	}
	if u.ProductionCertificate != nil {
		out.ProductionCertificate.Set(api.EgsProductionCertificate(toAPIEgsCertificate(*u.ProductionCertificate)))
	}
	return out
}

func toAPIEgsCertificate(c core.EGSCertificate) api.EgsCertificate {
	return api.EgsCertificate{Pem: c.PEM, SerialNumber: c.SerialNumber, Issuer: c.Issuer, NotBefore: c.NotBefore, NotAfter: c.NotAfter}
}

func invoiceTypes(kinds []string) []api.RequestedInvoiceType {
	out := make([]api.RequestedInvoiceType, len(kinds))
	for i, k := range kinds {
		out[i] = api.RequestedInvoiceType(k)
	}
	return out
}
