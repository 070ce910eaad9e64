package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/provider/coreapi/internal/postgres"
	"github.com/provider/coreapi/internal/secretbox"
)

// Retry policy of a tax documents job whose attempt failed (the database, not the engine: a
// refusal by the engine is an outcome, recorded as failed): exponential backoff from one
// second, capped at five minutes, for at most maxTaxDocumentAttempts attempts; then River
// discards the job and the invoice stays pending for an operator to look at.
const maxTaxDocumentAttempts = 10

// TaxDocumentsArgs is the job that issues what a billing invoice is owed of tax documents,
// inserted in the transaction that issues or voids the invoice.
type TaxDocumentsArgs struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	InvoiceID      uuid.UUID `json:"invoice_id"`
}

// Kind implements river.JobArgs.
func (TaxDocumentsArgs) Kind() string { return "issue_tax_documents" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (TaxDocumentsArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queueTaxDocuments, MaxAttempts: maxTaxDocumentAttempts}
}

// taxDocumentsWorker runs DB.IssueTaxDocuments, which does nothing for an invoice that has
// what it is owed: a job run twice, or two jobs of one invoice, issue each document once.
type taxDocumentsWorker struct {
	river.WorkerDefaults[TaxDocumentsArgs]
	db     *postgres.DB
	box    *secretbox.Box
	queue  *Queue
	logger *slog.Logger
}

func (w *taxDocumentsWorker) Work(ctx context.Context, job *river.Job[TaxDocumentsArgs]) error {
	err := w.db.IssueTaxDocuments(ctx, w.box, job.Args.OrganizationID, job.Args.InvoiceID)
	return w.queue.attemptOutcome(ctx, w.logger, err, "tax documents: attempt failed",
		"job_id", job.ID, "invoice_id", job.Args.InvoiceID, "attempt", job.Attempt)
}

// NextRetry backs off as provisioning does.
func (w *taxDocumentsWorker) NextRetry(job *river.Job[TaxDocumentsArgs]) time.Time {
	return time.Now().Add(provisioningBackoff(job.Attempt))
}
