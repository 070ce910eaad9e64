package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/einvoice"
	"github.com/provider/coreapi/internal/secretbox"
)

// TaxInvoiceService implements core.TaxInvoiceService.
type TaxInvoiceService struct {
	db   *DB
	box  *secretbox.Box // seals the sandbox stamping keys at rest
	keys loadedKeys
	now  func() time.Time
}

var _ core.TaxInvoiceService = (*TaxInvoiceService)(nil)

// NewTaxInvoiceService returns the tax invoice service over d; box seals stamping keys.
func NewTaxInvoiceService(d *DB, box *secretbox.Box) *TaxInvoiceService {
	return &TaxInvoiceService{db: d, box: box, now: time.Now}
}

// GenerateTaxInvoice implements core.TaxInvoiceService: every kind, one generator.
//
// Its statements take three round trips, the first two each a pipeline (Pipeline): the BEGIN
// with what admits and stamps the document (the standing, unless cached, the spend control,
// the stamping keys), read before any check, and the lock of the chain the request names; the
// document with everything written beside it (its audit entry, its event, its usage count);
// then the COMMIT. Only what depends on a result comes after its pipeline, one statement at a
// time (a chain's start, a unit's key, webhook deliveries, a spend control's decision). A
// request refused by its checks rolls back, having held its own chain's lock for as long as
// they took; one whose stamping unit is not the one it named (another spelling of a unit's id)
// locks that unit's chain after them.
func (s *TaxInvoiceService) GenerateTaxInvoice(ctx context.Context, in core.TaxInvoiceGenerate) (*core.TaxInvoice, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	orgID := in.OrganizationID
	if err := p.ActsFor(orgID, "/organization_id"); err != nil {
		return nil, err
	}
	// The seller is the organization itself, or the connected business whose credential
	// made the request: a business is its own seller with its own chain per EGS unit.
	business := p.ConnectedBusinessID
	sellerID := orgID
	if business != nil {
		sellerID = *business
	}
	named := in.Request.EGSUnit()
	issuedAt := s.now()
	first := new(Pipeline)
	// Read outside any write of the transaction, so the standing read is as cacheable as
	// one read alone.
	entitled := s.db.queueEntitle(ctx, first, orgID, core.Access{Act: core.ActUseProduct, Environment: p.TrafficEnvironment(), Product: productEinvoice})
	spendAdmits := queueCheckSpend(ctx, first, orgID, productEinvoice)
	stampingKey := s.queueStampingKey(ctx, first, orgID, in.Request)
	// The counter row stays locked until commit: concurrent invoices of one EGS unit queue
	// here, each sees the previous one's hash, and a rollback leaves no gap.
	next := QueueNextInChain(ctx, first, orgID, sellerID, named)
	var out *core.TaxInvoice
	err = s.db.withTxBeginning(ctx, first, func(ctx context.Context, q *dbq.Queries) error {
		// Decided in the order they always were: a refusal's answer does not depend on the
		// reads being pipelined.
		if err := entitled(); err != nil {
			return err
		}
		kind, err := kindOfFamily(in.Request.RequestedType, in.Standard)
		if err != nil {
			return err
		}
		if named == core.PlatformEGSUnit {
			// The platform's documents to the organization are stored under it on this unit.
			return unprocessablef("/egs_unit_id", "%q is the platform's EGS unit for the tax documents of billing invoices.", named)
		}
		if in.Original, err = resolveBillingReference(ctx, s.db, orgID, business, kind, &in.Request, in.Original); err != nil {
			return err
		}
		draft, err := einvoice.Prepare(in.Request)
		if errors.Is(err, einvoice.ErrAmountOutOfRange) {
			return core.Errorf(core.EUnprocessable, "An amount of the invoice exceeds %s SAR.", einvoice.FormatAmount(einvoice.MaxAmount))
		}
		if err != nil {
			return err
		}
		// An invalid document is not issued: refused before the chain moves, so it takes no
		// counter value, links no hash and stores nothing.
		if !draft.Valid() {
			return invalidInvoiceError(draft.Issues)
		}
		if err := spendAdmits(q); err != nil {
			return err
		}
		key, egs, err := stampingKey(ctx)
		if err != nil {
			return err
		}
		if err := certificateValidAt(key, egs, issuedAt); err != nil {
			return err
		}
		var referenceNumber *string
		if ref := in.Request.BillingReference; ref != nil && kind.Note() {
			referenceNumber = &ref.Number
		}
		if egs != named { // the unit's id as the unit spells it: its own chain
			chain := new(Pipeline)
			next = QueueNextInChain(ctx, chain, orgID, sellerID, egs)
			if err := chain.Run(q); err != nil {
				return err
			}
		}
		at, err := next(q)
		if err != nil {
			return err
		}
		var row dbq.TaxInvoiceInsertParams
		if row, out, err = renderTaxDocument(ctx, taxDocument{
			OrganizationID: orgID, ConnectedBusinessID: business, EGSUnitID: egs, Kind: kind, Draft: draft, Key: key,
			ICV: at.NextIcv, PIH: at.LastInvoiceHash, IssuedAt: issuedAt, RequestedType: in.Request.RequestedType,
			RequestJSON: in.RequestJSON, OriginalID: in.Original, ReferenceNumber: referenceNumber, ChainSellerID: &sellerID,
		}); err != nil {
			return err
		}
		// The row's created_at is the transaction's time, which the chain's lock read: the
		// audit entry and the event written beside it show it before the row is sent.
		out.CreatedAt = at.TransactionTime
		writes := new(Pipeline)
		inv := out.Invoice
		if err := queueAudit(ctx, writes, core.AuditEntry{
			OrganizationID: &orgID,
			Action:         "tax_invoice.generated",
			ResourceType:   "tax_invoice",
			ResourceID:     out.ID.String(),
			After: taxInvoiceAudit{
				ID: out.ID, OrganizationID: orgID, ConnectedBusinessID: business, Number: out.Number, UUID: out.UUID, EGSUnitID: egs, ICV: out.ICV,
				InvoiceHash: inv.Hash, Valid: inv.Valid(), Status: out.Status, InvoiceType: inv.Type,
				PayableAmount: inv.Totals.Payable, Currency: einvoice.Currency, CreatedAt: out.CreatedAt,
				BillingReferenceInvoiceID: in.Original, BillingReferenceNumber: referenceNumber,
			},
		}); err != nil {
			return err
		}
		deliver, err := s.db.queuePublish(ctx, writes, orgID, core.EventTaxInvoiceGenerated, out)
		if err != nil {
			return err
		}
		recorded, err := s.db.queueRecordUsage(ctx, writes, orgID, productEinvoice)
		if err != nil {
			return err
		}
		// The document itself goes last: its bodies make the batch's largest message, and pgx
		// encodes the whole batch into one buffer, which would be copied again to grow for
		// every statement after it.
		writes.Add(func(q *dbq.Queries) (err error) {
			out.CreatedAt, err = q.TaxInvoiceInsert(ctx, row)
			return err
		})
		if err := writes.Send(ctx, s.db.batcher(ctx)); err != nil {
			return err
		}
		if err := deliver(q); err != nil {
			return err
		}
		return recorded(q)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// QueueNextInChain queues in p the lock of the chain of a seller's EGS unit (its counter row,
// until the transaction p is sent in ends); the function returned gives, once p has been
// sent, the ICV and PIH of its next document, which TaxInvoiceInsert moves the chain on to,
// and the transaction's time (now(), which that document's row takes as its created_at). The
// seller's first document on the unit starts the chain, through q; when another transaction
// started it first, this one waits for it and locks the row it made. Exported for the load
// benchmark's floor, which runs the same SQL.
func QueueNextInChain(ctx context.Context, p *Pipeline, orgID, sellerID uuid.UUID, egs string) func(q *dbq.Queries) (dbq.EinvoiceCounterLockRow, error) {
	chain := dbq.EinvoiceCounterLockParams{OrganizationID: orgID, SellerID: sellerID, EgsUnitID: egs}
	var locked dbq.EinvoiceCounterLockRow
	var lockErr error
	p.Add(func(q *dbq.Queries) error {
		locked, lockErr = q.EinvoiceCounterLock(ctx, chain)
		return ignoreNoRows(lockErr) // the chain's start, below
	})
	return func(q *dbq.Queries) (dbq.EinvoiceCounterLockRow, error) {
		if lockErr == nil {
			return locked, nil
		}
		started, err := q.EinvoiceCounterStart(ctx, dbq.EinvoiceCounterStartParams{
			OrganizationID: orgID, SellerID: sellerID, EgsUnitID: egs, FirstHash: einvoice.FirstPIH,
		})
		if err == nil {
			return dbq.EinvoiceCounterLockRow(started), nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return locked, err
		}
		// The insert waited for the transaction that started the chain and found its row
		// committed, which a new statement's snapshot sees: lock it.
		locked, err = q.EinvoiceCounterLock(ctx, chain)
		return locked, err
	}
}

// taxDocument is a document the engine prepared, with its place in its seller's chain, to
// render, stamp and store: the organization's own (GenerateTaxInvoice), or the platform's for
// a billing invoice (the organization is the buyer).
type taxDocument struct {
	OrganizationID      uuid.UUID
	ConnectedBusinessID *uuid.UUID
	EGSUnitID           string
	Kind                einvoice.Kind
	RequestedType       string
	Draft               *einvoice.Draft
	Key                 *einvoice.SandboxKey
	ICV                 int64
	PIH                 string
	IssuedAt            time.Time
	RequestJSON         []byte
	// The original a note corrects: by id when it is one of this service's, by number always.
	OriginalID      *uuid.UUID
	ReferenceNumber *string
	// ChainSellerID is the seller whose chain (einvoice_counters, locked by NextInChain) the
	// document's insert moves on to it; nil for a chain kept elsewhere, which SetHash moves on.
	ChainSellerID *uuid.UUID
	// SetHash records the document's hash as its chain's last, for the next document's PIH
	// (nil when ChainSellerID names the chain).
	SetHash func(hash string) error
}

// storeTaxDocument renders and stamps doc, moves its chain on and stores it, in the
// transaction of q (which holds the chain's row lock).
func storeTaxDocument(ctx context.Context, q *dbq.Queries, doc taxDocument) (*core.TaxInvoice, error) {
	row, out, err := renderTaxDocument(ctx, doc)
	if err != nil {
		return nil, err
	}
	if out.CreatedAt, err = q.TaxInvoiceInsert(ctx, row); err != nil {
		return nil, err
	}
	return out, nil
}

// renderTaxDocument renders and stamps doc: the row that stores it and moves its chain on
// (TaxInvoiceInsert), and the document, but for its CreatedAt, which the database sets.
func renderTaxDocument(ctx context.Context, doc taxDocument) (dbq.TaxInvoiceInsertParams, *core.TaxInvoice, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return dbq.TaxInvoiceInsertParams{}, nil, err
	}
	invoiceUUID := uuid.New()
	issuedAt := doc.IssuedAt.UTC().Truncate(time.Second)
	identity := einvoice.Identity{
		Number:   fmt.Sprintf("%s-%06d", doc.Kind.NumberPrefix, doc.ICV),
		UUID:     invoiceUUID.String(),
		ICV:      doc.ICV,
		PIH:      doc.PIH,
		IssuedAt: issuedAt,
	}
	inv, err := doc.Draft.Generate(identity, doc.Key)
	if err != nil {
		return dbq.TaxInvoiceInsertParams{}, nil, err
	}
	if doc.SetHash != nil {
		if err := doc.SetHash(inv.Hash); err != nil {
			return dbq.TaxInvoiceInsertParams{}, nil, err
		}
	}
	result, err := json.Marshal(inv)
	if err != nil {
		return dbq.TaxInvoiceInsertParams{}, nil, err
	}
	params := dbq.TaxInvoiceInsertParams{
		ID:                        id,
		OrganizationID:            doc.OrganizationID,
		ConnectedBusinessID:       doc.ConnectedBusinessID,
		EgsUnitID:                 doc.EGSUnitID,
		Icv:                       identity.ICV,
		Number:                    identity.Number,
		Uuid:                      invoiceUUID,
		Pih:                       identity.PIH,
		InvoiceHash:               inv.Hash,
		Status:                    einvoice.StatusGenerated,
		InvoiceType:               inv.Type,
		RequestedType:             doc.RequestedType,
		Valid:                     inv.Valid(),
		PayableAmount:             inv.Totals.Payable,
		IssuedAt:                  issuedAt,
		Request:                   doc.RequestJSON,
		Result:                    result,
		Xml:                       inv.XML,
		RequestID:                 nonEmpty(core.RequestIDFrom(ctx)),
		BillingReferenceInvoiceID: doc.OriginalID,
		BillingReferenceNumber:    doc.ReferenceNumber,
		ChainSellerID:             doc.ChainSellerID,
	}
	out := &core.TaxInvoice{
		ID: id, OrganizationID: doc.OrganizationID, ConnectedBusinessID: doc.ConnectedBusinessID, EGSUnitID: doc.EGSUnitID,
		Status: einvoice.StatusGenerated, RequestedType: doc.RequestedType, Number: identity.Number, UUID: invoiceUUID,
		ICV: identity.ICV, PIH: identity.PIH, IssuedAt: issuedAt, Invoice: *inv,
		BillingReferenceNumber: doc.ReferenceNumber, Request: doc.RequestJSON,
	}
	return params, out, nil
}

// admit applies to an operation that uses the einvoice product for orgID what every such
// operation obeys, before it reads anything: the entitlement rules and the spend control's
// hard limit.
func (s *TaxInvoiceService) admit(ctx context.Context, p *core.Principal, orgID uuid.UUID) error {
	if err := s.db.entitle(ctx, orgID, core.Access{Act: core.ActUseProduct, Environment: p.TrafficEnvironment(), Product: productEinvoice}); err != nil {
		return err
	}
	return translate(checkSpend(ctx, s.db.queries(ctx), orgID, productEinvoice))
}

// taxInvoiceAudit is the audit summary of a generated tax invoice (never its XML or request).
type taxInvoiceAudit struct {
	ID             uuid.UUID `json:"id"`
	OrganizationID uuid.UUID `json:"organization_id"`
	// ConnectedBusinessID is the seller when a connected business issued the invoice.
	ConnectedBusinessID *uuid.UUID `json:"connected_business_id,omitempty"`
	Number              string     `json:"number"`
	UUID                uuid.UUID  `json:"uuid"`
	EGSUnitID           string     `json:"egs_unit_id"`
	ICV                 int64      `json:"icv"`
	InvoiceHash         string     `json:"invoice_hash"`
	Valid               bool       `json:"valid"`
	Status              string     `json:"status"`
	InvoiceType         string     `json:"invoice_type"`
	PayableAmount       int64      `json:"payable_amount"`
	Currency            string     `json:"currency"`
	CreatedAt           time.Time  `json:"created_at"`
	// The invoice a credit or debit note corrects.
	BillingReferenceInvoiceID *uuid.UUID `json:"billing_reference_invoice_id,omitempty"`
	BillingReferenceNumber    *string    `json:"billing_reference_number,omitempty"`
}

// kindOfFamily is the kind requestedType names, when it belongs to the family the operation
// generates (standard or simplified); a kind of the other family is 422.
func kindOfFamily(requestedType string, standard bool) (einvoice.Kind, error) {
	kind, ok := einvoice.KindOf(requestedType)
	if ok && kind.Standard == standard {
		return kind, nil
	}
	operation := "generateSimplifiedInvoice"
	if !standard {
		operation = "generateStandardInvoice"
	}
	return einvoice.Kind{}, unprocessablef("/requested_invoice_type", "%q is generated by %s.", requestedType, operation)
}

// resolveBillingReference completes req with the billing reference of the invoice a document
// names by id (original), as generation and validation both read it, and returns the id to
// record: nil for a tax invoice, which corrects nothing, so its reference is only warned about
// (SBX-REF-02), neither resolved nor recorded. A reference that cannot be resolved is 422 at
// its pointer.
func resolveBillingReference(ctx context.Context, d *DB, orgID uuid.UUID, business *uuid.UUID, kind einvoice.Kind, req *einvoice.Request, original *uuid.UUID) (*uuid.UUID, error) {
	switch {
	case original == nil:
		return nil, nil
	case !kind.Note():
		if req.BillingReference == nil {
			req.BillingReference = &einvoice.BillingReference{Number: original.String()}
		}
		return nil, nil
	case req.BillingReference != nil:
		return nil, unprocessablef("/billing_reference", "Name the original invoice either by invoice_id or by number and issue_date, not both.")
	}
	ref, err := originalInvoice(ctx, d, orgID, business, *original, kind)
	if err != nil {
		return nil, err
	}
	req.BillingReference = ref
	return original, nil
}

// originalInvoice resolves the invoice a note names by id into its billing reference. The
// original must be visible to the principal (an unknown id and another organization's or
// business's invoice get the same answer), a tax invoice rather than a note, of the note's
// family and of the same seller.
func originalInvoice(ctx context.Context, d *DB, orgID uuid.UUID, business *uuid.UUID, id uuid.UUID, note einvoice.Kind) (*einvoice.BillingReference, error) {
	const pointer = "/billing_reference/invoice_id"
	row, err := d.queries(ctx).TaxInvoiceGetByID(ctx, dbq.TaxInvoiceGetByIDParams{OrganizationID: orgID, ID: id, ConnectedBusinessID: business})
	if core.ErrorCode(translate(err)) == core.ENotFound {
		return nil, unprocessablef(pointer, "Tax invoice %s does not exist.", id)
	}
	if err != nil {
		return nil, translate(err)
	}
	original, _ := einvoice.KindOf(row.InvoiceType)
	switch {
	case original.Note():
		return nil, unprocessablef(pointer, "Tax document %s is a %s: a note corrects a tax invoice.", id, row.InvoiceType)
	case original.Standard != note.Standard:
		return nil, unprocessablef(pointer, "A %s corrects a %s tax invoice; %s is a %s.", note.Type, familyName(note), id, row.InvoiceType)
	case !sameSeller(row.ConnectedBusinessID, business):
		return nil, unprocessablef(pointer, "Tax invoice %s was issued by another seller.", id)
	}
	date := row.IssuedAt.UTC().Format(time.DateOnly)
	return &einvoice.BillingReference{Number: row.Number, IssueDate: &date}, nil
}

func familyName(k einvoice.Kind) string {
	if k.Standard {
		return "standard"
	}
	return "simplified"
}

// sameSeller reports whether two documents were issued by the same seller: the same
// connected business, or both by the organization itself (nil).
func sameSeller(a, b *uuid.UUID) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// maxInvoiceIssues bounds the issues an invalid invoice's problem lists; detail says how
// many more there were.
const maxInvoiceIssues = 50

// invalidInvoiceError is the 422 of a document with error-severity issues: each such issue
// becomes a field error (its path, its rule code and message), warnings are left out.
func invalidInvoiceError(issues []einvoice.Issue) *core.Error {
	var fields []core.FieldError
	errs := 0
	for _, is := range issues {
		if is.Severity != einvoice.SeverityError {
			continue
		}
		errs++
		if len(fields) < maxInvoiceIssues {
			fields = append(fields, core.FieldError{Location: "body", Pointer: is.Path, Code: is.Code, Message: is.Message})
		}
	}
	msg := fmt.Sprintf("The invoice is invalid and was not issued: %d business-rule error(s), listed in errors.", errs)
	if more := errs - len(fields); more > 0 {
		msg = fmt.Sprintf("The invoice is invalid and was not issued: %d business-rule errors; the first %d are listed in errors, %d more were not.",
			errs, len(fields), more)
	}
	return &core.Error{Code: core.EUnprocessable, Message: msg, Fields: fields}
}

// queueStampingKey queues in p the read of what an organization's documents are stamped with;
// the function returned gives, once p has been sent, reading further through ctx (the sandbox
// key's first creation, a unit's row), the key and certificate a document is stamped with,
// and the EGS unit whose chain it joins. An organization that registered no EGS unit stamps
// with its sandbox key under any egs_unit_id, as before units existed; one that did must name
// one of its units, which must not be revoked and must be the seller's (its VAT
// number): the unit's key with its production certificate, or its compliance certificate until
// it has one.
func (s *TaxInvoiceService) queueStampingKey(ctx context.Context, p *Pipeline, orgID uuid.UUID, req einvoice.Request) func(context.Context) (*einvoice.SandboxKey, string, error) {
	var keys dbq.EinvoiceStampingKeysGetRow
	p.Add(func(q *dbq.Queries) (err error) {
		keys, err = q.EinvoiceStampingKeysGet(ctx, orgID)
		return err
	})
	return func(ctx context.Context) (*einvoice.SandboxKey, string, error) {
		if !keys.HasUnits {
			key, err := s.loadSandboxKey(ctx, orgID, keys.PrivateKey, keys.Certificate)
			return key, req.EGSUnit(), err
		}
		return s.unitStampingKey(ctx, orgID, req)
	}
}

// unitStampingKey is the stamping key of the registered EGS unit req names (queueStampingKey).
func (s *TaxInvoiceService) unitStampingKey(ctx context.Context, orgID uuid.UUID, req einvoice.Request) (*einvoice.SandboxKey, string, error) {
	const pointer = "/egs_unit_id"
	var unitID uuid.UUID
	if req.EGSUnitID != nil {
		unitID, _ = uuid.Parse(*req.EGSUnitID)
	}
	row, err := s.db.queries(ctx).EgsUnitGet(ctx, dbq.EgsUnitGetParams{OrganizationID: orgID, ID: unitID})
	if core.ErrorCode(translate(err)) == core.ENotFound {
		return nil, "", unprocessablef(pointer, "The organization stamps with its registered EGS units: name one of them by its id (listEgsUnits).")
	}
	if err != nil {
		return nil, "", translate(err)
	}
	switch {
	case row.Status == core.EGSUnitRevoked:
		return nil, "", core.Errorf(core.EInvalidTransition, "EGS unit %s is revoked and cannot stamp.", row.ID)
	case row.VatNumber != req.Seller.VATNumber:
		return nil, "", unprocessablef(pointer, "EGS unit %s is registered for VAT number %s; the seller's is %s.", row.ID, row.VatNumber, req.Seller.VATNumber)
	}
	cert := row.ComplianceCertificate
	if row.ProductionCertificate != nil {
		cert = row.ProductionCertificate
	}
	key, err := s.keys.load(row.PrivateKey, cert, func() ([]byte, error) { return s.box.Open(row.PrivateKey, row.ID[:]) })
	if err != nil {
		return nil, "", fmt.Errorf("key of EGS unit %s: %w", row.ID, err)
	}
	return key, row.ID.String(), nil
}

// certificateValidAt refuses to stamp at signingAt with a certificate that is not valid then:
// 409 invalid_state_transition, its one error at /egs_unit_id with the code
// certificate_not_yet_valid or certificate_expired (as the operations document them).
func certificateValidAt(key *einvoice.SandboxKey, egs string, signingAt time.Time) error {
	err := key.CheckValidAt(signingAt)
	code := ""
	switch {
	case errors.Is(err, einvoice.ErrCertificateNotYetValid):
		code = "certificate_not_yet_valid"
	case errors.Is(err, einvoice.ErrCertificateExpired):
		code = "certificate_expired"
	default:
		return err
	}
	message := fmt.Sprintf("The stamping certificate of EGS unit %s is not valid at %s (%s).", egs,
		signingAt.UTC().Format(time.RFC3339), strings.TrimPrefix(err.Error(), "einvoice: "))
	return &core.Error{Code: core.EInvalidTransition, Message: message + " Nothing was issued.",
		Fields: []core.FieldError{{Location: "body", Pointer: "/egs_unit_id", Code: code, Message: message}}}
}

// sandboxKey returns the organization's sandbox stamping key, creating it on first use.
func (s *TaxInvoiceService) sandboxKey(ctx context.Context, orgID uuid.UUID) (*einvoice.SandboxKey, error) {
	row, err := s.db.queries(ctx).EinvoiceSandboxKeyGet(ctx, orgID)
	if err != nil && core.ErrorCode(translate(err)) != core.ENotFound {
		return nil, translate(err)
	}
	return s.loadSandboxKey(ctx, orgID, row.PrivateKey, row.Certificate)
}

// loadSandboxKey returns the organization's sandbox stamping key as read (sealed, with its
// certificate), creating it when there was none (sealed nil). Concurrent first uses race on
// the primary key; the loser keeps the winner's key.
func (s *TaxInvoiceService) loadSandboxKey(ctx context.Context, orgID uuid.UUID, sealed, certificate []byte) (*einvoice.SandboxKey, error) {
	if sealed == nil {
		q := s.db.queries(ctx)
		key, err := einvoice.NewSandboxKey(orgID.String(), s.now())
		if err != nil {
			return nil, err
		}
		if err := q.EinvoiceSandboxKeyInsert(ctx, dbq.EinvoiceSandboxKeyInsertParams{
			OrganizationID: orgID, PrivateKey: s.box.Seal(key.PrivateKeyBytes(), orgID[:]), Certificate: key.Certificate,
		}); err != nil {
			return nil, translate(err)
		}
		row, err := q.EinvoiceSandboxKeyGet(ctx, orgID)
		if err != nil {
			return nil, translate(err)
		}
		sealed, certificate = row.PrivateKey, row.Certificate
	}
	key, err := s.keys.load(sealed, certificate, func() ([]byte, error) { return s.box.Open(sealed, orgID[:]) })
	if err != nil {
		return nil, fmt.Errorf("sandbox key of organization %s: %w", orgID, err)
	}
	return key, nil
}

// loadedKeys are the stamping keys this process has opened, by their sealed form and
// certificate as stored: a key is opened, and what its stamps write of it derived (the public
// key, the certificate's parts), once per process rather than once per document. A new
// certificate (a unit's production certificate) is another entry. At most maxLoadedKeys are
// kept; past that the cache starts again.
type loadedKeys struct {
	mu   sync.Mutex
	keys map[string]*einvoice.SandboxKey
}

const maxLoadedKeys = 4096

// load returns the key stored as sealed with certificate, opening it with open when it is not
// loaded yet.
func (c *loadedKeys) load(sealed, certificate []byte, open func() ([]byte, error)) (*einvoice.SandboxKey, error) {
	id := strconv.Itoa(len(sealed)) + ":" + string(sealed) + string(certificate)
	c.mu.Lock()
	key, ok := c.keys[id]
	c.mu.Unlock()
	if ok {
		return key, nil
	}
	private, err := open()
	if err != nil {
		return nil, err
	}
	if key, err = einvoice.LoadSandboxKey(private, certificate); err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.keys == nil || len(c.keys) >= maxLoadedKeys {
		c.keys = make(map[string]*einvoice.SandboxKey)
	}
	c.keys[id] = key
	c.mu.Unlock()
	return key, nil
}

// FindTaxInvoiceByID implements core.TaxInvoiceService.
func (s *TaxInvoiceService) FindTaxInvoiceByID(ctx context.Context, id uuid.UUID) (*core.TaxInvoice, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	var row dbq.TaxInvoice
	if p.IsOperator() {
		row, err = s.db.queries(ctx).TaxInvoiceGetByIDAnyOrganization(ctx, id)
	} else {
		// A connected business's credential sees only that business's invoices; another
		// business's is not found, exactly like an unknown id.
		row, err = s.db.queries(ctx).TaxInvoiceGetByID(ctx, dbq.TaxInvoiceGetByIDParams{
			OrganizationID: p.OrganizationID, ID: id, ConnectedBusinessID: p.ConnectedBusinessID,
		})
	}
	if err != nil {
		if core.ErrorCode(translate(err)) == core.ENotFound {
			return nil, core.Errorf(core.ENotFound, "Tax invoice %s does not exist.", id)
		}
		return nil, translate(err)
	}
	return taxInvoiceFromRow(row)
}

func taxInvoiceFromRow(r dbq.TaxInvoice) (*core.TaxInvoice, error) {
	t := &core.TaxInvoice{
		ID:                     r.ID,
		OrganizationID:         r.OrganizationID,
		ConnectedBusinessID:    r.ConnectedBusinessID,
		EGSUnitID:              r.EgsUnitID,
		Status:                 r.Status,
		RequestedType:          r.RequestedType,
		Number:                 r.Number,
		UUID:                   r.Uuid,
		ICV:                    r.Icv,
		PIH:                    r.Pih,
		IssuedAt:               r.IssuedAt,
		CreatedAt:              r.CreatedAt,
		Request:                r.Request,
		BillingReferenceNumber: r.BillingReferenceNumber,
	}
	if err := json.Unmarshal(r.Result, &t.Invoice); err != nil {
		return nil, fmt.Errorf("postgres: tax invoice %s result: %w", r.ID, err)
	}
	t.Invoice.XML = r.Xml
	return t, nil
}

// ListTaxInvoices implements core.TaxInvoiceService.
func (s *TaxInvoiceService) ListTaxInvoices(ctx context.Context, f core.TaxInvoiceFilter) ([]*core.TaxInvoice, *string, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, nil, err
	}
	if err := p.ActsFor(f.OrganizationID, "organization_id"); err != nil {
		return nil, nil, err
	}
	if f.IssuedFrom != nil && f.IssuedTo != nil && f.IssuedFrom.After(*f.IssuedTo) {
		return nil, nil, queryError("issued_from", "invalid", "issued_from is after issued_to.")
	}
	if f.ICVFrom != nil && f.ICVTo != nil && *f.ICVFrom > *f.ICVTo {
		return nil, nil, queryError("icv_from", "invalid", "icv_from is greater than icv_to.")
	}
	before, err := afterCursor(f.Cursor)
	if err != nil {
		return nil, nil, err
	}
	params := dbq.TaxInvoiceListParams{
		OrganizationID: f.OrganizationID, ConnectedBusinessID: p.ConnectedBusinessID, InvoiceType: f.Kind,
		IssuedFrom: f.IssuedFrom, IcvFrom: f.ICVFrom, IcvTo: f.ICVTo, SubmissionStatus: f.SubmissionStatus, Before: before, RowLimit: int32(f.Limit) + 1,
	}
	if f.IssuedTo != nil {
		// Inclusive of the whole last day.
		end := f.IssuedTo.AddDate(0, 0, 1)
		params.IssuedBefore = &end
	}
	rows, err := s.db.queries(ctx).TaxInvoiceList(ctx, params)
	if err != nil {
		return nil, nil, translate(err)
	}
	out := make([]*core.TaxInvoice, len(rows))
	for i, r := range rows {
		out[i] = &core.TaxInvoice{
			ID: r.ID, OrganizationID: r.OrganizationID, ConnectedBusinessID: r.ConnectedBusinessID, EGSUnitID: r.EgsUnitID,
			Status: r.Status, RequestedType: r.InvoiceType, Number: r.Number, UUID: r.Uuid, ICV: r.Icv,
			IssuedAt: r.IssuedAt, CreatedAt: r.CreatedAt, BillingReferenceNumber: r.BillingReferenceNumber,
			Invoice: einvoice.Invoice{Type: r.InvoiceType, Hash: r.InvoiceHash, Totals: einvoice.Totals{Payable: r.PayableAmount}},
		}
	}
	out, next := page(out, f.Limit, func(t *core.TaxInvoice) uuid.UUID { return t.ID })
	return out, next, nil
}
