package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/einvoice/egstest"
	"github.com/provider/coreapi/internal/httpapi"
	"github.com/provider/coreapi/internal/pgtest"
	"github.com/provider/coreapi/internal/postgres"
	"github.com/provider/coreapi/internal/webhook"
)

// TestGenerate_RefusesACertificateOutsideItsValidity registers EGS units whose compliance
// certificates are not yet valid and no longer valid at the moment of generation (the unit
// service's clock moved), and checks that generation refuses each with 409 and the documented
// code, using no counter value and storing nothing; a unit valid now stamps.
func TestGenerate_RefusesACertificateOutsideItsValidity(t *testing.T) {
	ctx := context.Background()
	d, services, org, tenant := servicesOfNewOrganization(t, pgtest.NewDatabase(t))
	units := services.EGSUnits.(*postgres.EGSUnitService)
	now := time.Now()
	register := func(issuedAt time.Time) string {
		t.Helper()
		units.SetClock(func() time.Time { return issuedAt })
		key, keyPEM := egstest.NewKey()
		fields := egstest.Example
		fields.VATNumber = "310123456700003"
		unit, err := services.EGSUnits.CreateEGSUnit(tenant, core.EGSUnitCreate{OrganizationID: org.ID, CSR: egstest.CSR(key, fields), PrivateKey: keyPEM})
		if err != nil {
			t.Fatal(err)
		}
		return unit.ID.String()
	}
	generate := func(unit string) (*core.TaxInvoice, error) {
		req := benchInvoiceRequest()
		req.EGSUnitID = &unit
		return services.TaxInvoices.GenerateTaxInvoice(tenant, core.TaxInvoiceGenerate{OrganizationID: org.ID, Request: req, RequestJSON: []byte(benchInvoiceJSON)})
	}
	for _, c := range []struct {
		name     string
		issuedAt time.Time
		code     string
	}{
		{"NotYetValid", now.Add(time.Hour), "certificate_not_yet_valid"},
		{"Expired", now.AddDate(-2, 0, 0), "certificate_expired"}, // compliance certificates last a year
	} {
		t.Run(c.name, func(t *testing.T) {
			unit := register(c.issuedAt)
			_, err := generate(unit)
			var ce *core.Error
			if !errors.As(err, &ce) || ce.Code != core.EInvalidTransition || len(ce.Fields) != 1 ||
				ce.Fields[0].Pointer != "/egs_unit_id" || ce.Fields[0].Code != c.code {
				t.Fatalf("generation with a certificate issued at %s: %#v, want 409 %s at /egs_unit_id", c.issuedAt, err, c.code)
			}
			var documents, counters int
			if err := d.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM tax_invoices WHERE egs_unit_id = $1),
				(SELECT count(*) FROM einvoice_counters WHERE egs_unit_id = $1)`, unit).Scan(&documents, &counters); err != nil {
				t.Fatal(err)
			}
			if documents != 0 || counters != 0 {
				t.Errorf("the refusal stored %d documents and %d counters of the unit", documents, counters)
			}
		})
	}
	t.Run("ValidNow", func(t *testing.T) {
		inv, err := generate(register(now.Add(-time.Hour)))
		if err != nil || inv.ICV != 1 {
			t.Fatalf("generation with a valid certificate: %v (ICV %v)", err, inv)
		}
	})
}

// servicesOfNewOrganization opens the database at dsn (its pool configured by options) with the
// services over it, creates an organization as the operator, and returns a context acting as
// that organization.
func servicesOfNewOrganization(tb testing.TB, dsn string, options ...func(*pgxpool.Config)) (*postgres.DB, core.Services, *core.Organization, context.Context) {
	tb.Helper()
	ctx := context.Background()
	d, err := postgres.Open(ctx, dsn, options...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(d.Close)
	d.Events = httpapi.EventEncoder{}
	services := postgres.NewServices(d, devBox(tb), webhook.DefaultPolicy(true))
	operator := core.WithPrincipal(ctx, &core.Principal{Kind: core.PrincipalOperator, Subject: "dev:operator"})
	org, err := services.Organizations.CreateOrganization(operator, core.OrganizationCreate{
		LegalNameAr: "شركة", LegalNameEn: "Company", DisplayName: "Co", OrganizationType: "standard_customer", Country: "SA"})
	if err != nil {
		tb.Fatal(err)
	}
	return d, services, org, core.WithPrincipal(ctx, &core.Principal{Kind: core.PrincipalOrganization, OrganizationID: org.ID, Subject: "test"})
}
