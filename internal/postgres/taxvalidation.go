package postgres

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/einvoice"
)

// TaxInvoiceValidationService implements core.TaxInvoiceValidationService.
type TaxInvoiceValidationService struct {
	db        *DB
	validator func() (*einvoice.Validator, error)
}

var _ core.TaxInvoiceValidationService = (*TaxInvoiceValidationService)(nil)

// NewTaxInvoiceValidationService returns the validation service over d. It compiles the UBL
// 2.1 schema now, once per process (einvoice.SharedValidator), so the first request does not
// pay for it; a schema that does not compile is reported by every validation.
func NewTaxInvoiceValidationService(d *DB) *TaxInvoiceValidationService {
	_, _ = einvoice.SharedValidator()
	return &TaxInvoiceValidationService{db: d, validator: einvoice.SharedValidator}
}

// ValidateTaxInvoiceRequest implements core.TaxInvoiceValidationService.
func (s *TaxInvoiceValidationService) ValidateTaxInvoiceRequest(ctx context.Context, orgID uuid.UUID, req einvoice.Request, original *uuid.UUID) (*core.TaxInvoiceValidation, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.ActsFor(orgID, "/organization_id"); err != nil {
		return nil, err
	}
	if err := s.entitle(ctx, p, orgID); err != nil {
		return nil, err
	}
	_, err = resolveBillingReference(ctx, s.db, orgID, p.ConnectedBusinessID, einvoice.KindOfRequest(req), &req, original)
	unresolved, isRefusal := referenceRefusal(err)
	if err != nil && !isRefusal {
		return nil, err
	}
	report := einvoice.ValidateRequest(req)
	if isRefusal {
		// The note names an invoice it cannot correct: that, rather than "no reference", is
		// what SBX-REF-01 reports.
		report.Results = append([]einvoice.Result{unresolved}, slices.DeleteFunc(report.Results, func(r einvoice.Result) bool {
			return r.Code == einvoice.RuleNoteReference
		})...)
	}
	return &core.TaxInvoiceValidation{Input: core.ValidationInputJSON, Report: report.Bounded(einvoice.MaxResults)}, nil
}

// referenceRefusal is the error result of a billing reference that generation refuses (422
// at a pointer), reported as the note rule it breaks (SBX-REF-01); ok is false for any other
// error.
func referenceRefusal(err error) (r einvoice.Result, ok bool) {
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Code != core.EUnprocessable || len(ce.Fields) != 1 {
		return einvoice.Result{}, false
	}
	f := ce.Fields[0]
	return einvoice.Result{Type: einvoice.ResultError, Code: einvoice.RuleNoteReference, Category: einvoice.CategoryRules, Message: f.Message, Path: f.Pointer}, true
}

// ValidateTaxInvoiceXML implements core.TaxInvoiceValidationService.
func (s *TaxInvoiceValidationService) ValidateTaxInvoiceXML(ctx context.Context, doc []byte) (*core.TaxInvoiceValidation, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	var trust einvoice.Trust
	if !p.IsOperator() {
		if err := s.entitle(ctx, p, p.OrganizationID); err != nil {
			return nil, err
		}
		if trust.Own, err = s.sandboxCertificate(ctx, p.OrganizationID); err != nil {
			return nil, err
		}
	}
	if trust.SandboxCA, err = s.sandboxCACertificate(ctx); err != nil {
		return nil, err
	}
	trust.RevokedAt = revocationList(ctx, s.db.queries(ctx))
	v, err := s.validator()
	if err != nil {
		return nil, err
	}
	report, err := v.ValidateXML(doc, trust)
	if errors.Is(err, einvoice.ErrNotXML) {
		return nil, &core.Error{Code: core.EValidation, Message: "The body is not a readable XML document.", Fields: []core.FieldError{{
			Location: "body", Pointer: "", Code: "xml", Message: strings.TrimPrefix(err.Error(), einvoice.ErrNotXML.Error()+": "),
		}}}
	}
	if err != nil {
		return nil, err
	}
	return &core.TaxInvoiceValidation{Input: core.ValidationInputXML, Report: report.Bounded(einvoice.MaxResults)}, nil
}

// entitle applies the einvoice product's entitlement rules to the organization, as
// generation does.
func (s *TaxInvoiceValidationService) entitle(ctx context.Context, p *core.Principal, orgID uuid.UUID) error {
	return s.db.entitle(ctx, orgID, core.Access{Act: core.ActUseProduct, Environment: p.TrafficEnvironment(), Product: productEinvoice})
}

// sandboxCertificate is the organization's sandbox stamping certificate, nil when it has
// none yet (it has generated nothing): validation never creates one.
func (s *TaxInvoiceValidationService) sandboxCertificate(ctx context.Context, orgID uuid.UUID) ([]byte, error) {
	row, err := s.db.queries(ctx).EinvoiceSandboxKeyGet(ctx, orgID)
	if core.ErrorCode(translate(err)) == core.ENotFound {
		return nil, nil
	}
	if err != nil {
		return nil, translate(err)
	}
	return row.Certificate, nil
}

// sandboxCACertificate is the sandbox CA's certificate, which issues the EGS units'
// certificates and stamps cleared documents; nil while there is none (no unit registered and
// nothing cleared yet): validation never creates it.
func (s *TaxInvoiceValidationService) sandboxCACertificate(ctx context.Context) ([]byte, error) {
	row, err := s.db.queries(ctx).EinvoiceSandboxCAGet(ctx)
	if core.ErrorCode(translate(err)) == core.ENotFound {
		return nil, nil
	}
	if err != nil {
		return nil, translate(err)
	}
	return row.Certificate, nil
}
