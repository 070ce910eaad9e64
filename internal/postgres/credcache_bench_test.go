package postgres_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/postgres"
)

// BenchmarkCredentialLookup times the authentication of an API key: looked up in the
// database (one round trip, the constant-time secret check) and found in the cache.
func BenchmarkCredentialLookup(b *testing.B) {
	ctx := context.Background()
	db := openDB(b)
	operator := core.WithPrincipal(ctx, &core.Principal{Kind: core.PrincipalOperator, Subject: "dev:operator"})
	org, err := postgres.NewOrganizationService(db).CreateOrganization(operator, core.OrganizationCreate{
		LegalNameAr: "شركة", LegalNameEn: "Company", DisplayName: "Co", OrganizationType: "standard_customer", Country: "SA",
	})
	if err != nil {
		b.Fatal(err)
	}
	keys := postgres.NewAPIKeyService(db)
	key, err := keys.CreateAPIKey(operator, core.APIKeyCreate{
		OrganizationID: org.ID, Name: "bench", Environment: "sandbox", Scopes: []string{"organizations:read"},
	})
	if err != nil {
		b.Fatal(err)
	}
	cache := postgres.NewCredentialCache(db, postgres.DefaultCredentialCacheTTL, slog.New(slog.NewTextHandler(io.Discard, nil)))
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	go cache.Run(runCtx)
	for !cache.Listening() {
		time.Sleep(time.Millisecond)
	}
	for _, bc := range []struct {
		name string
		svc  core.CredentialService
	}{{"Database", keys}, {"Cached", cache}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.svc.Authenticate(ctx, key.FullKey); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
