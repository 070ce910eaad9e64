package postgres_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/einvoice"
	"github.com/provider/coreapi/internal/pgtest"
	"github.com/provider/coreapi/internal/postgres"
)

// TestNextInChain_FirstDocumentsAtOnce takes the path concurrent generations only sometimes
// take: two transactions start the same chain at once. The second waits on the first's
// counter row; when the first commits, the second locks that row and continues its chain (the
// first's ICV and hash); when the first rolls back, the second starts the chain itself.
func TestNextInChain_FirstDocumentsAtOnce(t *testing.T) {
	t.Parallel()
	d, _, org, _ := servicesOfNewOrganization(t, pgtest.NewDatabase(t))
	ctx := context.Background()

	// begin starts a transaction and returns it with its backend's pid.
	begin := func(t *testing.T) (pgx.Tx, int) {
		tx, err := d.Pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
		var pid int
		if err := tx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			t.Fatal(err)
		}
		return tx, pid
	}
	type position struct {
		icv int64
		pih string
	}
	for _, c := range []struct {
		name, egs string
		commit    bool
		want      position
	}{
		{"FirstCommits", "till-commit", true, position{2, "hash-of-1"}},
		{"FirstRollsBack", "till-rollback", false, position{1, einvoice.FirstPIH}},
	} {
		t.Run(c.name, func(t *testing.T) {
			first, _ := begin(t)
			icv, pih, err := nextInChain(ctx, first, org.ID, c.egs)
			if err != nil || icv != 1 || pih != einvoice.FirstPIH {
				t.Fatalf("the first document: ICV %d, PIH %q, %v; want 1, the first PIH", icv, pih, err)
			}
			// What TaxInvoiceInsert does to the counter with the first document.
			if _, err := first.Exec(ctx, "UPDATE einvoice_counters SET last_invoice_hash = 'hash-of-1' WHERE organization_id = $1 AND egs_unit_id = $2",
				org.ID, c.egs); err != nil {
				t.Fatal(err)
			}
			second, secondPID := begin(t)
			got := make(chan position, 1)
			failed := make(chan error, 1)
			go func() {
				icv, pih, err := nextInChain(ctx, second, org.ID, c.egs)
				if err != nil {
					failed <- err
					return
				}
				got <- position{icv, pih}
			}()
			waitFor(t, "the second transaction to wait for the first's counter row", func() bool {
				var waiting bool
				err := d.Pool.QueryRow(ctx, "SELECT coalesce(wait_event_type = 'Lock', false) FROM pg_stat_activity WHERE pid = $1", secondPID).Scan(&waiting)
				return err == nil && waiting
			})
			end := first.Rollback
			if c.commit {
				end = first.Commit
			}
			if err := end(ctx); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-failed:
				t.Fatalf("the second document: %v", err)
			case p := <-got:
				if p != c.want {
					t.Errorf("the second document: ICV %d, PIH %q; want %d, %q", p.icv, p.pih, c.want.icv, c.want.pih)
				}
			}
		})
	}
}

// nextInChain locks the organization's own chain on egs in tx as the service does, and
// returns the ICV and PIH of its next document.
func nextInChain(ctx context.Context, tx pgx.Tx, org uuid.UUID, egs string) (int64, string, error) {
	p := new(postgres.Pipeline)
	next := postgres.QueueNextInChain(ctx, p, org, org, egs)
	if err := p.Send(ctx, tx); err != nil {
		return 0, "", err
	}
	at, err := next(dbq.New(tx))
	return at.NextIcv, at.LastInvoiceHash, err
}
