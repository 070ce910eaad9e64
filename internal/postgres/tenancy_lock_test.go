package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/httpapi"
	"github.com/provider/coreapi/internal/postgres"
	"github.com/provider/coreapi/internal/webhook"
)

// The seeded e-invoicing product and its sandbox plan (migration 00031).
var (
	seedProductEinvoice = uuid.MustParse("0193a000-0000-7000-8000-000000000001")
	seedPlanSandbox     = uuid.MustParse("0193a000-0000-7000-8000-000000000103")
)

// TestForeignRowIsNotFoundAndNotLocked holds, for each FOR UPDATE lookup of a tenant-owned
// row, a transaction in which organization A looks up organization B's row: the lookup
// finds nothing, and B's row can still be updated at once (under a short lock_timeout, so a
// lock would fail the update rather than slow the test). As a control, the same lookup as B
// does lock the row and the update fails with lock_not_available. Through the services,
// B's resources are ENotFound for A with the message of an unknown id.
func TestForeignRowIsNotFoundAndNotLocked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t)
	db.Jobs = noJobs{}
	db.Events = httpapi.EventEncoder{}
	services := postgres.NewServices(db, devBox(t), webhook.DefaultPolicy(true))
	operator := core.WithPrincipal(ctx, &core.Principal{Kind: core.PrincipalOperator, Subject: "dev:operator"})
	newOrg := func() uuid.UUID {
		org, err := services.Organizations.CreateOrganization(operator, core.OrganizationCreate{
			LegalNameAr: "شركة", LegalNameEn: "Company", DisplayName: "Co", OrganizationType: "reseller", Country: "SA"})
		if err != nil {
			t.Fatal(err)
		}
		return org.ID
	}
	orgA, orgB := newOrg(), newOrg()
	sub, err := services.Subscriptions.CreateSubscription(operator, core.SubscriptionCreate{
		OrganizationID: orgB, ProductID: seedProductEinvoice, PlanID: seedPlanSandbox})
	if err != nil {
		t.Fatal(err)
	}
	key, err := services.APIKeys.CreateAPIKey(operator, core.APIKeyCreate{
		OrganizationID: orgB, Name: "b", Environment: "sandbox", Scopes: []string{"subscriptions:read"}})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := services.SupportCases.CreateSupportCase(operator, core.SupportCaseCreate{
		OrganizationID: orgB, Subject: "s", Description: "d", Severity: "low", Category: "technical"})
	if err != nil {
		t.Fatal(err)
	}
	asB := core.WithPrincipal(ctx, &core.Principal{Kind: core.PrincipalOrganization, OrganizationID: orgB, Subject: "test:b"})
	cb, err := services.Businesses.CreateConnectedBusiness(asB, core.ConnectedBusinessCreate{
		ExternalReference: "b-1", DisplayName: "B1", LegalNameEn: "B One"})
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name   string
		table  string
		id     uuid.UUID
		lookup func(q *dbq.Queries, org uuid.UUID) error
	}{
		{"Subscription", "subscriptions", sub.ID, func(q *dbq.Queries, org uuid.UUID) error {
			_, err := q.SubscriptionGetByIDForUpdate(ctx, dbq.SubscriptionGetByIDForUpdateParams{OrganizationID: org, ID: sub.ID})
			return err
		}},
		{"APIKey", "api_keys", key.ID, func(q *dbq.Queries, org uuid.UUID) error {
			_, err := q.APIKeyGetByIDForUpdate(ctx, dbq.APIKeyGetByIDForUpdateParams{OrganizationID: org, ID: key.ID})
			return err
		}},
		{"SupportCase", "support_cases", sc.ID, func(q *dbq.Queries, org uuid.UUID) error {
			_, err := q.SupportCaseGetByIDForUpdate(ctx, dbq.SupportCaseGetByIDForUpdateParams{OrganizationID: org, ID: sc.ID})
			return err
		}},
		{"ConnectedBusiness", "connected_businesses", cb.ID, func(q *dbq.Queries, org uuid.UUID) error {
			_, err := q.ConnectedBusinessGetByIDForUpdate(ctx, dbq.ConnectedBusinessGetByIDForUpdateParams{OrganizationID: org, ID: cb.ID})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// touch updates B's row in a transaction of its own that waits at most 300 ms for a lock.
			touch := func() error {
				return pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
					if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '300ms'"); err != nil {
						return err
					}
					_, err := tx.Exec(ctx, "UPDATE "+tc.table+" SET updated_at = now() WHERE id = $1", tc.id)
					return err
				})
			}
			hold := func(org uuid.UUID) (lookupErr error, touchErr error) {
				tx, err := db.Pool.Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = tx.Rollback(ctx) }()
				lookupErr = tc.lookup(dbq.New(tx), org)
				return lookupErr, touch()
			}

			lookupErr, touchErr := hold(orgA)
			if !errors.Is(lookupErr, pgx.ErrNoRows) {
				t.Errorf("as organization A, lookup of B's row: err = %v, want no rows", lookupErr)
			}
			if touchErr != nil {
				t.Errorf("B's row could not be updated while A's lookup was held: %v (A's lookup locked it)", touchErr)
			}

			lookupErr, touchErr = hold(orgB)
			if lookupErr != nil {
				t.Fatalf("as organization B, lookup of its own row: %v", lookupErr)
			}
			var pgErr *pgconn.PgError
			if !errors.As(touchErr, &pgErr) || pgErr.Code != "55P03" {
				t.Errorf("control: update while B's own lookup was held: err = %v, want lock_not_available (55P03)", touchErr)
			}
		})
	}

	t.Run("ServicesAnswerNotFoundAsForAnUnknownID", func(t *testing.T) {
		asA := core.WithPrincipal(ctx, &core.Principal{Kind: core.PrincipalOrganization, OrganizationID: orgA, Subject: "test:a"})
		unknown := uuid.Must(uuid.NewV7())
		for _, c := range []struct {
			name string
			call func(id uuid.UUID) error
		}{
			{"FindSubscriptionByID", func(id uuid.UUID) error { _, err := services.Subscriptions.FindSubscriptionByID(asA, id); return err }},
			{"CancelSubscription", func(id uuid.UUID) error {
				_, err := services.Subscriptions.Cancel(asA, id)
				return err
			}},
			{"RevokeAPIKey", func(id uuid.UUID) error { _, err := services.APIKeys.RevokeAPIKey(asA, id); return err }},
			{"CloseSupportCase", func(id uuid.UUID) error { _, err := services.SupportCases.CloseSupportCase(asA, id); return err }},
			{"CreateSupportCaseMessage", func(id uuid.UUID) error {
				_, err := services.SupportCases.CreateSupportCaseMessage(asA, id, "hello")
				return err
			}},
			{"ListSupportCaseMessages", func(id uuid.UUID) error {
				_, _, err := services.SupportCases.ListSupportCaseMessages(asA, core.SupportCaseMessageFilter{SupportCaseID: id, Limit: 10})
				return err
			}},
			{"FindConnectedBusinessByID", func(id uuid.UUID) error {
				_, err := services.Businesses.FindConnectedBusinessByID(asA, id)
				return err
			}},
			{"UpdateOrganization", func(id uuid.UUID) error {
				name := "Taken over"
				_, err := services.Organizations.UpdateOrganization(asA, id, core.OrganizationUpdate{DisplayName: core.Field[string]{Set: true, Value: &name}})
				return err
			}},
		} {
			var foreign uuid.UUID
			switch c.name {
			case "FindSubscriptionByID", "CancelSubscription":
				foreign = sub.ID
			case "RevokeAPIKey":
				foreign = key.ID
			case "CloseSupportCase", "CreateSupportCaseMessage", "ListSupportCaseMessages":
				foreign = sc.ID
			case "UpdateOrganization":
				foreign = orgB
			default:
				foreign = cb.ID
			}
			errForeign, errUnknown := c.call(foreign), c.call(unknown)
			if core.ErrorCode(errForeign) != core.ENotFound || core.ErrorCode(errUnknown) != core.ENotFound {
				t.Errorf("%s: foreign err = %v, unknown err = %v; want both ENotFound", c.name, errForeign, errUnknown)
				continue
			}
			if want := strings.ReplaceAll(errUnknown.Error(), unknown.String(), foreign.String()); errForeign.Error() != want {
				t.Errorf("%s: foreign says %q, unknown says %q: they differ beyond the id", c.name, errForeign, errUnknown)
			}
		}
	})
}
