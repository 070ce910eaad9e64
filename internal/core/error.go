package core

import (
	"errors"
	"fmt"
	"time"
)

// Error codes. Each maps to one HTTP status in internal/httpapi; the code is what clients
// branch on, so codes are part of the contract.
const (
	EValidation        = "validation_failed"
	EMalformedJSON     = "malformed_json"
	EUnauthenticated   = "unauthenticated"
	EInsufficientScope = "insufficient_scope"
	EForbidden         = "forbidden"
	ENotFound          = "not_found"
	EMethodNotAllowed  = "method_not_allowed"
	EConflict          = "conflict"
	// EInvalidTransition: the action is not allowed from the resource's current state.
	EInvalidTransition = "invalid_state_transition"
	EPayloadTooLarge   = "payload_too_large"
	EUnprocessable     = "unprocessable"
	ERateLimited       = "rate_limited"
	EInternal          = "internal"
	ENotImplemented    = "not_implemented"
	EUnavailable       = "unavailable"

	EPlatformModeRequired = "platform_mode_required"

	EProductionGated  = "production_gated"
	EIPNotAllowed     = "ip_not_allowed"
	EOriginNotAllowed = "origin_not_allowed"
)

// OAuth 2.0 token endpoint error codes (RFC 6749 §5.2). Problems with these codes also carry
// the RFC's `error` and `error_description` fields.
const (
	EInvalidRequest       = "invalid_request"
	EInvalidClient        = "invalid_client"
	EInvalidGrant         = "invalid_grant"
	EUnauthorizedClient   = "unauthorized_client"
	EUnsupportedGrantType = "unsupported_grant_type"
	EInvalidScope         = "invalid_scope"
)

// FieldError names one offending part of a request.
type FieldError struct {
	Location string // body, query, path or header
	Pointer  string // JSON pointer into the body, or the parameter name
	Code     string // the violated rule, e.g. "required", "enum", "maxLength"
	Message  string
}

// Error is the error every service returns for outcomes a client can act on. Anything that is
// not an *Error is an internal error: logged in full, answered generically.
type Error struct {
	Code    string
	Message string
	Fields  []FieldError
	// Cause is the underlying error, for logs only; it is never shown to a client.
	Cause error
	// RetryAfter, when set, tells the client when a retry may succeed (Retry-After).
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return e.Code + ": " + e.Message + ": " + e.Cause.Error()
	}
	return e.Code + ": " + e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// Errorf builds an *Error with a formatted message that is safe to show to the client.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err, or EInternal when err is not an *Error.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// Unprocessable refuses a well-formed request for what its body field at pointer (a JSON
// pointer) names or asks: code is the rule it breaks, message says why, for people.
func Unprocessable(pointer, code, message string) error {
	return &Error{Code: EUnprocessable, Message: message,
		Fields: []FieldError{{Location: "body", Pointer: pointer, Code: code, Message: message}}}
}
