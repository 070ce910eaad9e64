package postgres_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/pgtest"
	"github.com/provider/coreapi/internal/postgres"
	"github.com/provider/coreapi/internal/secretbox"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// devBox is the encryption box of development mode, for services that seal data.
func devBox(t testing.TB) *secretbox.Box {
	t.Helper()
	box, err := secretbox.New(secretbox.DevelopmentKey())
	if err != nil {
		t.Fatal(err)
	}
	return box
}

// openDB opens a fresh, migrated database of its own for t, closed when t ends.
func openDB(t testing.TB) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

func TestOrganizationService(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T) (*postgres.OrganizationService, context.Context) {
		t.Helper()
		ctx := context.Background()
		db := openDB(t)
		operator := core.WithPrincipal(ctx, &core.Principal{Kind: core.PrincipalOperator, Subject: "dev:operator"})
		return postgres.NewOrganizationService(db), operator
	}
	create := core.OrganizationCreate{
		LegalNameAr: "شركة", LegalNameEn: "Company", DisplayName: "Co",
		OrganizationType: "standard_customer", Country: "SA",
	}

	t.Run("CreateAppliesDefaults", func(t *testing.T) {
		t.Parallel()
		svc, ctx := setup(t)
		org, err := svc.CreateOrganization(ctx, create)
		if err != nil {
			t.Fatal(err)
		}
		if org.ID.Version() != 7 {
			t.Errorf("id version = %d, want 7", org.ID.Version())
		}
		if org.VerificationStatus != "unverified" || org.RiskStatus != "normal" ||
			org.DataResidencyPolicy != "sa_only" || org.LifecycleStatus != "pending" {
			t.Errorf("defaults not applied: %+v", org)
		}
		got, err := svc.FindOrganizationByID(ctx, org.ID)
		if err != nil || got.DisplayName != "Co" || !got.CreatedAt.Equal(org.CreatedAt) {
			t.Fatalf("find = %+v, %v", got, err)
		}
	})

	t.Run("ErrOrganizationPrincipalCannotCreate", func(t *testing.T) {
		t.Parallel()
		svc, _ := setup(t)
		ctx := core.WithPrincipal(context.Background(), &core.Principal{Kind: core.PrincipalOrganization, OrganizationID: uuid.New()})
		_, err := svc.CreateOrganization(ctx, create)
		if core.ErrorCode(err) != core.EForbidden {
			t.Fatalf("err = %v, want forbidden", err)
		}
	})

	t.Run("ErrOtherTenantIsNotFound", func(t *testing.T) {
		t.Parallel()
		svc, ctx := setup(t)
		org, err := svc.CreateOrganization(ctx, create)
		if err != nil {
			t.Fatal(err)
		}
		other := core.WithPrincipal(context.Background(), &core.Principal{Kind: core.PrincipalOrganization, OrganizationID: uuid.New()})
		if _, err := svc.FindOrganizationByID(other, org.ID); core.ErrorCode(err) != core.ENotFound {
			t.Fatalf("err = %v, want not_found", err)
		}
		own := core.WithPrincipal(context.Background(), &core.Principal{Kind: core.PrincipalOrganization, OrganizationID: org.ID})
		if _, err := svc.FindOrganizationByID(own, org.ID); err != nil {
			t.Fatalf("own organization: %v", err)
		}
	})
}
