package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// Jobs queues durable background work (internal/jobs runs it on River) in the transaction of
// the change that causes it: the work is queued if and only if the change commits.
type Jobs interface {
	// InsertProvisioning queues the provisioning of a new subscription.
	InsertProvisioning(ctx context.Context, tx pgx.Tx, organizationID, subscriptionID uuid.UUID) error
	// InsertWebhookDelivery queues the first attempt of a webhook delivery.
	InsertWebhookDelivery(ctx context.Context, tx pgx.Tx, organizationID, eventID, deliveryID uuid.UUID) error
	// RequeueWebhookDeliveries queues an attempt now of each delivery sent again by hand
	// (resend, recover), with the delivery's new count of re-queues.
	RequeueWebhookDeliveries(ctx context.Context, tx pgx.Tx, organizationID uuid.UUID, deliveries []RequeuedDelivery) error
	// InsertTaxDocuments queues the issuing of what a billing invoice is owed of tax
	// documents (DB.IssueTaxDocuments).
	InsertTaxDocuments(ctx context.Context, tx pgx.Tx, organizationID, invoiceID uuid.UUID) error
	// InsertMany queues, in one statement, the tax documents and first delivery attempts that
	// InsertTaxDocuments and InsertWebhookDelivery queue one at a time: a renewal batch's.
	InsertMany(ctx context.Context, tx pgx.Tx, jobs QueuedJobs) error
}

// QueuedJobs is the work of a renewal batch: the tax documents of its invoices and the first
// attempts of its webhook deliveries.
type QueuedJobs struct {
	TaxDocuments []InvoiceOfOrganization
	Deliveries   []QueuedDelivery
}

// InvoiceOfOrganization names a billing invoice with its organization.
type InvoiceOfOrganization struct {
	OrganizationID, InvoiceID uuid.UUID
}

// QueuedDelivery is a new webhook delivery with its organization and event.
type QueuedDelivery struct {
	OrganizationID, EventID, DeliveryID uuid.UUID
}

// RequeuedDelivery is a delivery queued again, its event (the partition key of both), and
// its count of re-queues since.
type RequeuedDelivery struct {
	ID, EventID uuid.UUID
	Requeues    int32
}

// enqueue runs insert with the job queue and the transaction of ctx, which must be the
// context DB.WithTx hands its function: the job is queued if and only if the change commits.
func (d *DB) enqueue(ctx context.Context, insert func(jobs Jobs, tx pgx.Tx) error) error {
	tx, ok := ctx.Value(txKey{}).(pgx.Tx)
	if !ok {
		return errors.New("postgres: background work is queued only in a transaction of DB.WithTx")
	}
	if d.Jobs == nil {
		return errors.New("postgres: no job queue to queue background work in (DB.Jobs is unset)")
	}
	return insert(d.Jobs, tx)
}

// riverSchemaVersion is the version of River's schema that migration riverMigrationVersion
// brings the database to. Upgrading River to a version with new migrations of its own means
// adding a migration of ours that raises it, so River's tables change in our migration order
// (and our later migrations can rely on their shape).
const (
	riverMigrationVersion = 140
	riverSchemaVersion    = 8
)

// riverMigration is the goose migration that creates River's tables (river_job and the
// others it needs) by running River's own migrations on dsn, up to riverSchemaVersion, while
// Migrate holds its advisory lock. River runs each of its steps in a transaction of its own:
// one adds an enum value that a later one uses, which PostgreSQL refuses within one
// transaction.
func riverMigration(dsn string, logger *slog.Logger) *goose.Migration {
	run := func(direction rivermigrate.Direction, target int) func(ctx context.Context, _ *sql.DB) error {
		return func(ctx context.Context, _ *sql.DB) error {
			cfg, err := PoolConfig(dsn)
			if err != nil {
				return err
			}
			cfg.MaxConns = 1
			pool, err := pgxpool.NewWithConfig(ctx, cfg)
			if err != nil {
				return err
			}
			defer pool.Close()
			migrator, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: logger})
			if err != nil {
				return err
			}
			if _, err := migrator.Migrate(ctx, direction, &rivermigrate.MigrateOpts{TargetVersion: target}); err != nil {
				return fmt.Errorf("river migrations %s: %w", direction, err)
			}
			return nil
		}
	}
	return goose.NewGoMigration(riverMigrationVersion,
		&goose.GoFunc{RunDB: run(rivermigrate.DirectionUp, riverSchemaVersion)},
		&goose.GoFunc{RunDB: run(rivermigrate.DirectionDown, -1)}) // -1: every step down
}

// UnfinishedJobs counts the jobs of kind that are waiting to run, running or waiting to be
// retried, in every process.
func (d *DB) UnfinishedJobs(ctx context.Context, kind string) (int64, error) {
	var n int64
	err := d.Pool.QueryRow(ctx, `SELECT count(*) FROM river_job
		WHERE kind = $1 AND state IN ('pending', 'scheduled', 'available', 'running', 'retryable')`, kind).Scan(&n)
	return n, translate(err)
}
