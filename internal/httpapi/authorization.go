package httpapi

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/provider/coreapi/internal/core"
)

// repeatedAuthorization refuses a request carrying more than one Authorization header:
// which one counts would be a guess (the first, for Go), so neither does. RFC 6750 §3.1
// calls it invalid_request, a 400; outside the token endpoint that is validation_failed.
func repeatedAuthorization(oauth bool) error {
	field := core.FieldError{Location: "header", Pointer: "Authorization", Code: "repeated",
		Message: "Send one Authorization header; this request has several."}
	err := &core.Error{Code: core.EValidation, Message: field.Message, Fields: []core.FieldError{field}}
	if oauth {
		err.Code = core.EInvalidRequest
		return err
	}
	return &headerError{error: err, header: http.Header{"Www-Authenticate": {`Bearer realm="provider-core-api", error="invalid_request"`}}}
}

// urlCredentials are the query parameters that would carry a credential in the URL, and
// the other token request parameters: Go's form parsing would merge them into the body's.
var urlCredentials = []string{"client_id", "client_secret", "access_token", "client_assertion", "password", "grant_type", "scope"}

// credentialsInQuery refuses a token request with a credential in its URL (RFC 6749 §2.3.1:
// client credentials go in the body or the Authorization header, never the query, which
// proxies and logs keep), or another parameter of the token request (§3.2: they travel in
// the body).
func credentialsInQuery(r *http.Request) error {
	if r.URL.RawQuery == "" {
		return nil
	}
	query, _ := url.ParseQuery(r.URL.RawQuery) // what parses is checked; the rest is no credential
	for name := range query {
		for _, c := range urlCredentials {
			if strings.EqualFold(name, c) {
				return core.Errorf(core.EInvalidRequest, "Token request parameters may not be sent in the URL (%s); send them in the body, credentials also with HTTP Basic.", c)
			}
		}
	}
	return nil
}

// checkScopes passes when the principal holds every scope of at least one of the
// operation's security requirements; otherwise it names the scopes of the closest one.
func checkScopes(p *core.Principal, requirements openapi3.SecurityRequirements) error {
	var closest []string
	for i, req := range requirements {
		var missing []string
		for _, scopes := range req {
			for _, s := range scopes {
				if !p.Scopes[s] {
					missing = append(missing, s)
				}
			}
		}
		if len(missing) == 0 {
			return nil
		}
		if i == 0 || len(missing) < len(closest) {
			closest = missing
		}
	}
	return core.Errorf(core.EInsufficientScope, "The credential lacks the scope(s) this operation needs: %s.", strings.Join(closest, ", "))
}
