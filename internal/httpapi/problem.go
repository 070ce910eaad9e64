package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strconv"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/core"
)

// problemKind is what one error code means in HTTP.
type problemKind struct {
	status    int
	title     string
	retryable bool
}

// problemKinds maps every core error code to its status: the one table of it (docs/design.md, "Errors").
var problemKinds = map[string]problemKind{
	core.EValidation:        {http.StatusBadRequest, "The request is invalid.", false},
	core.EMalformedJSON:     {http.StatusBadRequest, "The request body is not valid JSON.", false},
	core.EUnauthenticated:   {http.StatusUnauthorized, "Authentication is required.", false},
	core.EInsufficientScope: {http.StatusForbidden, "The credential lacks a required scope.", false},
	core.EForbidden:         {http.StatusForbidden, "The operation is not allowed.", false},
	core.ENotFound:          {http.StatusNotFound, "The resource was not found.", false},
	core.EMethodNotAllowed:  {http.StatusMethodNotAllowed, "The method is not allowed on this resource.", false},
	core.EConflict:          {http.StatusConflict, "The request conflicts with the current state.", false},
	core.EInvalidTransition: {http.StatusConflict, "The action is not allowed in the current state.", false},
	core.EPayloadTooLarge:   {http.StatusRequestEntityTooLarge, "The request body is too large.", false},
	core.EUnprocessable:     {http.StatusUnprocessableEntity, "The request cannot be processed.", false},
	core.ERateLimited:       {http.StatusTooManyRequests, "Too many requests.", true},
	core.EInternal:          {http.StatusInternalServerError, "Internal server error.", true},
	core.ENotImplemented:    {http.StatusNotImplemented, "The operation is not implemented yet.", false},
	core.EUnavailable:       {http.StatusServiceUnavailable, "The service is temporarily unavailable.", true},
	core.EProductionGated:   {http.StatusForbidden, "Production traffic is gated.", false},
	core.EIPNotAllowed:      {http.StatusForbidden, "The client address is not allowed for this API key.", false},
	core.EOriginNotAllowed:  {http.StatusForbidden, "The origin is not allowed for this API key.", false},

	core.EPlatformModeRequired: {http.StatusForbidden, "Only platform organizations may do this.", false},

	core.ESpendLimitReached: {http.StatusTooManyRequests, "The spend control's monthly operation limit is reached.", false},

	core.EOrganizationSuspended:   {http.StatusForbidden, "The organization is suspended.", false},
	core.EOrganizationTerminated:  {http.StatusForbidden, "The organization is terminated.", false},
	core.EOrganizationArchived:    {http.StatusForbidden, "The organization is archived.", false},
	core.ERiskSuspended:           {http.StatusForbidden, "The organization is suspended for risk.", false},
	core.ERiskRestricted:          {http.StatusForbidden, "The organization's production traffic is restricted.", false},
	core.EOrganizationNotVerified: {http.StatusForbidden, "Production needs a verified organization.", false},
	core.EOrganizationNotActive:   {http.StatusForbidden, "Production needs an active organization.", false},
	core.ESubscriptionInactive:    {http.StatusForbidden, "The subscription to the product is not active.", false},
	core.ESubscriptionRequired:    {http.StatusForbidden, "Production traffic needs a subscription to the product.", false},

	core.EAPIKeyAlreadyRotated: {http.StatusConflict, "The API key has been rotated already.", false},
	core.EQuotaExceeded:        {http.StatusConflict, "The organization has reached a quota.", false},

	core.EIdempotencyInProgress: {http.StatusConflict, "A request with this Idempotency-Key is in progress.", true},
	core.EIdempotencyKeyReused:  {http.StatusUnprocessableEntity, "The Idempotency-Key was used for another request.", false},

	core.EInvalidRequest:       {http.StatusBadRequest, "Invalid token request.", false},
	core.EInvalidClient:        {http.StatusUnauthorized, "Client authentication failed.", false},
	core.EInvalidGrant:         {http.StatusBadRequest, "Invalid grant.", false},
	core.EUnauthorizedClient:   {http.StatusBadRequest, "The client may not use this grant.", false},
	core.EUnsupportedGrantType: {http.StatusBadRequest, "Unsupported grant type.", false},
	core.EInvalidScope:         {http.StatusBadRequest, "Invalid scope.", false},
}

// oauthCodes are the codes answered in RFC 6749 §5.2 form: the problem also carries `error`
// and `error_description`.
var oauthCodes = map[string]bool{
	core.EInvalidRequest: true, core.EInvalidClient: true, core.EInvalidGrant: true,
	core.EUnauthorizedClient: true, core.EUnsupportedGrantType: true, core.EInvalidScope: true,
}

// headerError is an error that needs response headers besides the problem, such as
// `WWW-Authenticate` on an OAuth client failure.
type headerError struct {
	error
	header http.Header
}

func (e *headerError) Unwrap() error { return e.error }

// problemTypeBase prefixes the `type` of every problem: a URI reference relative to the API's
// base address, one per code, so clients can branch on `type` or `code` alike.
const problemTypeBase = "https://api.provider.example/problems/"

// writeProblem answers err as application/problem+json. Errors that are not *core.Error are
// internal: logged in full with the request id and answered generically.
func writeProblem(w http.ResponseWriter, r *http.Request, err error) {
	var ce *core.Error
	if !errors.As(err, &ce) {
		ce = &core.Error{Code: core.EInternal, Message: "An unexpected error occurred; it has been logged.", Cause: err}
	}
	kind, ok := problemKinds[ce.Code]
	if !ok {
		kind = problemKinds[core.EInternal]
	}
	noteRequest(r.Context(), func(info *requestInfo) { info.errorCode = ce.Code })
	if kind.status >= 500 && ce.Code != core.ENotImplemented {
		logger(r.Context()).Error("request failed", "code", ce.Code, "error", err)
	}
	body := api.Problem{
		Type:      problemTypeBase + ce.Code,
		Title:     kind.title,
		Status:    kind.status,
		Detail:    ce.Message,
		Code:      ce.Code,
		RequestId: core.RequestIDFrom(r.Context()),
		Retryable: kind.retryable,
	}
	if len(ce.Fields) > 0 {
		fields := make([]api.ProblemFieldError, len(ce.Fields))
		for i, f := range ce.Fields {
			fields[i] = api.ProblemFieldError{
				Location: api.ProblemFieldErrorLocation(f.Location),
				Pointer:  f.Pointer,
				Code:     f.Code,
				Message:  f.Message,
			}
		}
		body.Errors = &fields
	}
	h := w.Header()
	var he *headerError
	if errors.As(err, &he) {
		for k, v := range he.header {
			h[k] = v
		}
	}
	h.Set("Content-Type", "application/problem+json")
	h.Set("Cache-Control", "no-store")
	if ce.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(int(math.Ceil(ce.RetryAfter.Seconds()))))
	}
	w.WriteHeader(kind.status)
	var encoded any = body
	if oauthCodes[ce.Code] {
		encoded = api.OAuthError{
			Type: body.Type, Title: body.Title, Status: body.Status, Detail: body.Detail, Code: body.Code,
			RequestId: body.RequestId, Retryable: body.Retryable, Errors: body.Errors,
			Error: api.OAuthErrorCode(ce.Code), ErrorDescription: ce.Message,
		}
	}
	if err := json.NewEncoder(w).Encode(encoded); err != nil {
		logger(r.Context()).Debug("writing problem", "error", err)
	}
}

// logger returns the request-scoped logger.
func logger(ctx context.Context) *slog.Logger {
	if info, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok && info.log != nil {
		return info.log.With(slog.String("request_id", core.RequestIDFrom(ctx)))
	}
	return slog.Default()
}
