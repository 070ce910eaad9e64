package httpapi

import (
	"context"
	"strings"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/einvoice"
)

// SubmitTaxInvoice implements POST /v1/taxauth/invoices/{id}/submit.
func (s *Server) SubmitTaxInvoice(ctx context.Context, req api.SubmitTaxInvoiceRequestObject) (api.SubmitTaxInvoiceResponseObject, error) {
	sub, err := s.cfg.Services.TaxInvoices.SubmitTaxInvoice(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.SubmitTaxInvoice200JSONResponse{Body: toAPITaxInvoiceSubmission(sub)}, nil
}

// GetTaxInvoiceSubmission implements GET /v1/taxauth/invoices/{id}/submission.
func (s *Server) GetTaxInvoiceSubmission(ctx context.Context, req api.GetTaxInvoiceSubmissionRequestObject) (api.GetTaxInvoiceSubmissionResponseObject, error) {
	sub, err := s.cfg.Services.TaxInvoices.FindTaxInvoiceSubmission(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.GetTaxInvoiceSubmission200JSONResponse{Body: toAPITaxInvoiceSubmission(sub)}, nil
}

// toAPITaxInvoiceSubmission renders a submission in the authority's shape: the outcome under
// the field of its mode (reporting or clearance), the results split by type, and the sandbox
// marks. It is also the data of tax_invoice.submitted.
func toAPITaxInvoiceSubmission(sub *core.TaxInvoiceSubmission) api.TaxInvoiceSubmission {
	out := api.TaxInvoiceSubmission{
		InvoiceId:           sub.InvoiceID,
		OrganizationId:      sub.OrganizationID,
		Kind:                api.RequestedInvoiceType(sub.Kind.Type),
		Mode:                api.TaxInvoiceSubmissionMode(einvoice.SubmissionMode(sub.Kind)),
		SubmissionStatus:    api.TaxInvoiceSubmissionStatus(sub.Status),
		ReportingStatus:     null[string](),
		ClearanceStatus:     null[string](),
		ValidationResults:   toAPISubmissionValidation(einvoice.Report{Results: sub.Results}),
		ClearedInvoice:      null[[]byte](),
		Qr:                  nullableFrom(sub.ClearedQR),
		SubmittedAt:         sub.SubmittedAt,
		Sandbox:             true,
		ReportedToAuthority: false,
		Notice:              einvoice.Notice,
	}
	if sub.Kind.Standard {
		out.ClearanceStatus.Set(sub.Status)
	} else {
		out.ReportingStatus.Set(sub.Status)
	}
	if sub.ClearedXML != nil {
		out.ClearedInvoice.Set([]byte(*sub.ClearedXML)) // base64 in JSON (format: byte)
	}
	return out
}

// toAPISubmissionValidation splits the results into the authority's info, warning and error
// messages; each message carries the status its type stands for.
func toAPISubmissionValidation(r einvoice.Report) api.TaxInvoiceSubmissionValidation {
	out := api.TaxInvoiceSubmissionValidation{
		Status:          api.TaxInvoiceSubmissionValidationStatus(r.Verdict()),
		InfoMessages:    []api.TaxInvoiceSubmissionMessage{},
		WarningMessages: []api.TaxInvoiceSubmissionMessage{},
		ErrorMessages:   []api.TaxInvoiceSubmissionMessage{},
	}
	for _, res := range r.Results {
		m := api.TaxInvoiceSubmissionMessage{
			Type: api.TaxInvoiceSubmissionMessageType(strings.ToUpper(res.Type)), Code: res.Code,
			Category: api.TaxInvoiceSubmissionMessageCategory(res.Category), Message: res.Message,
		}
		switch res.Type {
		case einvoice.ResultError:
			m.Status = api.TaxInvoiceSubmissionMessageStatus(einvoice.VerdictError)
			out.ErrorMessages = append(out.ErrorMessages, m)
		case einvoice.ResultWarning:
			m.Status = api.TaxInvoiceSubmissionMessageStatus(einvoice.VerdictWarning)
			out.WarningMessages = append(out.WarningMessages, m)
		default:
			m.Status = api.TaxInvoiceSubmissionMessageStatus(einvoice.VerdictPass)
			out.InfoMessages = append(out.InfoMessages, m)
		}
	}
	return out
}
