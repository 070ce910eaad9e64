package httpapi

import (
	"context"

	"github.com/oapi-codegen/nullable"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/core"
)

// ListInvoices implements GET /v1/invoices.
func (s *Server) ListInvoices(ctx context.Context, req api.ListInvoicesRequestObject) (api.ListInvoicesResponseObject, error) {
	org, err := organizationParam(ctx, req.Params.OrganizationId)
	if err != nil {
		return nil, err
	}
	invoices, next, err := s.cfg.Services.Invoices.ListInvoices(ctx, core.InvoiceFilter{
		OrganizationID: org,
		SubscriptionID: req.Params.SubscriptionId,
		Status:         enumString(req.Params.Status),
		Cursor:         req.Params.Cursor,
		Limit:          valueOr(req.Params.Limit, defaultLimit),
	})
	if err != nil {
		return nil, err
	}
	items := make([]nullable.Nullable[api.BillingInvoice], len(invoices))
	for i, inv := range invoices {
		items[i] = nullable.NewNullableWithValue(toAPIBillingInvoice(inv))
	}
	return api.ListInvoices200JSONResponse{Body: api.BillingInvoiceList{Items: items, NextCursor: nullableFrom(next)}}, nil
}

// GetInvoice implements GET /v1/invoices/{id}.
func (s *Server) GetInvoice(ctx context.Context, req api.GetInvoiceRequestObject) (api.GetInvoiceResponseObject, error) {
	inv, err := s.cfg.Services.Invoices.FindInvoice(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.GetInvoice200JSONResponse{Body: toAPIBillingInvoice(inv)}, nil
}

// ListInvoiceLines implements GET /v1/invoices/{id}/lines.
func (s *Server) ListInvoiceLines(ctx context.Context, req api.ListInvoiceLinesRequestObject) (api.ListInvoiceLinesResponseObject, error) {
	inv, err := s.cfg.Services.Invoices.FindInvoice(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.ListInvoiceLines200JSONResponse{Body: toAPIInvoiceLines(inv)}, nil
}

// GetUpcomingInvoice implements GET /v1/subscriptions/{id}/upcoming-invoice.
func (s *Server) GetUpcomingInvoice(ctx context.Context, req api.GetUpcomingInvoiceRequestObject) (api.GetUpcomingInvoiceResponseObject, error) {
	inv, err := s.cfg.Services.Subscriptions.UpcomingInvoice(ctx, req.Id, req.Params.PlanId)
	if err != nil {
		return nil, err
	}
	return api.GetUpcomingInvoice200JSONResponse{Body: toAPIBillingInvoice(inv)}, nil
}

// ListUpcomingInvoiceLines implements GET /v1/subscriptions/{id}/upcoming-invoice/lines.
func (s *Server) ListUpcomingInvoiceLines(ctx context.Context, req api.ListUpcomingInvoiceLinesRequestObject) (api.ListUpcomingInvoiceLinesResponseObject, error) {
	inv, err := s.cfg.Services.Subscriptions.UpcomingInvoice(ctx, req.Id, req.Params.PlanId)
	if err != nil {
		return nil, err
	}
	return api.ListUpcomingInvoiceLines200JSONResponse{Body: toAPIInvoiceLines(inv)}, nil
}

// toAPIInvoiceLines is every line of inv, in one page.
func toAPIInvoiceLines(inv *core.BillingInvoice) api.BillingInvoiceLineList {
	items := make([]api.BillingInvoiceLine, len(inv.Lines))
	for i, l := range inv.Lines {
		items[i] = api.BillingInvoiceLine{
			Description:   l.Description,
			ComponentType: api.BillingInvoiceLineComponentType(l.ComponentType),
			PriceId:       nullableFrom(l.PriceID),
			Period:        api.BillingPeriod{Start: openapi_types.Date{Time: l.PeriodStart}, End: openapi_types.Date{Time: l.PeriodEnd}},
			Quantity:      l.Quantity,
			UnitAmount:    l.UnitAmount,
			Amount:        l.Amount,
			Tax:           l.Tax,
			Proration:     l.Proration,
		}
	}
	return api.BillingInvoiceLineList{Items: items, NextCursor: null[string]()}
}

// CreateInvoicePayment implements POST /v1/invoices/{id}/payments.
func (s *Server) CreateInvoicePayment(ctx context.Context, req api.CreateInvoicePaymentRequestObject) (api.CreateInvoicePaymentResponseObject, error) {
	pay, err := s.cfg.Services.Invoices.PayInvoice(ctx, req.Id, req.Body.Amount, string(req.Body.PaymentMethod))
	if err != nil {
		return nil, err
	}
	return api.CreateInvoicePayment201JSONResponse{Body: toAPIPayment(pay)}, nil
}

// VoidInvoice implements POST /v1/invoices/{id}/void.
func (s *Server) VoidInvoice(ctx context.Context, req api.VoidInvoiceRequestObject) (api.VoidInvoiceResponseObject, error) {
	inv, err := s.cfg.Services.Invoices.VoidInvoice(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.VoidInvoice200JSONResponse{Body: toAPIBillingInvoice(inv)}, nil
}

// MarkInvoiceUncollectible implements POST /v1/invoices/{id}/mark-uncollectible.
func (s *Server) MarkInvoiceUncollectible(ctx context.Context, req api.MarkInvoiceUncollectibleRequestObject) (api.MarkInvoiceUncollectibleResponseObject, error) {
	inv, err := s.cfg.Services.Invoices.MarkInvoiceUncollectible(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.MarkInvoiceUncollectible200JSONResponse{Body: toAPIBillingInvoice(inv)}, nil
}

// ListPayments implements GET /v1/payments.
func (s *Server) ListPayments(ctx context.Context, req api.ListPaymentsRequestObject) (api.ListPaymentsResponseObject, error) {
	org, err := organizationParam(ctx, req.Params.OrganizationId)
	if err != nil {
		return nil, err
	}
	payments, next, err := s.cfg.Services.Invoices.ListPayments(ctx, core.PaymentFilter{
		OrganizationID: org,
		InvoiceID:      req.Params.InvoiceId,
		Cursor:         req.Params.Cursor,
		Limit:          valueOr(req.Params.Limit, defaultLimit),
	})
	if err != nil {
		return nil, err
	}
	items := make([]api.Payment, len(payments))
	for i, p := range payments {
		items[i] = toAPIPayment(p)
	}
	return api.ListPayments200JSONResponse{Body: api.PaymentList{Items: items, NextCursor: nullableFrom(next)}}, nil
}

// GetPayment implements GET /v1/payments/{id}.
func (s *Server) GetPayment(ctx context.Context, req api.GetPaymentRequestObject) (api.GetPaymentResponseObject, error) {
	pay, err := s.cfg.Services.Invoices.FindPayment(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.GetPayment200JSONResponse{Body: toAPIPayment(pay)}, nil
}

func toAPIPayment(p *core.Payment) api.Payment {
	return api.Payment{
		Id:             p.ID,
		CreatedAt:      p.CreatedAt,
		OrganizationId: p.OrganizationID,
		InvoiceId:      p.InvoiceID,
		Amount:         p.Amount,
		Currency:       p.Currency,
		PaymentMethod:  api.PaymentMethodToken(p.PaymentMethod),
		Status:         api.PaymentStatus(p.Status),
		FailureCode:    nullableFrom(p.FailureCode),
		FailureMessage: nullableFrom(p.FailureMessage),
	}
}
