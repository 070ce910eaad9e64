package postgres

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"io/fs"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pressly/goose/v3"

	"github.com/provider/coreapi/db"
	"github.com/provider/coreapi/internal/core"
)

// Cached reports whether c holds bearer.
func (c *CredentialCache) Cached(bearer string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.entries[sha256.Sum256([]byte(bearer))]
	return ok
}

// HearNothing makes c cache as if its listener had just been heard, for an hour, while no
// notification reaches it: only this process's own changes (DB.credentialsChanged) empty it.
func (c *CredentialCache) HearNothing() {
	c.mu.Lock()
	c.listening, c.heardUntil = true, time.Now().Add(time.Hour)
	c.mu.Unlock()
}

// Entitle is DB.entitle for a caller outside any transaction.
func (d *DB) Entitle(ctx context.Context, org uuid.UUID, a core.Access) error {
	return d.entitle(ctx, org, a)
}

// SummaryFromEvents makes s read every summary from growth_events, not the rollups.
func (s *GrowthService) SummaryFromEvents() { s.rawSummary = true }

// CountSecretChecks makes s count its secret comparisons in n.
func (s *APIKeyService) CountSecretChecks(n *atomic.Int64) { s.onSecretCheck = func() { n.Add(1) } }

// MigrateDownTo rolls the database of dsn back to version, for tests of a migration's data.
func MigrateDownTo(ctx context.Context, dsn string, version int64) error {
	sqlDB, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	defer sqlDB.Close()
	migrations, err := fs.Sub(db.Migrations, "migrations")
	if err != nil {
		return err
	}
	provider, err := goose.NewProvider(goose.DialectPostgres, sqlDB, migrations,
		goose.WithGoMigrations(riverMigration(dsn, slog.New(slog.DiscardHandler))))
	if err != nil {
		return err
	}
	_, err = provider.DownTo(ctx, version)
	return err
}

// WithTx makes the services run their statements in tx (a test's wrapper of one).
func WithTx(ctx context.Context, tx pgx.Tx) context.Context { return withTx(ctx, tx) }

// NewRequestLogWriterWithBodyBudget starts a writer whose queued bodies may hold at most
// budget bytes.
func NewRequestLogWriterWithBodyBudget(d *DB, logger *slog.Logger, budget int64) *RequestLogWriter {
	return newRequestLogWriter(d, logger, budget)
}

// SetClock makes s issue certificates as if it were now().
func (s *EGSUnitService) SetClock(now func() time.Time) { s.now = now }

// SetClock makes s stamp documents as if it were now().
func (s *TaxInvoiceService) SetClock(now func() time.Time) { s.now = now }

// RenewStepByStep makes BillDue take every billing step in a transaction of its own, without
// renewal batches.
func (d *DB) RenewStepByStep() { d.renewStepByStep = true }

// OnRenewalPause makes the renewal run call pause with each pause it would make while the API
// is busy, instead of sleeping.
func (d *DB) OnRenewalPause(pause func(time.Duration)) {
	d.RenewalPause = func(_ context.Context, p time.Duration) { pause(p) }
}

// PauseAfter is how long the renewal run pauses after a batch that took worked while the API
// is busy, for the batch to be share of the time.
var PauseAfter = pauseAfter
