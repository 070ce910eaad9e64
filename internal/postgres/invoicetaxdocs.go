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
	"github.com/provider/coreapi/internal/address"
	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/einvoice"
	"github.com/provider/coreapi/internal/secretbox"
)

// The tax documents of billing invoices (issue 26). Issuing an SAR invoice, and voiding one,
// queues a job (internal/jobs) in the same transaction; the job calls IssueTaxDocuments,
// which gives the invoice what it is owed and is a no-op once it has it. The platform is the
// seller (core.PlatformSeller, its own chain on core.PlatformEGSUnit), the organization the
// buyer; each document is a row of tax_invoices under the organization, so it is in the
// organization's archive and downloadable like its own documents.

// queueTaxDocuments queues the job that issues what inv is owed, in the transaction of ctx.
func (d *DB) queueTaxDocuments(ctx context.Context, inv *core.BillingInvoice) error {
	if inv.TaxDocumentStatus == core.TaxDocumentNotApplicable {
		return nil
	}
	return d.enqueue(ctx, func(jobs Jobs, tx pgx.Tx) error { return jobs.InsertTaxDocuments(ctx, tx, inv.OrganizationID, inv.ID) })
}

// IssueTaxDocuments gives billing invoice invoiceID of organization orgID the tax documents
// it is owed, in one transaction under the invoice's row lock: its tax invoice while its
// tax_document_status is pending (then issued, or failed with the engine's reasons), and
// the credit note of its tax invoice once it is void. Running it again finds nothing owed;
// the primary key of billing_invoice_tax_documents refuses a second outcome of one document
// should two runs ever race past the lock. box opens the platform's stamping key.
func (d *DB) IssueTaxDocuments(ctx context.Context, box *secretbox.Box, orgID, invoiceID uuid.UUID) error {
	if err := d.ensurePlatformUnit(ctx, box); err != nil {
		return err
	}
	return d.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		row, err := q.BillingInvoiceGetByIDForUpdate(ctx, dbq.BillingInvoiceGetByIDForUpdateParams{OrganizationID: orgID, ID: invoiceID})
		if err != nil {
			return translate(err)
		}
		inv, err := invoiceFromRow(row)
		if err != nil {
			return err
		}
		outcomes, err := q.BillingInvoiceTaxDocumentList(ctx, dbq.BillingInvoiceTaxDocumentListParams{OrganizationID: orgID, BillingInvoiceID: invoiceID})
		if err != nil {
			return err
		}
		issuer := taxDocumentIssuer{db: d, q: q, box: box, inv: inv}
		switch owed := owedTaxDocument(inv, outcomes); owed {
		case core.TaxDocumentForInvoice:
			if err := issuer.issueTaxInvoice(ctx); err != nil {
				return err
			}
			if inv.Status != core.InvoiceVoid {
				return nil
			}
			// Voided before its tax invoice was issued: the credit note follows at once.
			if outcomes, err = q.BillingInvoiceTaxDocumentList(ctx, dbq.BillingInvoiceTaxDocumentListParams{OrganizationID: orgID, BillingInvoiceID: invoiceID}); err != nil {
				return err
			}
			if owedTaxDocument(issuer.inv, outcomes) == core.TaxDocumentForCreditNote {
				return issuer.issueCreditNote(ctx, outcomes[0])
			}
		case core.TaxDocumentForCreditNote:
			return issuer.issueCreditNote(ctx, outcomes[0])
		}
		return nil
	})
}

// owedTaxDocument is the document inv is owed now, given the outcomes recorded (the tax
// invoice's first): its tax invoice while pending, the credit note of its issued tax invoice
// once void, or nothing ("").
func owedTaxDocument(inv *core.BillingInvoice, outcomes []dbq.BillingInvoiceTaxDocumentListRow) string {
	switch {
	case inv.TaxDocumentStatus == core.TaxDocumentPending && len(outcomes) == 0:
		return core.TaxDocumentForInvoice
	case inv.Status == core.InvoiceVoid && inv.TaxDocumentStatus == core.TaxDocumentIssued && len(outcomes) == 1:
		return core.TaxDocumentForCreditNote
	}
	return ""
}

// taxDocumentIssuer issues the tax documents of one locked billing invoice.
type taxDocumentIssuer struct {
	db  *DB
	q   *dbq.Queries
	box *secretbox.Box
	inv *core.BillingInvoice
}

// issueTaxInvoice issues the invoice's tax invoice, or records why the engine refused it,
// and moves its tax_document_status to issued or failed.
func (t *taxDocumentIssuer) issueTaxInvoice(ctx context.Context) error {
	buyer, err := t.buyer(ctx)
	if err != nil {
		return err
	}
	req, err := core.TaxInvoiceRequest(t.inv, buyer)
	if err != nil {
		return t.fail(ctx, core.TaxDocumentForInvoice, req, &core.TaxDocumentFailure{Message: err.Error(), Issues: []einvoice.Issue{}})
	}
	doc, failure, err := t.generate(ctx, core.TaxDocumentForInvoice, req)
	if err != nil {
		return err
	}
	if failure != nil {
		return t.fail(ctx, core.TaxDocumentForInvoice, req, failure)
	}
	return t.issued(ctx, core.TaxDocumentIssued, doc)
}

// issueCreditNote issues the credit note of the invoice's tax invoice (original): the same
// lines and buyer, referring to it by number and issue date.
func (t *taxDocumentIssuer) issueCreditNote(ctx context.Context, original dbq.BillingInvoiceTaxDocumentListRow) error {
	var req einvoice.Request
	if err := json.Unmarshal(original.EngineRequest, &req); err != nil {
		return fmt.Errorf("postgres: engine request of the tax invoice of billing invoice %s: %w", t.inv.ID, err)
	}
	req = core.CreditNoteRequest(req, *original.Number, *original.IssuedAt, t.inv)
	doc, failure, err := t.generate(ctx, core.TaxDocumentForCreditNote, req)
	if err != nil {
		return err
	}
	if failure != nil {
		// The tax invoice stands (status issued); the refusal is in the tax documents' read
		// and the failed event.
		return t.fail(ctx, core.TaxDocumentForCreditNote, req, failure)
	}
	return t.issued(ctx, t.inv.TaxDocumentStatus, doc)
}

// buyer is what the tax invoice says of the organization: its details and the postal
// address its national short address resolves to in the sandbox data set, if it does.
func (t *taxDocumentIssuer) buyer(ctx context.Context) (core.TaxDocumentBuyer, error) {
	row, err := t.q.OrganizationGetByID(ctx, t.inv.OrganizationID)
	if err != nil {
		return core.TaxDocumentBuyer{}, translate(err)
	}
	b := core.TaxDocumentBuyer{Organization: organizationFromRow(row)}
	if ref := b.Organization.NationalAddressReference; ref != nil {
		if res, err := address.Resolve(*ref, address.English); err == nil && res.Address.Street != nil && res.Address.City != nil {
			a := res.Address
			b.PostalAddress = &einvoice.Address{
				StreetName: a.Street, BuildingNumber: a.BuildingNumber, AdditionalNumber: a.AdditionalNumber,
				District: a.District, City: a.City, PostalCode: a.PostalCode, Province: a.Region, CountryCode: "SA",
			}
		}
	}
	return b, nil
}

// generate checks req with the engine and, when it has no error, issues it on the platform's
// chain and stores it under the buyer with its outcome. A refusal is returned as a failure
// (nothing issued, no counter value used); err is for everything else, which the job retries.
func (t *taxDocumentIssuer) generate(ctx context.Context, purpose string, req einvoice.Request) (*core.TaxInvoice, *core.TaxDocumentFailure, error) {
	draft, err := einvoice.Prepare(req)
	if errors.Is(err, einvoice.ErrAmountOutOfRange) {
		return nil, &core.TaxDocumentFailure{Message: fmt.Sprintf("An amount of the invoice exceeds %s SAR.", einvoice.FormatAmount(einvoice.MaxAmount)), Issues: []einvoice.Issue{}}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if !draft.Valid() {
		return nil, &core.TaxDocumentFailure{Message: invalidInvoiceError(draft.Issues).Message, Issues: draft.Issues}, nil
	}
	unit, err := t.q.PlatformEinvoiceUnitNext(ctx, core.PlatformEGSUnit)
	if err != nil {
		return nil, nil, err
	}
	private, err := t.box.Open(unit.PrivateKey, []byte(core.PlatformEGSUnit))
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: the platform's stamping key: %w", err)
	}
	key, err := einvoice.LoadSandboxKey(private, unit.Certificate)
	if err != nil {
		return nil, nil, err
	}
	// The stored request is the contract's request shape, as the transport renders it, so the
	// document reads back (getTaxInvoice) like one the organization generated.
	requestJSON, err := t.db.Events.Encode(core.EventInvoiceTaxDocumentIssued, &core.PlatformTaxRequest{OrganizationID: t.inv.OrganizationID, Request: req})
	if err != nil {
		return nil, nil, err
	}
	kind, _ := einvoice.KindOf(req.RequestedType)
	var referenceNumber *string
	if req.BillingReference != nil {
		referenceNumber = &req.BillingReference.Number
	}
	doc, err := storeTaxDocument(ctx, t.q, taxDocument{
		OrganizationID: t.inv.OrganizationID, EGSUnitID: core.PlatformEGSUnit, Kind: kind, RequestedType: req.RequestedType,
		Draft: draft, Key: key, ICV: unit.LastIcv, PIH: unit.LastInvoiceHash, IssuedAt: t.db.billingNow(ctx, t.inv.OrganizationID), RequestJSON: requestJSON,
		ReferenceNumber: referenceNumber,
		SetHash: func(hash string) error {
			return t.q.PlatformEinvoiceUnitSetHash(ctx, dbq.PlatformEinvoiceUnitSetHashParams{EgsUnitID: core.PlatformEGSUnit, LastInvoiceHash: hash})
		},
	})
	if err != nil {
		return nil, nil, err
	}
	return doc, nil, t.record(ctx, purpose, req, &doc.ID, nil)
}

// record stores the outcome of the invoice's document purpose: the document or the failure.
func (t *taxDocumentIssuer) record(ctx context.Context, purpose string, req einvoice.Request, docID *uuid.UUID, failure *core.TaxDocumentFailure) error {
	engineRequest, err := json.Marshal(req)
	if err != nil {
		return err
	}
	var failureJSON []byte
	if failure != nil {
		if failureJSON, err = json.Marshal(failure); err != nil {
			return err
		}
	}
	return t.q.BillingInvoiceTaxDocumentInsert(ctx, dbq.BillingInvoiceTaxDocumentInsertParams{
		OrganizationID: t.inv.OrganizationID, BillingInvoiceID: t.inv.ID, Purpose: purpose, TaxInvoiceID: docID,
		Failure: failureJSON, EngineRequest: engineRequest,
	})
}

// issued moves the invoice's tax_document_status to status and announces the document.
func (t *taxDocumentIssuer) issued(ctx context.Context, status string, doc *core.TaxInvoice) error {
	return t.announce(ctx, status, "billing_invoice.tax_document_issued", core.EventInvoiceTaxDocumentIssued,
		fmt.Sprintf("%s %s issued by the platform", doc.Invoice.Type, doc.Number))
}

// fail records failure as the outcome of purpose and announces it; a refused tax invoice
// moves the status to failed, a refused credit note leaves it issued.
func (t *taxDocumentIssuer) fail(ctx context.Context, purpose string, req einvoice.Request, failure *core.TaxDocumentFailure) error {
	if err := t.record(ctx, purpose, req, nil, failure); err != nil {
		return err
	}
	status := t.inv.TaxDocumentStatus
	if purpose == core.TaxDocumentForInvoice {
		status = core.TaxDocumentFailed
	}
	return t.announce(ctx, status, "billing_invoice.tax_document_failed", core.EventInvoiceTaxDocumentFailed, failure.Message)
}

// announce stores the invoice's tax_document_status, audits the change as action with reason
// and publishes event with the invoice's tax documents as they now are.
func (t *taxDocumentIssuer) announce(ctx context.Context, status string, action string, event core.EventType, reason string) error {
	before := *t.inv
	row, err := t.q.BillingInvoiceSetTaxDocumentStatus(ctx, dbq.BillingInvoiceSetTaxDocumentStatusParams{
		OrganizationID: t.inv.OrganizationID, ID: t.inv.ID, TaxDocumentStatus: status, UpdatedAt: t.db.billingNow(ctx, t.inv.OrganizationID),
	})
	if err != nil {
		return err
	}
	if t.inv, err = invoiceFromRow(row); err != nil {
		return err
	}
	if err := audit(ctx, t.q, core.AuditEntry{
		OrganizationID: &t.inv.OrganizationID, Action: action, ResourceType: "billing_invoice", ResourceID: t.inv.ID.String(),
		Before: &before, After: t.inv, Reason: reason,
	}); err != nil {
		return err
	}
	docs, err := invoiceTaxDocuments(ctx, t.q, t.inv)
	if err != nil {
		return err
	}
	return t.db.publish(ctx, t.q, t.inv.OrganizationID, event, docs)
}

// ensurePlatformUnit creates the platform's EGS unit, with its sandbox stamping key, on
// first use; concurrent first uses keep one.
func (d *DB) ensurePlatformUnit(ctx context.Context, box *secretbox.Box) error {
	q := d.queries(ctx)
	exists, err := q.PlatformEinvoiceUnitExists(ctx, core.PlatformEGSUnit)
	if err != nil || exists {
		return err
	}
	key, err := einvoice.NewSandboxKey(core.PlatformSeller.LegalName, time.Now())
	if err != nil {
		return err
	}
	return q.PlatformEinvoiceUnitCreate(ctx, dbq.PlatformEinvoiceUnitCreateParams{
		EgsUnitID: core.PlatformEGSUnit, FirstHash: einvoice.FirstPIH,
		PrivateKey: box.Seal(key.PrivateKeyBytes(), []byte(core.PlatformEGSUnit)), Certificate: key.Certificate,
	})
}

// ListInvoiceTaxDocuments implements core.InvoiceService.
func (s *InvoiceService) ListInvoiceTaxDocuments(ctx context.Context, id uuid.UUID) (*core.InvoiceTaxDocuments, error) {
	inv, err := s.FindInvoice(ctx, id)
	if err != nil {
		return nil, err
	}
	return invoiceTaxDocuments(ctx, s.db.queries(ctx), inv)
}

// invoiceTaxDocuments reads the tax documents of inv and the failure of its tax invoice.
func invoiceTaxDocuments(ctx context.Context, q *dbq.Queries, inv *core.BillingInvoice) (*core.InvoiceTaxDocuments, error) {
	rows, err := q.BillingInvoiceTaxDocumentList(ctx, dbq.BillingInvoiceTaxDocumentListParams{OrganizationID: inv.OrganizationID, BillingInvoiceID: inv.ID})
	if err != nil {
		return nil, translate(err)
	}
	out := &core.InvoiceTaxDocuments{InvoiceID: inv.ID, OrganizationID: inv.OrganizationID, TaxDocumentStatus: inv.TaxDocumentStatus, Documents: []*core.TaxInvoice{}}
	for _, r := range rows {
		if r.Failure != nil {
			out.Failure = &core.TaxDocumentFailure{}
			if err := json.Unmarshal(r.Failure, out.Failure); err != nil {
				return nil, fmt.Errorf("postgres: failure of a tax document of billing invoice %s: %w", inv.ID, err)
			}
			continue
		}
		out.Documents = append(out.Documents, &core.TaxInvoice{
			ID: *r.ID, OrganizationID: *r.OrganizationID, ConnectedBusinessID: r.ConnectedBusinessID, EGSUnitID: *r.EgsUnitID,
			Status: *r.Status, RequestedType: *r.InvoiceType, Number: *r.Number, UUID: *r.Uuid, ICV: *r.Icv,
			IssuedAt: *r.IssuedAt, CreatedAt: *r.CreatedAt, BillingReferenceNumber: r.BillingReferenceNumber,
			Invoice: einvoice.Invoice{Type: *r.InvoiceType, Hash: *r.InvoiceHash, Totals: einvoice.Totals{Payable: *r.PayableAmount}},
		})
	}
	return out, nil
}

// RetryInvoiceTaxDocuments implements core.InvoiceService. Under the invoice's row lock (the
// job's), the refused outcome is forgotten, the status is pending again and the job is
// queued in the same transaction: the job then issues the tax invoice as it issues any
// pending one, exactly once. A second retry finds it pending (EInvalidTransition).
func (s *InvoiceService) RetryInvoiceTaxDocuments(ctx context.Context, id uuid.UUID) (*core.InvoiceTaxDocuments, error) {
	var docs *core.InvoiceTaxDocuments
	err := s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		inv, err := lockInvoice(ctx, q, id)
		if err != nil {
			return err
		}
		if err := inv.CheckTaxDocumentRetry(); err != nil {
			return err
		}
		failed, err := invoiceTaxDocuments(ctx, q, inv)
		if err != nil {
			return err
		}
		if _, err := q.BillingInvoiceTaxDocumentDeleteFailed(ctx, dbq.BillingInvoiceTaxDocumentDeleteFailedParams{OrganizationID: inv.OrganizationID, BillingInvoiceID: inv.ID}); err != nil {
			return err
		}
		row, err := q.BillingInvoiceSetTaxDocumentStatus(ctx, dbq.BillingInvoiceSetTaxDocumentStatusParams{
			OrganizationID: inv.OrganizationID, ID: inv.ID, TaxDocumentStatus: core.TaxDocumentPending, UpdatedAt: s.db.billingNow(ctx, inv.OrganizationID),
		})
		if err != nil {
			return err
		}
		after, err := invoiceFromRow(row)
		if err != nil {
			return err
		}
		if docs, err = invoiceTaxDocuments(ctx, q, after); err != nil {
			return err
		}
		reason := "retry of a failed tax document"
		if failed.Failure != nil {
			reason += ": " + failed.Failure.Message
		}
		if err := audit(ctx, q, core.AuditEntry{
			OrganizationID: &after.OrganizationID, Action: "billing_invoice.tax_document_retried", ResourceType: "billing_invoice",
			ResourceID: after.ID.String(), Before: inv, After: after, Reason: reason,
		}); err != nil {
			return err
		}
		if err := s.db.queueTaxDocuments(ctx, after); err != nil {
			return err
		}
		return s.db.publish(ctx, q, after.OrganizationID, core.EventInvoiceTaxDocumentRetried, docs)
	})
	return docs, err
}
