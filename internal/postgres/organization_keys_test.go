package postgres_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/postgres"
)

// TestOrganizationKeysMigration migrates a database holding rows from before the organization
// keys (00469) to now: the rows stay, every foreign key is valid, a reference to another
// organization's row is refused, and growth_events' partitions keep the indexes an operator built
// beforehand (docs/operations.md) as their keys instead of building them again under the lock.
func TestOrganizationKeysMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn, d := openUpgradable(t)
	operator := core.WithPrincipal(ctx, &core.Principal{Kind: core.PrincipalOperator, Subject: "dev:operator"})
	var orgs [2]uuid.UUID
	for i := range orgs {
		org, err := postgres.NewOrganizationService(d).CreateOrganization(operator, core.OrganizationCreate{
			LegalNameAr: "شركة", LegalNameEn: "Company", DisplayName: "Co", OrganizationType: "standard_customer", Country: "SA",
		})
		if err != nil {
			t.Fatal(err)
		}
		orgs[i] = org.ID
	}
	if err := postgres.MigrateDownTo(ctx, dsn, 469); err != nil {
		t.Fatal(err)
	}
	exec := func(sql string, args ...any) error {
		_, err := d.Pool.Exec(ctx, sql, args...)
		return err
	}
	business, resource, growth := uuid.New(), uuid.New(), idAt(time.Now())
	for _, err := range []error{
		exec(`INSERT INTO connected_businesses (id, organization_id, external_reference, display_name, legal_name_en, lifecycle_status)
		      VALUES ($1, $2, 'ref', 'Business', 'Business', 'active')`, business, orgs[0]),
		exec(`INSERT INTO service_resources (id, organization_id, connected_business_id, product, capability_id, lifecycle_status)
		      VALUES ($1, $2, $3, 'einvoice', 'cap', 'active')`, resource, orgs[0], business),
		exec(`INSERT INTO growth_events (id, organization_id, occurred_at, event_name, traffic_type)
		      VALUES ($1, 'org-1', now(), 'page_view', 'public')`, growth),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	prebuilt := prebuildGrowthKeys(t, d)

	if err := postgres.Migrate(ctx, dsn, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	for partition, index := range prebuilt {
		var key uint32
		if err := d.Pool.QueryRow(ctx, `SELECT indexrelid FROM pg_index WHERE indrelid = $1::regclass AND indisprimary`, partition).Scan(&key); err != nil {
			t.Fatalf("%s's primary key: %v", partition, err)
		}
		if key != index {
			t.Errorf("%s's primary key is index %d, not the one built beforehand (%d)", partition, key, index)
		}
	}
	var kept int
	if err := d.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM service_resources WHERE id = $1 AND connected_business_id = $2)
	        + (SELECT count(*) FROM growth_events WHERE organization_id = 'org-1' AND id = $3)`, resource, business, growth).Scan(&kept); err != nil || kept != 2 {
		t.Errorf("rows kept = %d (%v), want the service resource and the growth event", kept, err)
	}
	var unvalidated int
	if err := d.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND NOT convalidated`).Scan(&unvalidated); err != nil || unvalidated != 0 {
		t.Errorf("foreign keys not validated = %d (%v), want 0", unvalidated, err)
	}
	err := exec(`INSERT INTO service_resources (id, organization_id, connected_business_id, product, capability_id, lifecycle_status)
	             VALUES ($1, $2, $3, 'address', 'cap', 'active')`, uuid.New(), orgs[1], business)
	if pgErr := (*pgconn.PgError)(nil); !errors.As(err, &pgErr) || pgErr.Code != "23503" {
		t.Errorf("another organization's business referred to: %v, want a foreign key violation (23503)", err)
	}
}

// prebuildGrowthKeys runs the statements docs/operations.md gives an operator to build
// growth_events' partition keys beforehand, and returns each partition's index.
func prebuildGrowthKeys(t *testing.T, d *postgres.DB) map[string]uint32 {
	t.Helper()
	ctx := context.Background()
	rows, err := d.Pool.Query(ctx, `SELECT c.relname::text,
	        format('CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS %I ON %I (organization_id, id)', c.relname || '_organization_key', c.relname)
	    FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
	    WHERE i.inhparent = 'growth_events'::regclass`)
	if err != nil {
		t.Fatal(err)
	}
	statements := map[string]string{}
	for rows.Next() {
		var partition, statement string
		if err := rows.Scan(&partition, &statement); err != nil {
			t.Fatal(err)
		}
		statements[partition] = statement
	}
	if rows.Err() != nil || len(statements) == 0 {
		t.Fatalf("growth_events' partitions: %d (%v)", len(statements), rows.Err())
	}
	out := map[string]uint32{}
	for partition, statement := range statements {
		var index uint32
		if _, err := d.Pool.Exec(ctx, statement); err != nil {
			t.Fatal(err)
		}
		if err := d.Pool.QueryRow(ctx, `SELECT $1::regclass::oid`, partition+"_organization_key").Scan(&index); err != nil {
			t.Fatal(err)
		}
		out[partition] = index
	}
	return out
}
