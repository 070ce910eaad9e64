package postgres

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// The set-based renewal step (docs/design.md, "A run's batches"). The wall-clock run takes a
// batch of due steps in one transaction: it locks the batch's subscriptions (SKIP LOCKED),
// keeps those whose step is a plain renewal, reads their usage in one statement, computes each
// renewal with the same code as the per-step path (core.Subscription.Renew, billingPlan,
// core.RateUsage through it) and writes the invoices, renewal records, subscriptions, audit
// entries, webhook events and deliveries, and jobs with one statement each. Every other step
// (a service's end, a dunning step, an organization with a credit balance or on a test clock,
// anything the per-step path treats specially) is left to billingStep, as is the whole batch
// when its transaction fails: its writes roll back together, so no renewal is lost or made
// twice (subscription_renewals' key still refuses a second renewal of a period).

// renewalBatchSize is how many due steps one batch transaction takes at most.
const renewalBatchSize = 100

// dueStep is a billing step the run read as due.
type dueStep = dbq.BillingStepsDueAnyOrganizationRow

// renewBatch takes the plain renewals among steps in one transaction, at the wall clock's
// billing time, and returns how many it took and the steps it leaves to billingStep: the due
// steps that are not plain renewals, a subscription's second step of the read, and all of
// steps when the transaction fails (with its error). A subscription locked by anyone else, or
// no longer due, is neither taken nor left, as billingStep would skip it. way, when not nil,
// is how the transaction gives way to the API before each statement.
func (d *DB) renewBatch(ctx context.Context, steps []dueStep, way *batchGivingWay) (int, []dueStep, error) {
	var b *renewalBatch
	err := d.WithTx(ctx, func(ctx context.Context, _ *dbq.Queries) error {
		ctx, q := batchStatementsIn(ctx, way)
		var err error
		if b, err = d.claimRenewals(ctx, q, steps); err != nil {
			return err
		}
		if err := b.rate(ctx, q); err != nil {
			return err
		}
		return d.storeRenewals(ctx, q, b)
	})
	if err != nil {
		return 0, steps, err
	}
	return len(b.renewals), b.rest, nil
}

// batchTx is a batch transaction as its statements go: sqlc's (Exec, Query, QueryRow),
// pipelines' (SendBatch) and the job queue's (any of them). Each first gives way to the API as
// way says (nil: it does not). sqlc's also have pgx's buffers sized once for their arguments
// (reserveParameters, and a reservation in the connection's write buffer as a pipeline's):
// the batch's inserts carry a hundred renewals' documents, hundreds of kB, which pgx would
// otherwise grow its two buffers to by doubling, for every statement. That was about 40 of the
// 78 kB a renewal allocated, and so most of the garbage collections a run causes beside the
// API's requests. Commit and Rollback do not give way: they end the transaction, and its
// locks, sooner.
type batchTx struct {
	pgx.Tx
	way *batchGivingWay
}

// batchStatementsIn returns DB.WithTx's context and queries with the transaction's statements
// going as a batchTx's, giving way as way says.
func batchStatementsIn(ctx context.Context, way *batchGivingWay) (context.Context, *dbq.Queries) {
	tx := batchTx{Tx: ctx.Value(txKey{}).(pgx.Tx), way: way}
	return withTx(ctx, tx), dbq.New(tx)
}

func (t batchTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	t.way.beforeStatement(ctx)
	return t.Tx.Exec(ctx, sql, t.reserve(args)...)
}

func (t batchTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	t.way.beforeStatement(ctx)
	return t.Tx.Query(ctx, sql, t.reserve(args)...)
}

func (t batchTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	t.way.beforeStatement(ctx)
	return t.Tx.QueryRow(ctx, sql, t.reserve(args)...)
}

func (t batchTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	t.way.beforeStatement(ctx)
	return t.Tx.SendBatch(ctx, b)
}

func (t batchTx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, rows pgx.CopyFromSource) (int64, error) {
	t.way.beforeStatement(ctx)
	return t.Tx.CopyFrom(ctx, table, columns, rows)
}

// reserve sizes pgx's parameter buffer and the connection's write buffer once for a
// statement with args, and returns the arguments to send.
func (t batchTx) reserve(args []any) []any {
	args = reserveParameters(args)
	t.Conn().PgConn().Frontend().Send(reservation(batchMessageBytes(args)))
	return args
}

// renewalBatch is what a batch transaction renews, and the steps it leaves to billingStep.
type renewalBatch struct {
	at       time.Time
	renewals []*batchRenewal
	rest     []dueStep
}

// batchRenewal is one subscription's renewal in a batch: before as locked, after as renewed.
type batchRenewal struct {
	step          dueStep
	before, after *core.Subscription
	plan          *core.Plan
	usage         core.Usage
	renewal       core.Renewal
	invoice       *core.BillingInvoice // as stored, when renewal.Invoice is set
}

// claimRenewals locks the subscriptions of steps that nobody else holds and sorts them: a
// plain renewal due at the wall clock's time is the batch's; any other due step is left.
func (d *DB) claimRenewals(ctx context.Context, q *dbq.Queries, steps []dueStep) (*renewalBatch, error) {
	b := &renewalBatch{at: now()}
	var orgs, ids []uuid.UUID
	stepOf := make(map[uuid.UUID]dueStep, len(steps))
	for _, s := range steps {
		if _, seen := stepOf[s.ID]; seen { // another step of the same subscription: taken after this one
			b.rest = append(b.rest, s)
			continue
		}
		stepOf[s.ID] = s
		orgs, ids = append(orgs, s.OrganizationID), append(ids, s.ID)
	}
	claimed, err := q.RenewalBatchClaimAnyOrganization(ctx, dbq.RenewalBatchClaimAnyOrganizationParams{WallClock: b.at, OrganizationIds: orgs, Ids: ids})
	if err != nil {
		return nil, err
	}
	orgs, ids = orgs[:0], ids[:0]
	for _, c := range claimed {
		orgs, ids = append(orgs, c.Subscription.OrganizationID), append(ids, c.Subscription.ID)
	}
	due, err := q.RenewalBatchDueAnyOrganization(ctx, dbq.RenewalBatchDueAnyOrganizationParams{OrganizationIds: orgs, Ids: ids, Now: b.at})
	if err != nil {
		return nil, err
	}
	isDue := make(map[uuid.UUID]bool, len(due))
	for _, r := range due {
		isDue[r.ID] = true
	}
	for _, c := range claimed {
		if !isDue[c.Subscription.ID] {
			continue
		}
		sub, err := subscriptionFromRow(c.Subscription)
		if err != nil {
			return nil, err
		}
		if c.HasCredit || !c.BillingTime.Equal(b.at) || sub.ServiceEndDue(b.at) || !sub.RenewalDue(b.at) {
			b.rest = append(b.rest, stepOf[sub.ID])
			continue
		}
		b.renewals = append(b.renewals, &batchRenewal{before: sub, step: stepOf[sub.ID]})
	}
	return b, nil
}

// rate reads the plans and the usage of the batch's renewals and renews each (as renew does):
// a renewal whose outcome the batch does not store the way issueInvoice would is left.
func (b *renewalBatch) rate(ctx context.Context, q *dbq.Queries) error {
	var usage dbq.UsageCountsInPeriodsAnyOrganizationParams
	metric := map[uuid.UUID]string{}
	for _, r := range b.renewals {
		plan, err := billingPlan(ctx, q, r.before.PlanID)
		if err != nil {
			return err
		}
		r.plan = plan
		from, to, ok := r.before.UsagePeriod(plan)
		if !ok {
			continue
		}
		product, err := billingProduct(ctx, q, r.before.ProductID)
		if err != nil {
			return err
		}
		if len(product.MeteringMetrics) != 1 {
			continue
		}
		metric[r.before.ID] = product.MeteringMetrics[0]
		usage.SubscriptionIds = append(usage.SubscriptionIds, r.before.ID)
		usage.OrganizationIds = append(usage.OrganizationIds, r.before.OrganizationID)
		usage.Products = append(usage.Products, product.Code)
		usage.FromTimes, usage.ToTimes = append(usage.FromTimes, from), append(usage.ToTimes, to)
	}
	used := map[uuid.UUID]int64{}
	if len(usage.SubscriptionIds) > 0 {
		rows, err := q.UsageCountsInPeriodsAnyOrganization(ctx, usage)
		if err != nil {
			return err
		}
		for _, u := range rows {
			used[u.SubscriptionID] = u.Used
		}
	}
	kept := b.renewals[:0]
	for _, r := range b.renewals {
		if m, ok := metric[r.before.ID]; ok {
			r.usage = core.Usage{m: used[r.before.ID]}
		}
		after := *r.before
		var err error
		r.renewal, err = after.Renew(r.plan, r.usage, b.at)
		after.UpdatedAt = b.at
		r.after = &after
		// A renewal that cannot be rated is left to its own step, which fails alone with why.
		if inv := r.renewal.Invoice; err != nil || after.RenewsAt == nil || inv != nil && (inv.BalanceCredit > 0 || inv.IssuedAt == nil || inv.DueAt == nil) {
			b.rest = append(b.rest, r.step)
			continue
		}
		kept = append(kept, r)
	}
	b.renewals = kept
	return nil
}

// storeRenewals writes the batch's renewals as renew and recordBillingStep write one: the
// invoices, the renewal records, the subscriptions, the audit entries, the webhook events with
// their deliveries, and the jobs (tax documents, deliveries), each kind in one statement.
func (d *DB) storeRenewals(ctx context.Context, q *dbq.Queries, b *renewalBatch) error {
	if len(b.renewals) == 0 {
		return nil
	}
	if err := insertBatchInvoices(ctx, q, b); err != nil {
		return err
	}
	if err := insertBatchRenewalRecords(ctx, q, b); err != nil {
		return err
	}
	subs, err := updateBatchSubscriptions(ctx, q, b)
	if err != nil {
		return err
	}
	var entries []core.AuditEntry
	var events []batchEvent
	for i, r := range b.renewals {
		org := r.before.OrganizationID
		if inv := r.invoice; inv != nil {
			entries = append(entries, core.AuditEntry{OrganizationID: &org, Action: "billing_invoice.issued", ResourceType: "billing_invoice", ResourceID: inv.ID.String(), After: inv})
			events = append(events,
				batchEvent{org: org, t: core.EventInvoiceIssued, v: inv},
				batchEvent{org: org, t: core.EventBillingInvoiceIssued, v: inv, except: []core.EventType{core.EventInvoiceIssued}})
		}
		entries = append(entries, core.AuditEntry{OrganizationID: &org, Action: "subscription.renewed", ResourceType: "subscription", ResourceID: subs[i].ID.String(), Before: r.before, After: subs[i]})
		events = append(events, batchEvent{org: org, t: core.EventSubscriptionRenewed, v: subs[i]})
	}
	if err := auditMany(ctx, q, entries); err != nil {
		return err
	}
	jobs, err := d.publishMany(ctx, q, events)
	if err != nil {
		return err
	}
	for _, r := range b.renewals {
		if inv := r.invoice; inv != nil && inv.TaxDocumentStatus != core.TaxDocumentNotApplicable {
			jobs.TaxDocuments = append(jobs.TaxDocuments, InvoiceOfOrganization{OrganizationID: inv.OrganizationID, InvoiceID: inv.ID})
		}
	}
	if len(jobs.TaxDocuments)+len(jobs.Deliveries) == 0 {
		return nil
	}
	return d.enqueue(ctx, func(queue Jobs, tx pgx.Tx) error { return queue.InsertMany(ctx, tx, jobs) })
}

// insertBatchInvoices stores the invoices of the batch's renewals (insertInvoice for many) and
// keeps each as stored.
func insertBatchInvoices(ctx context.Context, q *dbq.Queries, b *renewalBatch) error {
	var p dbq.BillingInvoiceInsertManyAnyOrganizationParams
	for _, r := range b.renewals {
		draft := r.renewal.Invoice
		if draft == nil {
			continue
		}
		id, err := uuid.NewV7()
		if err != nil {
			return err
		}
		lines, err := json.Marshal(draft.Lines)
		if err != nil {
			return err
		}
		p.Ids, p.OrganizationIds, p.SubscriptionIds = append(p.Ids, id), append(p.OrganizationIds, r.before.OrganizationID), append(p.SubscriptionIds, r.before.ID)
		p.PlanIds, p.Lines = append(p.PlanIds, draft.PlanID), append(p.Lines, lines)
		p.PeriodStarts = append(p.PeriodStarts, pgtype.Date{Time: draft.PeriodStart, Valid: true})
		p.PeriodEnds = append(p.PeriodEnds, pgtype.Date{Time: draft.PeriodEnd, Valid: true})
		p.Subtotals, p.Discounts = append(p.Subtotals, draft.Subtotal), append(p.Discounts, draft.Discount)
		p.Taxes, p.Totals = append(p.Taxes, draft.Tax), append(p.Totals, draft.Total)
		p.Currencies, p.Statuses = append(p.Currencies, draft.Currency), append(p.Statuses, draft.Status)
		p.TaxDocumentStatuses = append(p.TaxDocumentStatuses, draft.TaxDocumentStatus)
		p.IssuedAts, p.DueAts = append(p.IssuedAts, *draft.IssuedAt), append(p.DueAts, *draft.DueAt)
		p.OpensSelections = append(p.OpensSelections, draft.OpensSelection)
	}
	if len(p.Ids) == 0 {
		return nil
	}
	rows, err := q.BillingInvoiceInsertManyAnyOrganization(ctx, p)
	if err != nil {
		return err
	}
	stored := make(map[uuid.UUID]*core.BillingInvoice, len(rows))
	for _, row := range rows {
		inv, err := invoiceFromRow(row)
		if err != nil {
			return err
		}
		stored[inv.SubscriptionID] = inv
	}
	for _, r := range b.renewals {
		if r.renewal.Invoice != nil {
			r.invoice = stored[r.before.ID]
		}
	}
	return nil
}

// insertBatchRenewalRecords records the batch's renewals (SubscriptionRenewalInsert for many).
func insertBatchRenewalRecords(ctx context.Context, q *dbq.Queries, b *renewalBatch) error {
	var p dbq.SubscriptionRenewalInsertManyAnyOrganizationParams
	for _, r := range b.renewals {
		invoiceID := uuid.Nil
		if r.invoice != nil {
			invoiceID = r.invoice.ID
		}
		p.OrganizationIds, p.SubscriptionIds = append(p.OrganizationIds, r.before.OrganizationID), append(p.SubscriptionIds, r.before.ID)
		p.PeriodStarts = append(p.PeriodStarts, pgtype.Date{Time: r.renewal.PeriodStart, Valid: true})
		p.PeriodEnds = append(p.PeriodEnds, pgtype.Date{Time: r.renewal.PeriodEnd, Valid: true})
		p.InvoiceIds, p.RenewedAts = append(p.InvoiceIds, invoiceID), append(p.RenewedAts, b.at)
	}
	return q.SubscriptionRenewalInsertManyAnyOrganization(ctx, p)
}

// updateBatchSubscriptions stores the renewed subscriptions and returns them as stored, in the
// batch's order.
func updateBatchSubscriptions(ctx context.Context, q *dbq.Queries, b *renewalBatch) ([]*core.Subscription, error) {
	var p dbq.SubscriptionRenewManyAnyOrganizationParams
	for _, r := range b.renewals {
		p.OrganizationIds, p.Ids = append(p.OrganizationIds, r.after.OrganizationID), append(p.Ids, r.after.ID)
		p.RenewsAts, p.UpdatedAts = append(p.RenewsAts, *r.after.RenewsAt), append(p.UpdatedAts, r.after.UpdatedAt)
	}
	rows, err := q.SubscriptionRenewManyAnyOrganization(ctx, p)
	if err != nil {
		return nil, err
	}
	stored := make(map[uuid.UUID]*core.Subscription, len(rows))
	for _, row := range rows {
		sub, err := subscriptionFromRow(row)
		if err != nil {
			return nil, err
		}
		stored[sub.ID] = sub
	}
	subs := make([]*core.Subscription, len(b.renewals))
	for i, r := range b.renewals {
		subs[i] = stored[r.after.ID]
	}
	return subs, nil
}

// auditMany appends entries to the audit trail in one statement, as audit appends one.
func auditMany(ctx context.Context, q *dbq.Queries, entries []core.AuditEntry) error {
	var p dbq.AuditEventInsertManyAnyOrganizationParams
	for _, e := range entries {
		row, err := auditParams(ctx, e)
		if err != nil {
			return err
		}
		p.ActorType, p.ActorID, p.ActorKeyPrefix, p.RequestID = row.ActorType, row.ActorID, row.ActorKeyPrefix, row.RequestID
		p.Ids, p.OrganizationIds = append(p.Ids, row.ID), append(p.OrganizationIds, row.OrganizationID)
		p.Actions, p.ResourceTypes, p.ResourceIds = append(p.Actions, row.Action), append(p.ResourceTypes, row.ResourceType), append(p.ResourceIds, row.ResourceID)
		p.Befores, p.Afters = append(p.Befores, row.Before), append(p.Afters, row.After)
	}
	return q.AuditEventInsertManyAnyOrganization(ctx, p)
}

// batchEvent is a webhook event a batch publishes: publish's arguments.
type batchEvent struct {
	org    uuid.UUID
	t      core.EventType
	v      any
	except []core.EventType
}

// publishMany publishes events as publish publishes each, with one statement for the events
// and one for their deliveries, and returns the deliveries' jobs for the caller to queue.
func (d *DB) publishMany(ctx context.Context, q *dbq.Queries, events []batchEvent) (QueuedJobs, error) {
	var jobs QueuedJobs
	orgs := make([]uuid.UUID, 0, len(events))
	for _, e := range events {
		if !slices.Contains(orgs, e.org) {
			orgs = append(orgs, e.org)
		}
	}
	endpoints, err := q.WebhookEndpointListEnabledAnyOrganization(ctx, orgs)
	if err != nil {
		return jobs, err
	}
	var stored dbq.WebhookEventInsertManyAnyOrganizationParams
	var deliveries dbq.WebhookDeliveryInsertManyAnyOrganizationParams
	for _, e := range events {
		data, err := d.eventData(e.t, e.v)
		if err != nil {
			return jobs, err
		}
		eventID, err := uuid.NewV7()
		if err != nil {
			return jobs, err
		}
		stored.Ids, stored.OrganizationIds = append(stored.Ids, eventID), append(stored.OrganizationIds, e.org)
		stored.Types, stored.Data = append(stored.Types, string(e.t)), append(stored.Data, data)
		for _, endpoint := range endpoints {
			if endpoint.OrganizationID != e.org || !receives(endpoint.EnabledEvents, e.t, e.except) {
				continue
			}
			id, err := uuid.NewV7()
			if err != nil {
				return jobs, err
			}
			deliveries.Ids, deliveries.OrganizationIds = append(deliveries.Ids, id), append(deliveries.OrganizationIds, e.org)
			deliveries.EventIds, deliveries.EndpointIds = append(deliveries.EventIds, eventID), append(deliveries.EndpointIds, endpoint.ID)
			jobs.Deliveries = append(jobs.Deliveries, QueuedDelivery{OrganizationID: e.org, EventID: eventID, DeliveryID: id})
		}
	}
	if err := q.WebhookEventInsertManyAnyOrganization(ctx, stored); err != nil {
		return jobs, err
	}
	if len(deliveries.Ids) == 0 {
		return jobs, nil
	}
	return jobs, q.WebhookDeliveryInsertManyAnyOrganization(ctx, deliveries)
}

// receives reports whether an endpoint subscribed to enabled receives an event of type t that
// is not for the endpoints subscribed to any of except (WebhookEventInsertListSubscribed's
// condition).
func receives(enabled []string, t core.EventType, except []core.EventType) bool {
	if !slices.Contains(enabled, string(t)) {
		return false
	}
	for _, e := range except {
		if slices.Contains(enabled, string(e)) {
			return false
		}
	}
	return true
}
