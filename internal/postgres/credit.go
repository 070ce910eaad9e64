package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/gen/dbq"
	"github.com/provider/coreapi/internal/core"
)

// The customer credit balance (docs/design.md, "Credit balance"). An invoice issued through
// issueInvoice first takes what it can of its organization's balance (core.ApplyCreditBalance),
// and an invoice whose credits exceed its charges gives the rest to it; each is an entry of
// the ledger, audited, with the event credit_balance.updated. The balance's row is locked
// after the subscription's (issueInvoice runs under it), so the order is always the same.

// CreditService implements core.CreditService.
type CreditService struct {
	db *DB
}

var _ core.CreditService = (*CreditService)(nil)

// NewCreditService returns the credit balance service over d.
func NewCreditService(d *DB) *CreditService {
	return &CreditService{db: d}
}

// CreditBalance implements core.CreditService.
func (s *CreditService) CreditBalance(ctx context.Context, org uuid.UUID) (*core.CreditBalance, error) {
	p, err := core.PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.ActsFor(org, "organization_id"); err != nil {
		return nil, err
	}
	q := s.db.queries(ctx)
	if _, err := q.OrganizationGetByID(ctx, org); err != nil {
		return nil, notFoundAs(err, "Organization %s does not exist.", org)
	}
	rows, err := q.CreditBalanceList(ctx, org)
	if err != nil {
		return nil, translate(err)
	}
	balance := &core.CreditBalance{OrganizationID: org, Balances: make([]core.CreditAmount, len(rows))}
	for i, r := range rows {
		balance.Balances[i] = core.CreditAmount{Currency: r.Currency, Amount: r.Balance, UpdatedAt: r.UpdatedAt}
	}
	return balance, nil
}

// ListCreditTransactions implements core.CreditService.
func (s *CreditService) ListCreditTransactions(ctx context.Context, f core.CreditTransactionFilter) ([]*core.CreditTransaction, *string, error) {
	org, after, err := listScope(ctx, f.OrganizationID, f.Cursor)
	if err != nil {
		return nil, nil, err
	}
	q, limit := s.db.queries(ctx), int32(f.Limit)+1
	var rows []dbq.CustomerCreditTransaction
	if org != nil {
		rows, err = q.CreditTransactionList(ctx, dbq.CreditTransactionListParams{OrganizationID: *org, After: after, RowLimit: limit})
	} else {
		rows, err = q.CreditTransactionListAnyOrganization(ctx, dbq.CreditTransactionListAnyOrganizationParams{After: after, RowLimit: limit})
	}
	if err != nil {
		return nil, nil, translate(err)
	}
	entries := make([]*core.CreditTransaction, len(rows))
	for i, r := range rows {
		entries[i] = creditTransactionFromRow(r)
	}
	entries, next := page(entries, f.Limit, func(e *core.CreditTransaction) uuid.UUID { return e.ID })
	return entries, next, nil
}

// applyCreditBalance takes what it can of the credit balance of org off draft
// (core.ApplyCreditBalance): an invoice about to be issued when lock is set, whose balance stays
// locked until the transaction ends (its ledger entry follows once the invoice is stored:
// settleCreditBalance); an upcoming invoice otherwise, read without a lock (nothing is stored).
// A draft whose credits already exceed its charges takes nothing.
func applyCreditBalance(ctx context.Context, q *dbq.Queries, org uuid.UUID, draft *core.BillingInvoice, lock bool) error {
	if draft.BalanceCredit > 0 {
		return nil
	}
	var balance int64
	var err error
	if lock {
		balance, err = q.CreditBalanceAvailableForUpdate(ctx, dbq.CreditBalanceAvailableForUpdateParams{OrganizationID: org, Currency: draft.Currency})
	} else {
		balance, err = q.CreditBalanceAvailable(ctx, dbq.CreditBalanceAvailableParams{OrganizationID: org, Currency: draft.Currency})
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	core.ApplyCreditBalance(draft, balance)
	return nil
}

// settleCreditBalance records in the ledger what issuing inv (issued from draft) did to the
// credit balance: what it took (draft.BalanceApplied) or gave (draft.BalanceCredit).
func (d *DB) settleCreditBalance(ctx context.Context, q *dbq.Queries, draft, inv *core.BillingInvoice) error {
	switch {
	case draft.BalanceApplied > 0:
		return d.recordCredit(ctx, q, inv, *inv.IssuedAt, -draft.BalanceApplied, core.CreditApplied)
	case draft.BalanceCredit > 0:
		return d.recordCredit(ctx, q, inv, *inv.IssuedAt, draft.BalanceCredit, draft.BalanceCreditReason)
	}
	return nil
}

// restoreCreditBalance gives back, at at, what the voided invoice inv had taken from the credit
// balance: a void owes nothing, so the credit it used is the customer's again (as Stripe
// returns an applied customer balance when an invoice is voided).
func (d *DB) restoreCreditBalance(ctx context.Context, q *dbq.Queries, inv *core.BillingInvoice, at time.Time) error {
	taken, err := q.CreditAppliedToInvoice(ctx, dbq.CreditAppliedToInvoiceParams{OrganizationID: inv.OrganizationID, InvoiceID: inv.ID})
	if err != nil || taken <= 0 {
		return err
	}
	return d.recordCredit(ctx, q, inv, at, taken, core.CreditVoidRestored)
}

// recordCredit adds amount (negative: takes) to the credit balance of inv's organization in
// its currency for reason at at, as an entry of the ledger naming inv, audited and published.
func (d *DB) recordCredit(ctx context.Context, q *dbq.Queries, inv *core.BillingInvoice, at time.Time, amount int64, reason string) error {
	balance, err := q.CreditBalanceAdd(ctx, dbq.CreditBalanceAddParams{
		OrganizationID: inv.OrganizationID, Currency: inv.Currency, Amount: amount, UpdatedAt: at,
	})
	if err != nil {
		return err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	row, err := q.CreditTransactionInsert(ctx, dbq.CreditTransactionInsertParams{
		ID: id, OrganizationID: inv.OrganizationID, CreatedAt: at, Amount: amount, Currency: inv.Currency,
		BalanceAfter: balance, Reason: reason, InvoiceID: inv.ID, SubscriptionID: inv.SubscriptionID,
	})
	if err != nil {
		return err
	}
	entry := creditTransactionFromRow(row)
	if err := audit(ctx, q, core.AuditEntry{
		OrganizationID: &inv.OrganizationID,
		Action:         creditAuditActions[amount > 0],
		ResourceType:   "credit_balance_transaction",
		ResourceID:     entry.ID.String(),
		After:          entry,
		Reason:         reason,
	}); err != nil {
		return err
	}
	return d.publish(ctx, q, inv.OrganizationID, core.EventCreditBalanceUpdated, entry)
}

// creditAuditActions names the audit action of a ledger entry, by whether it credits.
var creditAuditActions = map[bool]string{true: "credit_balance.credited", false: "credit_balance.applied"}

func creditTransactionFromRow(r dbq.CustomerCreditTransaction) *core.CreditTransaction {
	return &core.CreditTransaction{
		ID: r.ID, CreatedAt: r.CreatedAt, OrganizationID: r.OrganizationID, Amount: r.Amount, Currency: r.Currency,
		BalanceAfter: r.BalanceAfter, Reason: r.Reason, InvoiceID: r.InvoiceID, SubscriptionID: r.SubscriptionID,
	}
}
