package httpapi

import (
	"context"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/core"
)

// CreateGrowthEvent implements POST /v1/growth/events.
func (s *Server) CreateGrowthEvent(ctx context.Context, req api.CreateGrowthEventRequestObject) (api.CreateGrowthEventResponseObject, error) {
	b := req.Body
	properties, err := flatObject(b.Properties)
	if err != nil {
		return nil, err
	}
	org, err := core.GrowthOrganizationIn(ctx, b.OrganizationId, "/organization_id")
	if err != nil {
		return nil, err
	}
	err = s.cfg.Services.Growth.RecordGrowthEvent(ctx, core.GrowthEvent{
		EventName:           string(b.EventName),
		OrganizationID:      org,
		OccurredAt:          deref(b.OccurredAt),
		AnonymousID:         b.AnonymousId,
		Product:             enumPtr(b.Product),
		TrafficType:         enumOr(b.TrafficType),
		Source:              b.Source,
		Medium:              b.Medium,
		Campaign:            b.Campaign,
		LandingPage:         b.LandingPage,
		PagePath:            b.PagePath,
		Language:            enumPtr(b.Language),
		DeviceClass:         enumPtr(b.DeviceClass),
		UseCase:             b.UseCase,
		DeveloperLanguage:   b.DeveloperLanguage,
		ExperimentID:        b.ExperimentId,
		ExperimentVariant:   b.ExperimentVariant,
		ElapsedFromSignupMs: b.ElapsedFromSignupMs,
		Properties:          properties,
	})
	if err != nil {
		return nil, err
	}
	return api.CreateGrowthEvent202JSONResponse{Body: api.GrowthEventAccepted{Accepted: true}}, nil
}

// GetGrowthSummary implements GET /v1/growth/summary.
func (s *Server) GetGrowthSummary(ctx context.Context, req api.GetGrowthSummaryRequestObject) (api.GetGrowthSummaryResponseObject, error) {
	var org *string
	if raw := req.Params.OrganizationId; raw != nil {
		key, err := core.GrowthOrganizationIn(ctx, *raw, "organization_id")
		if err != nil {
			return nil, err
		}
		org = &key
	}
	sum, err := s.cfg.Services.Growth.GrowthSummary(ctx, core.GrowthSummaryFilter{
		Since:                  req.Params.Since,
		IncludeInternalTraffic: deref(req.Params.IncludeInternalTraffic),
		OrganizationID:         org,
	})
	if err != nil {
		return nil, err
	}
	return api.GetGrowthSummary200JSONResponse{Body: toAPIGrowthSummary(sum)}, nil
}

func toAPIGrowthSummary(s *core.GrowthSummary) api.GrowthSummary {
	out := api.GrowthSummary{
		Since:                   s.Since,
		Until:                   s.Until,
		IncludedTrafficTypes:    make([]api.TrafficType, len(s.IncludedTrafficTypes)),
		TotalEvents:             s.TotalEvents,
		UniqueOrganizations:     s.UniqueOrganizations,
		UniqueAnonymousVisitors: s.UniqueAnonymousVisitors,
		EventCounts:             make([]api.GrowthEventCount, len(s.EventCounts)),
		Funnel:                  make([]api.GrowthFunnelStep, len(s.Funnel)),
		ByProduct:               make([]api.GrowthProductBreakdown, len(s.ByProduct)),
		BySource:                make([]api.GrowthSourceBreakdown, len(s.BySource)),
	}
	for i, t := range s.IncludedTrafficTypes {
		out.IncludedTrafficTypes[i] = api.TrafficType(t)
	}
	for i, c := range s.EventCounts {
		out.EventCounts[i] = api.GrowthEventCount{EventName: api.GrowthEventName(*c.Key), Count: c.Count}
	}
	for i, st := range s.Funnel {
		out.Funnel[i] = api.GrowthFunnelStep{
			Position: st.Position, EventName: api.GrowthEventName(st.EventName), Count: st.Count,
			ConversionFromPrevious: nullableFrom(st.ConversionFromPrevious),
			ConversionFromFirst:    nullableFrom(st.ConversionFromFirst),
		}
	}
	for i, c := range s.ByProduct {
		out.ByProduct[i] = api.GrowthProductBreakdown{Product: api.SpendProduct(*c.Key), Count: c.Count}
	}
	for i, c := range s.BySource {
		out.BySource[i] = api.GrowthSourceBreakdown{Source: nullableFrom(c.Key), Count: c.Count}
	}
	return out
}

// enumPtr converts an optional enum field to an optional string.
func enumPtr[T ~string](v *T) *string {
	if v == nil {
		return nil
	}
	s := string(*v)
	return &s
}
