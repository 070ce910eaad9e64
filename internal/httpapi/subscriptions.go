package httpapi

import (
	"context"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/core"
)

// ListSubscriptions implements GET /v1/subscriptions.
func (s *Server) ListSubscriptions(ctx context.Context, req api.ListSubscriptionsRequestObject) (api.ListSubscriptionsResponseObject, error) {
	org, err := organizationNamed(ctx, req.Params.OrganizationId, "organization_id")
	if err != nil {
		return nil, err
	}
	subs, err := s.cfg.Services.Subscriptions.ListSubscriptions(ctx, org)
	if err != nil {
		return nil, err
	}
	items := make([]api.Subscription, len(subs))
	for i, sub := range subs {
		items[i] = toAPISubscription(sub)
	}
	return api.ListSubscriptions200JSONResponse{Body: api.SubscriptionList{Items: items, NextCursor: nullableFrom[string](nil)}}, nil
}

// CreateSubscription implements POST /v1/subscriptions.
func (s *Server) CreateSubscription(ctx context.Context, req api.CreateSubscriptionRequestObject) (api.CreateSubscriptionResponseObject, error) {
	b := req.Body
	var in core.SubscriptionCreate
	var err error
	if in.OrganizationID, err = organizationNamed(ctx, b.OrganizationId, "/organization_id"); err != nil {
		return nil, err
	}
	if in.ProductID, err = core.ProductNamed(b.ProductId); err != nil {
		return nil, err
	}
	if in.PlanID, err = core.PlanNamed(b.PlanId); err != nil {
		return nil, err
	}
	if b.RequestedConfiguration != nil {
		in.RequestedConfiguration = *b.RequestedConfiguration
	}
	sub, err := s.cfg.Services.Subscriptions.CreateSubscription(ctx, in)
	if err != nil {
		return nil, err
	}
	return api.CreateSubscription201JSONResponse{Body: toAPISubscription(sub)}, nil
}

// GetSubscription implements GET /v1/subscriptions/{id}.
func (s *Server) GetSubscription(ctx context.Context, req api.GetSubscriptionRequestObject) (api.GetSubscriptionResponseObject, error) {
	sub, err := s.cfg.Services.Subscriptions.FindSubscriptionByID(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.GetSubscription200JSONResponse{Body: toAPISubscription(sub)}, nil
}

// SelectSubscriptionPlan implements POST /v1/subscriptions/{id}/select-plan.
func (s *Server) SelectSubscriptionPlan(ctx context.Context, req api.SelectSubscriptionPlanRequestObject) (api.SelectSubscriptionPlanResponseObject, error) {
	plan, err := core.PlanNamed(req.Body.PlanId)
	if err != nil {
		return nil, err
	}
	sel, err := s.cfg.Services.Subscriptions.SelectPlan(ctx, req.Id, plan)
	if err != nil {
		return nil, err
	}
	var inv *api.BillingInvoice
	if sel.Invoice != nil {
		v := toAPIBillingInvoice(sel.Invoice)
		inv = &v
	}
	return api.SelectSubscriptionPlan200JSONResponse{Body: api.PlanSelection{
		Subscription: toAPISubscription(sel.Subscription),
		Invoice:      nullableFrom(inv),
		Activation:   api.PlanActivation(sel.Activation),
	}}, nil
}

// ChangeSubscriptionPlan implements POST /v1/subscriptions/{id}/change-plan.
func (s *Server) ChangeSubscriptionPlan(ctx context.Context, req api.ChangeSubscriptionPlanRequestObject) (api.ChangeSubscriptionPlanResponseObject, error) {
	plan, err := core.PlanNamed(req.Body.PlanId)
	if err != nil {
		return nil, err
	}
	sub, err := s.cfg.Services.Subscriptions.ChangePlan(ctx, req.Id, plan)
	if err != nil {
		return nil, err
	}
	return api.ChangeSubscriptionPlan200JSONResponse{Body: toAPISubscription(sub)}, nil
}

// CancelSubscription implements POST /v1/subscriptions/{id}/cancel.
func (s *Server) CancelSubscription(ctx context.Context, req api.CancelSubscriptionRequestObject) (api.CancelSubscriptionResponseObject, error) {
	sub, err := s.cfg.Services.Subscriptions.Cancel(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.CancelSubscription200JSONResponse{Body: toAPISubscription(sub)}, nil
}

// ReactivateSubscription implements POST /v1/subscriptions/{id}/reactivate.
func (s *Server) ReactivateSubscription(ctx context.Context, req api.ReactivateSubscriptionRequestObject) (api.ReactivateSubscriptionResponseObject, error) {
	sub, err := s.cfg.Services.Subscriptions.Reactivate(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.ReactivateSubscription200JSONResponse{Body: toAPISubscription(sub)}, nil
}

// SuspendSubscription implements POST /v1/subscriptions/{id}/suspend.
func (s *Server) SuspendSubscription(ctx context.Context, req api.SuspendSubscriptionRequestObject) (api.SuspendSubscriptionResponseObject, error) {
	sub, err := s.cfg.Services.Subscriptions.Suspend(ctx, req.Id, reasonOf(req.Body))
	if err != nil {
		return nil, err
	}
	return api.SuspendSubscription200JSONResponse{Body: toAPISubscription(sub)}, nil
}

// ResumeSubscription implements POST /v1/subscriptions/{id}/resume.
func (s *Server) ResumeSubscription(ctx context.Context, req api.ResumeSubscriptionRequestObject) (api.ResumeSubscriptionResponseObject, error) {
	sub, err := s.cfg.Services.Subscriptions.Resume(ctx, req.Id, reasonOf(req.Body))
	if err != nil {
		return nil, err
	}
	return api.ResumeSubscription200JSONResponse{Body: toAPISubscription(sub)}, nil
}

// TerminateSubscription implements POST /v1/subscriptions/{id}/terminate.
func (s *Server) TerminateSubscription(ctx context.Context, req api.TerminateSubscriptionRequestObject) (api.TerminateSubscriptionResponseObject, error) {
	sub, err := s.cfg.Services.Subscriptions.Terminate(ctx, req.Id, reasonOf(req.Body))
	if err != nil {
		return nil, err
	}
	return api.TerminateSubscription200JSONResponse{Body: toAPISubscription(sub)}, nil
}

// reasonOf is the reason of an optional reason body, "" when there is none.
func reasonOf(b *api.SubscriptionReasonRequest) string {
	if b == nil || b.Reason == nil {
		return ""
	}
	return *b.Reason
}

func toAPISubscription(s *core.Subscription) api.Subscription {
	return api.Subscription{
		Id:                    s.ID,
		CreatedAt:             s.CreatedAt,
		UpdatedAt:             s.UpdatedAt,
		OrganizationId:        s.OrganizationID.String(),
		ProductId:             s.ProductID.String(),
		PlanId:                s.PlanID.String(),
		CommercialStatus:      api.SubscriptionCommercialStatus(s.CommercialStatus),
		ServiceStatus:         api.SubscriptionServiceStatus(s.ServiceStatus),
		BillingStatus:         api.SubscriptionBillingStatus(s.BillingStatus),
		ProvisioningRequestId: nullableFrom(s.ProvisioningRequestID),
		StartedAt:             s.StartedAt,
		RenewsAt:              nullableFrom(s.RenewsAt),
		SuspendedAt:           nullableFrom(s.SuspendedAt),
		TerminatedAt:          nullableFrom(s.TerminatedAt),
	}
}

func toAPIBillingInvoice(inv *core.BillingInvoice) api.BillingInvoice {
	return api.BillingInvoice{
		Id:             inv.ID,
		CreatedAt:      inv.CreatedAt,
		UpdatedAt:      inv.UpdatedAt,
		OrganizationId: inv.OrganizationID.String(),
		BillingPeriod: api.BillingPeriod{
			Start: openapi_types.Date{Time: inv.PeriodStart},
			End:   openapi_types.Date{Time: inv.PeriodEnd},
		},
		Subtotal:          inv.Subtotal,
		Discount:          inv.Discount,
		Tax:               inv.Tax,
		Total:             inv.Total,
		Currency:          inv.Currency,
		Status:            api.BillingInvoiceStatus(inv.Status),
		TaxDocumentStatus: api.TaxDocumentStatus(inv.TaxDocumentStatus),
		IssuedAt:          nullableFrom(inv.IssuedAt),
		DueAt:             nullableFrom(inv.DueAt),
		PaidAt:            nullableFrom(inv.PaidAt),
	}
}
