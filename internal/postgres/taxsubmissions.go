package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/einvoice"
	"github.com/provider/coreapi/internal/secretbox"
)

// SubmitTaxInvoice implements core.TaxInvoiceService: the sandbox authority's reporting and
// clearance, simulated. The document's row lock serialises concurrent submissions of it; the
// second finds the first's status and is refused.
func (s *TaxInvoiceService) SubmitTaxInvoice(ctx context.Context, id uuid.UUID) (*core.TaxInvoiceSubmission, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if p.IsOperator() {
		return nil, core.Errorf(core.EForbidden, "Submission is the taxpayer's act: the operator cannot submit an organization's tax documents.")
	}
	orgID := p.OrganizationID
	if err := s.admit(ctx, p, orgID); err != nil {
		return nil, err
	}
	validator, err := einvoice.SharedValidator()
	if err != nil {
		return nil, err
	}
	var out *core.TaxInvoiceSubmission
	err = s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		doc, err := q.TaxInvoiceLockForSubmission(ctx, dbq.TaxInvoiceLockForSubmissionParams{OrganizationID: orgID, ID: id})
		if err != nil {
			if core.ErrorCode(translate(err)) == core.ENotFound {
				return core.Errorf(core.ENotFound, "Tax invoice %s does not exist.", id)
			}
			return translate(err)
		}
		if doc.SubmissionStatus != einvoice.SubmissionNotSubmitted {
			return core.Errorf(core.EInvalidTransition,
				"Tax invoice %s was submitted already and is %s; a document is submitted once (getTaxInvoiceSubmission reads the result).", id, doc.SubmissionStatus)
		}
		// The key exists: it stamped the document.
		key, err := s.sandboxKey(ctx, orgID)
		if err != nil {
			return err
		}
		ca, err := sandboxCA(ctx, q, s.box, s.now())
		if err != nil {
			return err
		}
		kind, _ := einvoice.KindOf(doc.InvoiceType)
		trust := einvoice.Trust{Own: key.Certificate, SandboxCA: ca.Certificate, RevokedAt: revocationList(ctx, q)}
		submission, err := s.judge(validator, trust, ca, kind, doc)
		if err != nil {
			return err
		}
		submission.OrganizationID = orgID
		if out, err = storeSubmission(ctx, q, submission); err != nil {
			return err
		}
		if err := audit(ctx, q, core.AuditEntry{
			OrganizationID: &orgID,
			Action:         "tax_invoice.submitted",
			ResourceType:   "tax_invoice",
			ResourceID:     id.String(),
			Before:         map[string]string{"submission_status": doc.SubmissionStatus},
			After:          map[string]string{"submission_status": out.Status, "mode": einvoice.SubmissionMode(kind)},
		}); err != nil {
			return err
		}
		if err := s.db.publish(ctx, q, orgID, core.EventTaxInvoiceSubmitted, out); err != nil {
			return err
		}
		return s.db.recordUsage(ctx, q, orgID, productEinvoice)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// judge is the sandbox authority's decision on doc: its validation as validateTaxInvoice
// checks XML (trust: the organization's certificate, the sandbox CA, which issued its units'
// certificates, and its revocation list), the reporting deadline of a simplified document, and
// for a cleared standard one the authority's stamp, made with the sandbox CA's key.
func (s *TaxInvoiceService) judge(v *einvoice.Validator, trust einvoice.Trust, ca *einvoice.SandboxCA, kind einvoice.Kind, doc dbq.TaxInvoiceLockForSubmissionRow) (*core.TaxInvoiceSubmission, error) {
	report, err := v.ValidateXML([]byte(doc.Xml), trust)
	if err != nil {
		return nil, fmt.Errorf("postgres: validating stored tax invoice %s: %w", doc.ID, err)
	}
	out := &core.TaxInvoiceSubmission{InvoiceID: doc.ID, Kind: kind, SubmittedAt: s.now().UTC()}
	if late, ok := einvoice.LateReporting(kind, doc.IssuedAt, out.SubmittedAt); ok {
		report.Results = append(report.Results, late)
	}
	report = report.Bounded(einvoice.MaxResults)
	out.Results, out.Status = report.Results, einvoice.SubmissionOutcome(kind, report)
	if out.Status == einvoice.SubmissionCleared {
		// The sandbox authority's stamp: the sandbox CA's own key and certificate, signed now.
		xml, qr, err := einvoice.Restamp(doc.Xml, ca.StampingKey(), out.SubmittedAt)
		if err != nil {
			return nil, fmt.Errorf("postgres: stamping cleared tax invoice %s: %w", doc.ID, err)
		}
		out.ClearedXML, out.ClearedQR = &xml, &qr
	}
	return out, nil
}

// revocationList is the sandbox CA's revocation list for the validator (einvoice.Trust):
// when the EGS unit a certificate was issued to was revoked, whichever organization's unit it
// is, as anyone may read a certification authority's revocation list. Only the time is read.
func revocationList(ctx context.Context, q *dbq.Queries) func(certificate []byte) (time.Time, bool, error) {
	return func(certificate []byte) (time.Time, bool, error) {
		at, err := q.EgsCertificateRevokedAtAnyOrganization(ctx, certificate)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && at == nil) {
			return time.Time{}, false, nil
		}
		if err != nil {
			return time.Time{}, false, translate(err)
		}
		return *at, true, nil
	}
}

// sandboxCA returns the sandbox CA, making it on first use; concurrent first uses race on
// the singleton row and the loser reads the winner's. box seals its key.
func sandboxCA(ctx context.Context, q *dbq.Queries, box *secretbox.Box, now time.Time) (*einvoice.SandboxCA, error) {
	row, err := q.EinvoiceSandboxCAGet(ctx)
	if core.ErrorCode(translate(err)) == core.ENotFound {
		ca, err := einvoice.NewSandboxCA(now)
		if err != nil {
			return nil, err
		}
		if err := q.EinvoiceSandboxCAInsert(ctx, dbq.EinvoiceSandboxCAInsertParams{
			PrivateKey: box.Seal(ca.PrivateKeyBytes(), caSealContext), Certificate: ca.Certificate,
		}); err != nil {
			return nil, err
		}
		row, err = q.EinvoiceSandboxCAGet(ctx)
		if err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	private, err := box.Open(row.PrivateKey, caSealContext)
	if err != nil {
		return nil, fmt.Errorf("sandbox CA key: %w", err)
	}
	return einvoice.LoadSandboxCA(private, row.Certificate)
}

// storeSubmission records the outcome and moves the document's submission_status to it.
func storeSubmission(ctx context.Context, q *dbq.Queries, sub *core.TaxInvoiceSubmission) (*core.TaxInvoiceSubmission, error) {
	results, err := json.Marshal(sub.Results)
	if err != nil {
		return nil, err
	}
	row, err := q.TaxInvoiceSubmissionInsert(ctx, dbq.TaxInvoiceSubmissionInsertParams{
		TaxInvoiceID: sub.InvoiceID, OrganizationID: sub.OrganizationID, Status: sub.Status, Results: results,
		ClearedXml: sub.ClearedXML, ClearedQr: sub.ClearedQR, SubmittedAt: sub.SubmittedAt, RequestID: nonEmpty(core.RequestIDFrom(ctx)),
	})
	if err != nil {
		return nil, err
	}
	if err := q.TaxInvoiceSetSubmissionStatus(ctx, dbq.TaxInvoiceSetSubmissionStatusParams{
		OrganizationID: sub.OrganizationID, ID: sub.InvoiceID, SubmissionStatus: sub.Status,
	}); err != nil {
		return nil, err
	}
	sub.SubmittedAt = row.SubmittedAt // as stored (microseconds), so the answer and later reads agree
	return sub, nil
}

// FindTaxInvoiceSubmission implements core.TaxInvoiceService.
func (s *TaxInvoiceService) FindTaxInvoiceSubmission(ctx context.Context, id uuid.UUID) (*core.TaxInvoiceSubmission, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	var row dbq.TaxInvoiceSubmissionGetRow
	if p.IsOperator() {
		var anyOrg dbq.TaxInvoiceSubmissionGetAnyOrganizationRow
		anyOrg, err = s.db.queries(ctx).TaxInvoiceSubmissionGetAnyOrganization(ctx, id)
		row = dbq.TaxInvoiceSubmissionGetRow(anyOrg)
	} else {
		row, err = s.db.queries(ctx).TaxInvoiceSubmissionGet(ctx, dbq.TaxInvoiceSubmissionGetParams{
			OrganizationID: p.OrganizationID, TaxInvoiceID: id, ConnectedBusinessID: p.ConnectedBusinessID,
		})
	}
	if core.ErrorCode(translate(err)) == core.ENotFound {
		return nil, core.Errorf(core.ENotFound, "Tax invoice %s does not exist or has not been submitted.", id)
	}
	if err != nil {
		return nil, translate(err)
	}
	kind, _ := einvoice.KindOf(row.InvoiceType)
	out := &core.TaxInvoiceSubmission{
		InvoiceID: row.TaxInvoiceID, OrganizationID: row.OrganizationID, Kind: kind, Status: row.Status,
		ClearedXML: row.ClearedXml, ClearedQR: row.ClearedQr, SubmittedAt: row.SubmittedAt,
	}
	if err := json.Unmarshal(row.Results, &out.Results); err != nil {
		return nil, fmt.Errorf("postgres: submission of tax invoice %s: %w", id, err)
	}
	return out, nil
}
