package postgres

import (
	"context"
	"encoding/pem"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/einvoice"
	"github.com/provider/coreapi/internal/secretbox"
)

// EGSUnitService implements core.EGSUnitService: units registered from a CSR, certified by
// the sandbox CA.
type EGSUnitService struct {
	db  *DB
	box *secretbox.Box // seals the units' keys and the CA's key
	now func() time.Time
}

var _ core.EGSUnitService = (*EGSUnitService)(nil)

// NewEGSUnitService returns the EGS unit service over d; box seals private keys.
func NewEGSUnitService(d *DB, box *secretbox.Box) *EGSUnitService {
	return &EGSUnitService{db: d, box: box, now: time.Now}
}

// maxActiveEGSUnits bounds the units an organization holds that are not revoked.
const maxActiveEGSUnits = 100

// Validity of the certificates the sandbox CA issues, in years.
const (
	complianceCertificateYears = 1
	productionCertificateYears = 5
)

// caSealContext binds the sealed CA key to its row.
var caSealContext = []byte("einvoice-sandbox-ca")

// tenantOnly is the caller's organization; the operator does not manage EGS units.
func tenantOnly(ctx context.Context) (*core.Principal, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if p.IsOperator() || p.ConnectedBusinessID != nil {
		return nil, core.Errorf(core.EForbidden, "EGS units are managed by the organization's own credentials.")
	}
	return p, nil
}

// CreateEGSUnit implements core.EGSUnitService.
func (s *EGSUnitService) CreateEGSUnit(ctx context.Context, in core.EGSUnitCreate) (*core.EGSUnit, error) {
	p, err := tenantOnly(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.ActsFor(in.OrganizationID, "/organization_id"); err != nil {
		return nil, err
	}
	csr, problems := einvoice.ParseCSR(in.CSR)
	if problems != nil {
		fields := make([]core.FieldError, len(problems))
		for i, pr := range problems {
			fields[i] = core.FieldError{Location: "body", Pointer: "/csr", Code: pr.Field, Message: pr.Message}
		}
		return nil, &core.Error{Code: core.EUnprocessable, Message: fmt.Sprintf("The CSR was refused: %d problem(s), listed in errors.", len(problems)), Fields: fields}
	}
	key, err := einvoice.ParsePrivateKey(in.PrivateKey)
	if err != nil {
		return nil, unprocessablef("/private_key", "%s.", upperFirst(err.Error()))
	}
	if !key.PubKey().IsEqual(csr.PublicKey) {
		return nil, unprocessablef("/private_key", "The private key is not the CSR's: its public key differs.")
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	var out *core.EGSUnit
	err = s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		active, err := q.EgsUnitCountActive(ctx, in.OrganizationID)
		if err != nil {
			return err
		}
		if active >= maxActiveEGSUnits {
			return unprocessablef("/csr", "The organization already holds %d EGS units that are not revoked; revoke one first.", maxActiveEGSUnits)
		}
		ca, err := sandboxCA(ctx, q, s.box, s.now())
		if err != nil {
			return err
		}
		cert, err := ca.Issue(csr, s.now(), complianceCertificateYears)
		if err != nil {
			return err
		}
		f := csr.Fields
		row, err := q.EgsUnitInsert(ctx, dbq.EgsUnitInsertParams{
			OrganizationID: in.OrganizationID, ID: id, CommonName: f.CommonName, SerialNumber: f.SerialNumber,
			VatNumber: f.VATNumber, OrganizationUnitName: f.OrganizationUnit, OrganizationName: f.OrganizationName,
			Country: f.Country, InvoiceTypes: f.InvoiceTypes, Location: f.Location, Industry: f.Industry,
			Csr: csr.DER, PrivateKey: s.box.Seal(key.Serialize(), id[:]), ComplianceCertificate: cert,
		})
		if err != nil {
			return err
		}
		out, err = s.changed(ctx, q, row, "egs_unit.registered", core.EventEGSUnitRegistered)
		return err
	})
	return out, err
}

// ListEGSUnits implements core.EGSUnitService.
func (s *EGSUnitService) ListEGSUnits(ctx context.Context, orgID uuid.UUID) ([]*core.EGSUnit, error) {
	p, err := tenantOnly(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.ActsFor(orgID, "organization_id"); err != nil {
		return nil, err
	}
	q := s.db.queries(ctx)
	rows, err := q.EgsUnitList(ctx, orgID)
	if err != nil {
		return nil, translate(err)
	}
	out := make([]*core.EGSUnit, len(rows))
	for i, row := range rows {
		if out[i], err = egsUnitFromRow(ctx, q, row); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// FindEGSUnit implements core.EGSUnitService.
func (s *EGSUnitService) FindEGSUnit(ctx context.Context, id uuid.UUID) (*core.EGSUnit, error) {
	p, err := tenantOnly(ctx)
	if err != nil {
		return nil, err
	}
	q := s.db.queries(ctx)
	row, err := q.EgsUnitGet(ctx, dbq.EgsUnitGetParams{OrganizationID: p.OrganizationID, ID: id})
	if err != nil {
		return nil, notFoundEGSUnit(err, id)
	}
	return egsUnitFromRow(ctx, q, row)
}

// IssueEGSUnitProductionCertificate implements core.EGSUnitService: only a unit in
// compliance that has generated every kind its flags declare.
func (s *EGSUnitService) IssueEGSUnitProductionCertificate(ctx context.Context, id uuid.UUID) (*core.EGSUnit, error) {
	return s.transition(ctx, id, func(ctx context.Context, q *dbq.Queries, unit *core.EGSUnit, row dbq.EgsUnit) (*core.EGSUnit, error) {
		if unit.Status != core.EGSUnitCompliance {
			return nil, core.Errorf(core.EInvalidTransition, "EGS unit %s is %s: a production certificate is issued once, to a unit in compliance.", id, unit.Status)
		}
		if missing := unit.MissingKinds(); len(missing) > 0 {
			fields := make([]core.FieldError, len(missing))
			for i, k := range missing {
				fields[i] = core.FieldError{Location: "body", Pointer: "/compliance/missing_kinds", Code: k,
					Message: fmt.Sprintf("No %s has been generated with the unit yet.", k)}
			}
			return nil, &core.Error{Code: core.EInvalidTransition, Fields: fields, Message: fmt.Sprintf(
				"EGS unit %s has not passed its compliance checks: generate one valid document of each missing kind with it (%s).", id, strings.Join(missing, ", "))}
		}
		csr, problems := einvoice.ParseCSR(string(pemCSR(row.Csr)))
		if problems != nil {
			return nil, fmt.Errorf("stored CSR of EGS unit %s: %v", id, problems)
		}
		ca, err := sandboxCA(ctx, q, s.box, s.now())
		if err != nil {
			return nil, err
		}
		cert, err := ca.Issue(csr, s.now(), productionCertificateYears)
		if err != nil {
			return nil, err
		}
		updated, err := q.EgsUnitSetProduction(ctx, dbq.EgsUnitSetProductionParams{OrganizationID: row.OrganizationID, ID: id, ProductionCertificate: cert})
		if err != nil {
			return nil, err
		}
		return s.changed(ctx, q, updated, "egs_unit.production_certificate_issued", core.EventEGSUnitProductionIssued)
	})
}

// RevokeEGSUnit implements core.EGSUnitService.
func (s *EGSUnitService) RevokeEGSUnit(ctx context.Context, id uuid.UUID) (*core.EGSUnit, error) {
	return s.transition(ctx, id, func(ctx context.Context, q *dbq.Queries, unit *core.EGSUnit, row dbq.EgsUnit) (*core.EGSUnit, error) {
		if unit.Status == core.EGSUnitRevoked {
			return nil, core.Errorf(core.EInvalidTransition, "EGS unit %s is already revoked.", id)
		}
		updated, err := q.EgsUnitRevoke(ctx, dbq.EgsUnitRevokeParams{OrganizationID: row.OrganizationID, ID: id})
		if err != nil {
			return nil, err
		}
		return s.changed(ctx, q, updated, "egs_unit.revoked", core.EventEGSUnitRevoked)
	})
}

// transition locks the caller's unit and applies change in one transaction; another
// organization's unit is 404 and takes no lock.
func (s *EGSUnitService) transition(ctx context.Context, id uuid.UUID,
	change func(context.Context, *dbq.Queries, *core.EGSUnit, dbq.EgsUnit) (*core.EGSUnit, error)) (*core.EGSUnit, error) {
	p, err := tenantOnly(ctx)
	if err != nil {
		return nil, err
	}
	var out *core.EGSUnit
	err = s.db.WithTx(ctx, func(ctx context.Context, q *dbq.Queries) error {
		row, err := q.EgsUnitGetForUpdate(ctx, dbq.EgsUnitGetForUpdateParams{OrganizationID: p.OrganizationID, ID: id})
		if err != nil {
			return notFoundEGSUnit(err, id)
		}
		unit, err := egsUnitFromRow(ctx, q, row)
		if err != nil {
			return err
		}
		out, err = change(ctx, q, unit, row)
		return err
	})
	return out, err
}

// changed renders a unit after a change, audits it and publishes its event.
func (s *EGSUnitService) changed(ctx context.Context, q *dbq.Queries, row dbq.EgsUnit, action string, event core.EventType) (*core.EGSUnit, error) {
	unit, err := egsUnitFromRow(ctx, q, row)
	if err != nil {
		return nil, err
	}
	if err := audit(ctx, q, core.AuditEntry{
		OrganizationID: &row.OrganizationID, Action: action, ResourceType: "egs_unit", ResourceID: row.ID.String(),
		After: egsUnitAudit{ID: row.ID, Status: row.Status, CommonName: row.CommonName, SerialNumber: row.SerialNumber,
			VATNumber: row.VatNumber, InvoiceTypes: row.InvoiceTypes},
	}); err != nil {
		return nil, err
	}
	if err := s.db.publish(ctx, q, row.OrganizationID, event, unit); err != nil {
		return nil, err
	}
	return unit, nil
}

// egsUnitAudit is the audit summary of a unit (never its key or certificates).
type egsUnitAudit struct {
	ID           uuid.UUID `json:"id"`
	Status       string    `json:"status"`
	CommonName   string    `json:"common_name"`
	SerialNumber string    `json:"serial_number"`
	VATNumber    string    `json:"vat_number"`
	InvoiceTypes string    `json:"invoice_types"`
}

func notFoundEGSUnit(err error, id uuid.UUID) error {
	if core.ErrorCode(translate(err)) == core.ENotFound {
		return core.Errorf(core.ENotFound, "EGS unit %s does not exist.", id)
	}
	return translate(err)
}

func egsUnitFromRow(ctx context.Context, q *dbq.Queries, row dbq.EgsUnit) (*core.EGSUnit, error) {
	fields := einvoice.EGSFields{InvoiceTypes: row.InvoiceTypes}
	passed, err := q.EgsUnitGeneratedKinds(ctx, dbq.EgsUnitGeneratedKindsParams{OrganizationID: row.OrganizationID, EgsUnitID: row.ID.String()})
	if err != nil {
		return nil, err
	}
	unit := &core.EGSUnit{
		ID: row.ID, OrganizationID: row.OrganizationID, Status: row.Status,
		CommonName: row.CommonName, SerialNumber: row.SerialNumber, VATNumber: row.VatNumber,
		OrganizationUnitName: row.OrganizationUnitName, OrganizationName: row.OrganizationName, Country: row.Country,
		InvoiceTypes: row.InvoiceTypes, Location: row.Location, Industry: row.Industry,
		RequiredKinds: fields.RequiredKinds(), PassedKinds: append([]string{}, passed...),
		CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt, RevokedAt: row.RevokedAt,
	}
	if unit.ComplianceCertificate, err = egsCertificate(row.ComplianceCertificate); err != nil {
		return nil, err
	}
	if row.ProductionCertificate != nil {
		cert, err := egsCertificate(row.ProductionCertificate)
		if err != nil {
			return nil, err
		}
		unit.ProductionCertificate = &cert
	}
	return unit, nil
}

func egsCertificate(der []byte) (core.EGSCertificate, error) {
	info, err := einvoice.DescribeCertificate(der)
	if err != nil {
		return core.EGSCertificate{}, fmt.Errorf("stored EGS certificate: %w", err)
	}
	return core.EGSCertificate(info), nil
}

func pemCSR(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
