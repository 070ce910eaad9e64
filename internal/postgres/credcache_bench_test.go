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
	cache := listeningCredentialCache(b, db)
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

// listeningCredentialCache is the credential cache cmd/coreapi sets up over db: the default
// TTL, its listener running (until the test ends) and heard. The standings entitlement
// decisions read are cached in it too, as in the API.
func listeningCredentialCache(tb testing.TB, db *postgres.DB) *postgres.CredentialCache {
	tb.Helper()
	cache := postgres.NewCredentialCache(db, postgres.DefaultCredentialCacheTTL, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		cache.Run(ctx)
	}()
	tb.Cleanup(func() {
		stop()
		<-done
	})
	for deadline := time.Now().Add(10 * time.Second); !cache.Listening(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatal("the credential cache's listener was not heard within 10 s")
		}
	}
	return cache
}
