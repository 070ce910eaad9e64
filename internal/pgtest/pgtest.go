// Package pgtest gives each test its own PostgreSQL database, cloned from a migrated template.
//
// The server is TEST_DATABASE_URL when set (any database the role may CREATE DATABASE from);
// otherwise a throwaway private cluster started once per test binary from the local
// PostgreSQL binaries (see internal/pgcluster) and removed by Main when the tests end.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/internal/pgcluster"
	"github.com/provider/coreapi/internal/postgres"
)

var (
	once      sync.Once
	onceErr   error
	cluster   *pgcluster.Cluster
	adminDSN  string
	template  string
	serverCfg *pgx.ConnConfig
)

// Main runs the tests of a package and then removes the throwaway cluster, if one was started.
// Call it from TestMain: `func TestMain(m *testing.M) { pgtest.Main(m) }`.
func Main(m *testing.M) {
	code := m.Run()
	if cluster != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := cluster.Destroy(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
		}
		cancel()
	}
	os.Exit(code)
}

// NewDatabase creates a fresh, migrated database for t and returns its DSN. It is dropped
// when t ends.
func NewDatabase(t testing.TB) string {
	t.Helper()
	once.Do(func() { onceErr = setup() })
	if onceErr != nil {
		t.Fatalf("pgtest: %v", onceErr)
	}
	ctx := context.Background()
	name := "t_" + randomSuffix()
	// FILE_COPY copies the template's files: about twice as fast as PostgreSQL 15's default
	// WAL_LOG, which writes every block of the ~300-migration schema to the WAL (the cluster
	// runs without fsync, so FILE_COPY's checkpoints cost little).
	if err := exec(ctx, adminDSN, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s STRATEGY FILE_COPY", name, template)); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		if err := exec(context.Background(), adminDSN, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", name)); err != nil {
			t.Logf("pgtest: drop database: %v", err)
		}
	})
	return dsnFor(name)
}

func setup() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	adminDSN = os.Getenv("TEST_DATABASE_URL")
	if adminDSN == "" {
		const prefix = "coreapi-test-pg-"
		if _, err := pgcluster.DestroyAbandoned(ctx, filepath.Join(os.TempDir(), prefix+"*"), time.Minute); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest: removing abandoned clusters:", err)
		}
		dir, err := os.MkdirTemp("", prefix)
		if err != nil {
			return err
		}
		if cluster, err = pgcluster.Start(ctx, dir, pgcluster.Options{Ephemeral: true}); err != nil {
			return err
		}
		adminDSN = cluster.DSN("postgres")
	}
	var err error
	if serverCfg, err = pgx.ParseConfig(adminDSN); err != nil {
		return err
	}
	template = "tmpl_" + randomSuffix()
	if err := exec(ctx, adminDSN, "CREATE DATABASE "+template); err != nil {
		return err
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	return postgres.Migrate(ctx, dsnFor(template), quiet)
}

func dsnFor(name string) string {
	cfg := serverCfg.Copy()
	return fmt.Sprintf("host=%s port=%d user=%s password='%s' dbname=%s sslmode=disable",
		cfg.Host, cfg.Port, cfg.User, cfg.Password, name)
}

func exec(ctx context.Context, dsn, sql string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
