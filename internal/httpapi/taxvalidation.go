package httpapi

import (
	"context"
	"io"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/einvoice"
)

// ValidateTaxInvoice implements POST /v1/taxauth/invoices/validate: a JSON invoice request or
// an XML document, told apart by the request's media type (the contract admits only these).
func (s *Server) ValidateTaxInvoice(ctx context.Context, req api.ValidateTaxInvoiceRequestObject) (api.ValidateTaxInvoiceResponseObject, error) {
	var (
		out *core.TaxInvoiceValidation
		err error
	)
	if req.JSONBody != nil {
		org, err := organizationNamed(ctx, req.JSONBody.OrganizationId, "/organization_id")
		if err != nil {
			return nil, err
		}
		out, err = s.cfg.Services.TaxValidation.ValidateTaxInvoiceRequest(ctx, org, einvoiceRequest(req.JSONBody), originalInvoiceID(req.JSONBody))
		if err != nil {
			return nil, err
		}
	} else {
		doc, err := io.ReadAll(req.Body) // bounded by the contract gate (1 MiB)
		if err != nil {
			return nil, requestProblem(err)
		}
		if out, err = s.cfg.Services.TaxValidation.ValidateTaxInvoiceXML(ctx, doc); err != nil {
			return nil, err
		}
	}
	return api.ValidateTaxInvoice200JSONResponse{Body: toAPIValidation(out)}, err
}

func toAPIValidation(v *core.TaxInvoiceValidation) api.TaxInvoiceValidationResult {
	out := api.TaxInvoiceValidationResult{
		Valid:               v.Report.Verdict() != einvoice.VerdictError,
		Status:              api.TaxInvoiceValidationResultStatus(v.Report.Verdict()),
		Input:               api.TaxInvoiceValidationResultInput(v.Input),
		Results:             make([]api.TaxInvoiceValidationFinding, len(v.Report.Results)),
		Sandbox:             true,
		ReportedToAuthority: false,
		Notice:              einvoice.Notice,
	}
	for i, r := range v.Report.Results {
		out.Results[i] = api.TaxInvoiceValidationFinding{
			Type:     api.TaxInvoiceValidationFindingType(r.Type),
			Code:     r.Code,
			Category: api.TaxInvoiceValidationFindingCategory(r.Category),
			Message:  r.Message,
			Path:     null[string](),
		}
		if r.Path != "" {
			out.Results[i].Path = nullableFrom(&r.Path)
		}
	}
	return out
}
