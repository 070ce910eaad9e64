package postgres

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"io/fs"
	"log/slog"
	"unsafe"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pressly/goose/v3"

	"github.com/provider/coreapi/db"
)

// Listening reports whether c hears credential changes (and so may cache).
func (c *CredentialCache) Listening() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.listening
}

// Cached reports whether c holds bearer.
func (c *CredentialCache) Cached(bearer string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.entries[sha256.Sum256([]byte(bearer))]
	return ok
}

// SummaryFromEvents makes s read every summary from growth_events, not the rollups.
func (s *GrowthService) SummaryFromEvents() { s.rawSummary = true }

// BufferedCopy is the batch writers' COPY, for the external tests.
type BufferedCopy = bufferedCopy

// NewBufferedCopy returns a BufferedCopy over p.
func NewBufferedCopy(p *pgxpool.Pool) *BufferedCopy { return &bufferedCopy{Pool: p} }

// Buffer tells where c's kept buffer lives, to show it reused.
func (c *bufferedCopy) Buffer() *byte { return unsafe.SliceData(c.buf) }

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
