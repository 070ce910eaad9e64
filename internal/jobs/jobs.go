// Package jobs runs the service's durable background work on River (riverqueue/river, over
// pgx v5): the provisioning of new subscriptions, the attempts of webhook deliveries, and the
// periodic renewal run and sweeps. A job is inserted in the transaction of the change that causes it (Queue
// implements postgres.Jobs), so it exists if and only if the change committed; River's tables
// are created by the service's migrations (postgres.Migrate).
//
// Every process runs a Queue over the same database. River locks each job for one process at
// a time; a process stopping hands back what it has not finished, and a job whose process died
// mid-run is rescued and run again once it has been running longer than any job may
// (RescueStuckJobsAfter). Work is therefore at least once, and each worker is written so that
// running a job twice does no harm.
package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/provider/coreapi/internal/metrics"
	"github.com/provider/coreapi/internal/postgres"
	"github.com/provider/coreapi/internal/secretbox"
	"github.com/provider/coreapi/internal/webhook"
)

// The queues, each with its own workers, so that slow webhook endpoints never hold up
// provisioning.
const (
	queueProvisioning = "provisioning"
	queueWebhooks     = "webhooks"
	queueMaintenance  = "maintenance"
	queueBilling      = "billing"
	// queueTaxDocuments issues billing invoices' tax documents, apart from the renewal run so
	// that neither waits for the other.
	queueTaxDocuments = "tax_documents"
)

// webhookConcurrency is how many webhook attempts a process makes at once: a slow endpoint
// holds one slot for at most the policy's timeout while the others go on.
const webhookConcurrency = 32

// Config configures a Queue.
type Config struct {
	Logger *slog.Logger
	// Box opens the webhook endpoints' secrets.
	Box *secretbox.Box
	// Webhooks is the delivery policy: timeout, attempts and backoff.
	Webhooks webhook.Policy
	// Retention is how long the time-partitioned tables keep their rows; zero fields are
	// postgres.DefaultRetention's.
	Retention postgres.Retention
	// PollInterval is how often a process looks for due jobs besides being told of new ones
	// (River's FetchPollInterval); zero is River's default, a second. Retries and scheduled
	// attempts become due without a notification, so tests poll often.
	PollInterval time.Duration
	// RenewalInterval is how often the renewal run starts; zero is DefaultRenewalInterval.
	RenewalInterval time.Duration
}

// Queue is a process's River client: it inserts jobs and, once started, works them.
type Queue struct {
	client *river.Client[pgx.Tx]
	// stopping is set when Stop begins: a job cancelled from then on is handed back, not failed.
	stopping atomic.Bool
}

// New returns the Queue of a process over db. It neither works jobs until Start nor changes
// db: set db.Jobs to it for the services to queue their work through it.
func New(db *postgres.DB, cfg Config) (*Queue, error) {
	q := &Queue{}
	if cfg.RenewalInterval == 0 {
		cfg.RenewalInterval = DefaultRenewalInterval
	}
	cfg.Retention = cfg.Retention.OrDefault()
	workers := river.NewWorkers()
	river.AddWorker(workers, &provisionWorker{db: db, queue: q, logger: cfg.Logger})
	river.AddWorker(workers, &webhookWorker{db: db, box: cfg.Box, sender: webhook.NewSender(cfg.Webhooks), logger: cfg.Logger})
	river.AddWorker(workers, &sweepIdempotencyKeysWorker{db: db, logger: cfg.Logger})
	river.AddWorker(workers, &billDueWorker{db: db, logger: cfg.Logger})
	river.AddWorker(workers, &taxDocumentsWorker{db: db, box: cfg.Box, queue: q, logger: cfg.Logger})
	river.AddWorker(workers, &maintainPartitionsWorker{db: db, retention: cfg.Retention, logger: cfg.Logger})

	// A job runs at most jobTimeout (a webhook attempt, the longest, is bounded by the policy's
	// timeout); one running much longer than that belonged to a process that died.
	jobTimeout := max(time.Minute, cfg.Webhooks.Timeout+30*time.Second)
	rc := &river.Config{
		Logger:  cfg.Logger,
		Workers: workers,
		Queues: map[string]river.QueueConfig{
			queueProvisioning: {MaxWorkers: 4},
			queueWebhooks:     {MaxWorkers: webhookConcurrency},
			queueMaintenance:  {MaxWorkers: 1},
			queueBilling:      {MaxWorkers: 1},
			queueTaxDocuments: {MaxWorkers: 2},
		},
		FetchPollInterval:    cfg.PollInterval,
		JobTimeout:           jobTimeout,
		RescueStuckJobsAfter: jobTimeout + time.Minute,
		PeriodicJobs:         periodicJobs(cfg.RenewalInterval),
	}
	if cfg.PollInterval > 0 && cfg.PollInterval < river.FetchCooldownDefault {
		rc.FetchCooldown = cfg.PollInterval
	}
	client, err := river.NewClient(riverpgxv5.New(db.SessionPool()), rc)
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	q.client = client
	return q, nil
}

// Start starts working jobs in the background; it returns at once.
func (q *Queue) Start(ctx context.Context) error {
	return q.client.Start(ctx)
}

// Stop stops working jobs and returns when the jobs in flight have returned and their
// outcomes are stored. A webhook attempt in flight is finished and recorded (bounded by the
// policy's timeout); other jobs are cancelled and handed back, their attempt not counted, to
// be run by another process or at the next start.
func (q *Queue) Stop(ctx context.Context) error {
	q.stopping.Store(true)
	return q.client.StopAndCancel(ctx)
}

// InsertProvisioning implements postgres.Jobs.
func (q *Queue) InsertProvisioning(ctx context.Context, tx pgx.Tx, organizationID, subscriptionID uuid.UUID) error {
	_, err := q.client.InsertTx(ctx, tx, ProvisionArgs{OrganizationID: organizationID, SubscriptionID: subscriptionID}, nil)
	return err
}

// InsertWebhookDelivery implements postgres.Jobs.
func (q *Queue) InsertWebhookDelivery(ctx context.Context, tx pgx.Tx, organizationID, eventID, deliveryID uuid.UUID) error {
	_, err := q.client.InsertTx(ctx, tx, DeliverWebhookArgs{OrganizationID: organizationID, EventID: eventID, DeliveryID: deliveryID}, nil)
	return err
}

// RequeueWebhookDeliveries implements postgres.Jobs.
func (q *Queue) RequeueWebhookDeliveries(ctx context.Context, tx pgx.Tx, organizationID uuid.UUID, deliveries []postgres.RequeuedDelivery) error {
	if len(deliveries) == 0 {
		return nil
	}
	params := make([]river.InsertManyParams, len(deliveries))
	for i, d := range deliveries {
		params[i] = river.InsertManyParams{Args: DeliverWebhookArgs{OrganizationID: organizationID, EventID: d.EventID, DeliveryID: d.ID, Requeues: d.Requeues}}
	}
	_, err := q.client.InsertManyTx(ctx, tx, params)
	return err
}

// InsertTaxDocuments implements postgres.Jobs.
func (q *Queue) InsertTaxDocuments(ctx context.Context, tx pgx.Tx, organizationID, invoiceID uuid.UUID) error {
	_, err := q.client.InsertTx(ctx, tx, TaxDocumentsArgs{OrganizationID: organizationID, InvoiceID: invoiceID}, nil)
	return err
}

// InsertMany implements postgres.Jobs.
func (q *Queue) InsertMany(ctx context.Context, tx pgx.Tx, jobs postgres.QueuedJobs) error {
	params := make([]river.InsertManyParams, 0, len(jobs.TaxDocuments)+len(jobs.Deliveries))
	for _, inv := range jobs.TaxDocuments {
		params = append(params, river.InsertManyParams{Args: TaxDocumentsArgs{OrganizationID: inv.OrganizationID, InvoiceID: inv.InvoiceID}})
	}
	for _, d := range jobs.Deliveries {
		params = append(params, river.InsertManyParams{Args: DeliverWebhookArgs{OrganizationID: d.OrganizationID, EventID: d.EventID, DeliveryID: d.DeliveryID}})
	}
	if len(params) == 0 {
		return nil
	}
	_, err := q.client.InsertManyTx(ctx, tx, params)
	return err
}

var _ postgres.Jobs = (*Queue)(nil)

// RegisterMetrics exposes the depth of the provisioning queue as the gauge
// coreapi_provisioning_jobs_pending, read from PostgreSQL at every scrape (-1 when the
// database does not answer in time).
func RegisterMetrics(m *metrics.Metrics, db *postgres.DB) error {
	return m.GaugeFunc("provisioning_jobs_pending", "Provisioning jobs waiting to run or be retried, across every process.", func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		n, err := db.UnfinishedJobs(ctx, ProvisionArgs{}.Kind())
		if err != nil {
			return -1
		}
		return float64(n)
	})
}
