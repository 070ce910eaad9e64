package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/go-chi/chi/v5"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/metrics"
)

// maxBodyBytes bounds every request body.
const maxBodyBytes = 1 << 20

// operation is one operation of the document as the gate uses it.
type operation struct {
	// security is what the document requires: any one requirement, all scopes of it.
	security openapi3.SecurityRequirements
	// oauthErrors marks operations whose errors follow RFC 6749 §5.2 (x-error-format: oauth2).
	oauthErrors bool
	// route is what kin-openapi validates parameters and body against. Its operation is a
	// copy without security: the gate checks credentials and scopes itself, before reading
	// the body, which kin-openapi's security check would read (and buffer) once more.
	route *routers.Route
	// deprecation holds the headers of an operation the document marks deprecated.
	deprecation *deprecationHeaders
}

// deprecationHeaders tell clients that an operation is deprecated (RFC 9745 Deprecation)
// and, when the document gives one, when it stops working (RFC 8594 Sunset).
type deprecationHeaders struct {
	deprecation string // "@<unix seconds>" from x-deprecated-at, or "true" without a date
	sunset      string // an HTTP-date from x-sunset, or "" when none is announced
}

// deprecationOf derives the headers of op from the document: `deprecated: true`, with the
// optional extensions `x-deprecated-at` (when it was deprecated) and `x-sunset` (when it
// will be removed), each a date (2006-01-02) or a date-time (RFC 3339).
func deprecationOf(op *openapi3.Operation) (*deprecationHeaders, error) {
	if !op.Deprecated {
		return nil, nil
	}
	h := &deprecationHeaders{deprecation: "true"}
	if v, ok := op.Extensions["x-deprecated-at"]; ok {
		t, err := documentDate(v)
		if err != nil {
			return nil, fmt.Errorf("x-deprecated-at: %w", err)
		}
		h.deprecation = fmt.Sprintf("@%d", t.Unix())
	}
	if v, ok := op.Extensions["x-sunset"]; ok {
		t, err := documentDate(v)
		if err != nil {
			return nil, fmt.Errorf("x-sunset: %w", err)
		}
		h.sunset = t.UTC().Format(http.TimeFormat)
	}
	return h, nil
}

func documentDate(v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, fmt.Errorf("%v is not a date string", v)
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither a date (2006-01-02) nor an RFC 3339 date-time", s)
	}
	return t, nil
}

func (h *deprecationHeaders) set(header http.Header) {
	header.Set("Deprecation", h.deprecation)
	if h.sunset != "" {
		header.Set("Sunset", h.sunset)
	}
}

// contract enforces openapi.yaml on every request before any handler runs: it finds the
// operation (404/405 otherwise), authenticates when the operation declares security (401),
// and lets kin-openapi check scopes (403), parameters and body (400). Everything is derived
// from the document, so a new operation is enforced without code here.
type contract struct {
	doc     *openapi3.T
	finder  *chi.Mux              // matches a path to its template
	routes  map[string]*operation // "METHOD /template" -> operation
	methods map[string][]string   // template -> allowed methods
	auth    Authenticator
	options *openapi3filter.Options
	limits  *rateLimits
	// productionEnabled lets production keys through; while false, production traffic is
	// gated (403 production_gated).
	productionEnabled bool
	metrics           *metrics.Metrics
}

func newContract(doc *openapi3.T, auth Authenticator, productionEnabled bool, m *metrics.Metrics) (*contract, error) {
	c := &contract{
		doc:               doc,
		finder:            chi.NewMux(),
		routes:            map[string]*operation{},
		methods:           map[string][]string{},
		auth:              auth,
		limits:            newRateLimits(),
		productionEnabled: productionEnabled,
		metrics:           m,
	}
	c.options = &openapi3filter.Options{
		MultiError:                        true,
		RejectWhenRequestBodyNotSpecified: true,
	}
	noop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		c.finder.Handle(path, noop)
		for method, op := range item.Operations() {
			security := doc.Security
			if op.Security != nil {
				security = *op.Security
			}
			unsecured := *op
			unsecured.Security = &openapi3.SecurityRequirements{}
			deprecation, err := deprecationOf(op)
			if err != nil {
				return nil, fmt.Errorf("httpapi: %s %s: %w", method, path, err)
			}
			c.routes[method+" "+path] = &operation{
				security:    security,
				oauthErrors: op.Extensions["x-error-format"] == "oauth2",
				route:       &routers.Route{Spec: doc, Path: path, PathItem: item, Method: method, Operation: &unsecured},
				deprecation: deprecation,
			}
			c.methods[path] = append(c.methods[path], method)
		}
		sort.Strings(c.methods[path])
	}
	return c, nil
}

func (c *contract) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rctx := chi.NewRouteContext()
		if !c.finder.Match(rctx, http.MethodGet, r.URL.Path) {
			writeProblem(w, r, core.Errorf(core.ENotFound, "No operation exists at %s.", r.URL.Path))
			return
		}
		template := rctx.RoutePattern()
		op, ok := c.routes[r.Method+" "+template]
		if !ok {
			w.Header().Set("Allow", strings.Join(c.methods[template], ", "))
			writeProblem(w, r, core.Errorf(core.EMethodNotAllowed, "%s is not allowed on %s.", r.Method, template))
			return
		}
		ctx := r.Context()
		setRoute(ctx, template)
		if op.deprecation != nil {
			// On every answer of the operation, errors included: a client learns of the
			// deprecation whatever it sends.
			op.deprecation.set(w.Header())
		}

		if len(op.security) > 0 {
			p, err := c.auth.Authenticate(ctx, r)
			if err != nil {
				w.Header().Set("WWW-Authenticate", `Bearer realm="provider-core-api"`)
				writeProblem(w, r, err)
				return
			}
			noteRequest(ctx, func(info *requestInfo) { info.principal = p })
			if err := c.enforceRestrictions(w, r, p); err != nil {
				writeProblem(w, r, err)
				return
			}
			if err := checkScopes(p, op.security); err != nil {
				writeProblem(w, r, err)
				return
			}
			ctx = core.WithPrincipal(ctx, p)
		}
		r = r.WithContext(ctx)
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		}

		params := make(map[string]string, len(rctx.URLParams.Keys))
		for i, k := range rctx.URLParams.Keys {
			params[k] = rctx.URLParams.Values[i]
		}
		if err := storableParameters(r, params, op.route.Operation.Parameters); err != nil {
			writeProblem(w, r, err)
			return
		}
		err := openapi3filter.ValidateRequest(ctx, &openapi3filter.RequestValidationInput{
			Request:    r,
			PathParams: params,
			Route:      op.route,
			Options:    c.options,
		})
		if err != nil {
			err = requestProblem(err)
			if op.oauthErrors {
				err = asOAuthError(err)
			}
			writeProblem(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// storableParameters refuses path, query and header parameters that are not valid UTF-8
// or hold a NUL character: no parameter of the contract can mean either, and PostgreSQL
// stores neither (a query naming one would fail as a 500).
func storableParameters(r *http.Request, path map[string]string, declared openapi3.Parameters) error {
	var fields []core.FieldError
	bad := func(in, name, v string) {
		if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
			fields = append(fields, core.FieldError{Location: in, Pointer: name, Code: "format",
				Message: fmt.Sprintf("%s parameter %q must be valid UTF-8 without NUL characters.", in, name)})
		}
	}
	for name, v := range path {
		bad("path", name, v)
	}
	query := r.URL.Query()
	names := make([]string, 0, len(query))
	for name := range query {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, v := range query[name] {
			bad("query", name, v)
		}
	}
	for _, p := range declared {
		if p.Value != nil && p.Value.In == "header" {
			for _, v := range r.Header.Values(p.Value.Name) {
				bad("header", p.Value.Name, v)
			}
		}
	}
	if len(fields) == 0 {
		return nil
	}
	return &core.Error{Code: core.EValidation, Message: fields[0].Message, Fields: fields}
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

// requestProblem turns kin-openapi's validation errors into one client error naming every
// offending field.
func requestProblem(err error) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return core.Errorf(core.EPayloadTooLarge, "The request body exceeds %d bytes.", maxBodyBytes)
	}
	var errs []error
	var multi openapi3.MultiError
	if errors.As(err, &multi) {
		errs = multi
	} else {
		errs = []error{err}
	}
	var fields []core.FieldError
	for _, e := range errs {
		var re *openapi3filter.RequestError
		if !errors.As(e, &re) {
			return e // not an input problem: internal
		}
		var nul *unstorableText
		if errors.As(re.Err, &nul) {
			for _, p := range nul.pointers {
				fields = append(fields, core.FieldError{Location: "body", Pointer: p, Code: "format", Message: nulText})
			}
			continue
		}
		var null *nullNotAllowed
		if errors.As(re.Err, &null) {
			for _, p := range null.pointers {
				fields = append(fields, core.FieldError{Location: "body", Pointer: p, Code: "nullable",
					Message: fmt.Sprintf("Field %s may not be null; leave it out for its default.", p)})
			}
			continue
		}
		var parseErr *openapi3filter.ParseError
		if re.RequestBody != nil && errors.As(re.Err, &parseErr) {
			return &core.Error{Code: core.EMalformedJSON, Message: "The request body could not be parsed as JSON: " + parseErr.Reason + "."}
		}
		fields = append(fields, fieldErrors(re)...)
	}
	msg := "The request does not match the API contract."
	switch {
	case len(fields) == 1:
		msg = fields[0].Message
	case len(fields) > 1:
		msg = fmt.Sprintf("The request has %d invalid fields; see errors.", len(fields))
	}
	return &core.Error{Code: core.EValidation, Message: msg, Fields: fields}
}

// fieldErrors lists what one kin-openapi request error says about the input.
func fieldErrors(re *openapi3filter.RequestError) []core.FieldError {
	if re.Parameter != nil {
		f := core.FieldError{Location: re.Parameter.In, Pointer: re.Parameter.Name, Code: "invalid"}
		var se *openapi3.SchemaError
		switch {
		case errors.Is(re.Err, openapi3filter.ErrInvalidRequired):
			f.Code, f.Message = "required", fmt.Sprintf("%s parameter %q is required.", re.Parameter.In, re.Parameter.Name)
		case errors.As(re.Err, &se):
			f.Code, f.Message = ruleCode(se.SchemaField), fmt.Sprintf("%s parameter %q %s.", re.Parameter.In, re.Parameter.Name, se.Reason)
		default:
			f.Message = fmt.Sprintf("%s parameter %q is invalid.", re.Parameter.In, re.Parameter.Name)
		}
		return []core.FieldError{f}
	}
	if re.RequestBody == nil {
		return []core.FieldError{{Location: "body", Code: "not_allowed", Message: "This operation takes no request body."}}
	}
	if re.Err == nil || errors.Is(re.Err, openapi3filter.ErrInvalidRequired) {
		// A missing body, or a body of a media type the operation does not accept.
		if errors.Is(re.Err, openapi3filter.ErrInvalidRequired) {
			return []core.FieldError{{Location: "body", Pointer: "", Code: "required", Message: "A request body is required."}}
		}
		if strings.HasPrefix(re.Reason, "header Content-Type") {
			return []core.FieldError{{Location: "header", Pointer: "Content-Type", Code: "content_type", Message: "Content-Type must be application/json."}}
		}
		return []core.FieldError{{Location: "body", Code: "invalid", Message: "The request body is invalid: " + re.Reason + "."}}
	}
	var out []core.FieldError
	var multi openapi3.MultiError
	schemaErrs := []error{re.Err}
	if errors.As(re.Err, &multi) {
		schemaErrs = multi
	}
	for _, e := range schemaErrs {
		var se *openapi3.SchemaError
		if !errors.As(e, &se) {
			out = append(out, core.FieldError{Location: "body", Code: "invalid", Message: "The request body is invalid."})
			continue
		}
		out = append(out, schemaFieldError(se))
	}
	return out
}

// unknownProperty matches kin-openapi's reason for a property additionalProperties refuses.
var unknownProperty = regexp.MustCompile(`^property "(.*)" is unsupported$`)

// schemaFieldError describes one body schema violation with a pointer to the offending value
// and a stable snake_case rule code.
func schemaFieldError(se *openapi3.SchemaError) core.FieldError {
	pointer := ""
	if parts := se.JSONPointer(); len(parts) > 0 {
		pointer = "/" + strings.Join(escapePointer(parts), "/")
	}
	f := core.FieldError{Location: "body", Pointer: pointer, Code: ruleCode(se.SchemaField)}
	where := "Field " + pointer
	if pointer == "" {
		where = "The body"
	}
	switch {
	case se.SchemaField == "required":
		f.Message = fmt.Sprintf("%s is required.", where)
	case unknownProperty.MatchString(se.Reason):
		name := unknownProperty.FindStringSubmatch(se.Reason)[1]
		f.Pointer = pointer + "/" + escapePointer([]string{name})[0]
		f.Code = "unknown_property"
		f.Message = fmt.Sprintf("Field %s is not a property of this object.", f.Pointer)
	default:
		f.Message = fmt.Sprintf("%s: %s.", where, se.Reason)
	}
	return f
}

// ruleCode turns a JSON Schema keyword into the snake_case code of a field error.
func ruleCode(keyword string) string {
	var b strings.Builder
	for i, r := range keyword {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	if b.Len() == 0 {
		return "invalid"
	}
	return b.String()
}

func escapePointer(parts []string) []string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~", "~0"), "/", "~1")
	}
	return out
}

// asOAuthError restates an input problem of the token endpoint in RFC 6749 §5.2 terms: a
// grant type other than client_credentials is unsupported_grant_type, anything else
// invalid_request. The field errors stay.
func asOAuthError(err error) error {
	var ce *core.Error
	if !errors.As(err, &ce) || (ce.Code != core.EValidation && ce.Code != core.EMalformedJSON) {
		return err
	}
	out := *ce
	out.Code = core.EInvalidRequest
	for _, f := range ce.Fields {
		if f.Pointer == "/grant_type" && f.Code == "enum" {
			out.Code = core.EUnsupportedGrantType
			out.Message = "Only the client_credentials grant type is supported."
		}
	}
	return &out
}
