package httpapi

import (
	"context"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/core"
)

// GetCreditBalance implements GET /v1/credit-balance.
func (s *Server) GetCreditBalance(ctx context.Context, req api.GetCreditBalanceRequestObject) (api.GetCreditBalanceResponseObject, error) {
	org, err := core.OrganizationIn(ctx, req.Params.OrganizationId, "organization_id")
	if err != nil {
		return nil, err
	}
	balance, err := s.cfg.Services.Credits.CreditBalance(ctx, org)
	if err != nil {
		return nil, err
	}
	out := api.CreditBalance{OrganizationId: balance.OrganizationID, Balances: make([]api.CreditBalanceAmount, len(balance.Balances))}
	for i, b := range balance.Balances {
		out.Balances[i] = api.CreditBalanceAmount{Currency: b.Currency, Amount: b.Amount, UpdatedAt: b.UpdatedAt}
	}
	return api.GetCreditBalance200JSONResponse{Body: out}, nil
}

// ListCreditBalanceTransactions implements GET /v1/credit-balance/transactions.
func (s *Server) ListCreditBalanceTransactions(ctx context.Context, req api.ListCreditBalanceTransactionsRequestObject) (api.ListCreditBalanceTransactionsResponseObject, error) {
	org, err := organizationParam(ctx, req.Params.OrganizationId)
	if err != nil {
		return nil, err
	}
	entries, next, err := s.cfg.Services.Credits.ListCreditTransactions(ctx, core.CreditTransactionFilter{
		OrganizationID: org, Cursor: req.Params.Cursor, Limit: valueOr(req.Params.Limit, defaultLimit),
	})
	if err != nil {
		return nil, err
	}
	items := make([]api.CreditBalanceTransaction, len(entries))
	for i, e := range entries {
		items[i] = toAPICreditTransaction(e)
	}
	return api.ListCreditBalanceTransactions200JSONResponse{Body: api.CreditBalanceTransactionList{Items: items, NextCursor: nullableFrom(next)}}, nil
}

// toAPICreditTransaction renders an entry of the credit balance's ledger: the list's items
// and the data of credit_balance.updated.
func toAPICreditTransaction(e *core.CreditTransaction) api.CreditBalanceTransaction {
	return api.CreditBalanceTransaction{
		Id: e.ID, CreatedAt: e.CreatedAt, OrganizationId: e.OrganizationID, Amount: e.Amount, Currency: e.Currency,
		BalanceAfter: e.BalanceAfter, Reason: api.CreditBalanceTransactionReason(e.Reason), InvoiceId: e.InvoiceID,
		SubscriptionId: e.SubscriptionID,
	}
}
