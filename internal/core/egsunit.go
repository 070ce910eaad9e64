package core

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"
)

// EGS unit statuses: registered with a compliance certificate, holding its production
// certificate, or revoked (cannot stamp). Typed: untyped string constants named E… are the
// error codes (TestEveryErrorCodeHasAStatus).
const (
	EGSUnitCompliance string = "compliance"
	EGSUnitProduction string = "production"
	EGSUnitRevoked    string = "revoked"
)

// EGSUnit is an e-invoice generation solution unit registered from a CSR (sandbox
// onboarding): its onboarding fields, compliance progress and certificates.
type EGSUnit struct {
	ID, OrganizationID uuid.UUID
	Status             string
	CommonName, SerialNumber, VATNumber, OrganizationUnitName, OrganizationName,
	Country, InvoiceTypes, Location, Industry string
	// The document kinds the unit's invoice types declare, and those generated with it.
	RequiredKinds, PassedKinds []string
	ComplianceCertificate      EGSCertificate
	ProductionCertificate      *EGSCertificate
	CreatedAt, UpdatedAt       time.Time
	RevokedAt                  *time.Time
}

// MissingKinds are the required kinds not yet generated with the unit.
func (u *EGSUnit) MissingKinds() []string {
	missing := []string{}
	for _, k := range u.RequiredKinds {
		if !slices.Contains(u.PassedKinds, k) {
			missing = append(missing, k)
		}
	}
	return missing
}

// EGSCertificate is a certificate the sandbox CA issued to a unit.
type EGSCertificate struct {
	PEM, SerialNumber, Issuer string
	NotBefore, NotAfter       time.Time
}

// EGSUnitCreate registers a unit: the PEM CSR and its private key.
type EGSUnitCreate struct {
	OrganizationID  uuid.UUID
	CSR, PrivateKey string
}

// EGSUnitService registers, certifies and revokes EGS units. Every operation acts for the
// caller's own organization: the operator is refused.
type EGSUnitService interface {
	CreateEGSUnit(ctx context.Context, in EGSUnitCreate) (*EGSUnit, error)
	ListEGSUnits(ctx context.Context, orgID uuid.UUID) ([]*EGSUnit, error)
	FindEGSUnit(ctx context.Context, id uuid.UUID) (*EGSUnit, error)
	IssueEGSUnitProductionCertificate(ctx context.Context, id uuid.UUID) (*EGSUnit, error)
	RevokeEGSUnit(ctx context.Context, id uuid.UUID) (*EGSUnit, error)
}
