package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/go-chi/chi/v5"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/jsoncheck"
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
	// body checks a JSON body in one pass (nil: the operation takes none, or its schema
	// uses a keyword jsoncheck leaves to kin-openapi). A body it accepts needs no
	// kin-openapi body validation; any other body gets kin-openapi's, which decides.
	body *jsoncheck.Checker
	// jsonSchema is the schema of a JSON body (nil: the operation takes none).
	jsonSchema *openapi3.Schema
	// parameters check every parameter of the operation without kin-openapi (nil: some
	// parameter's schema or style is one jsoncheck leaves to kin-openapi).
	parameters []parameterCheck
}

// routeKey names an operation: its method and its path template.
type routeKey struct{ method, template string }

// parameterCheck is one declared parameter as the gate's fast path checks it.
type parameterCheck struct {
	in, name string // name is canonical for headers
	required bool
	check    *jsoncheck.Parameter
	declared *openapi3.Parameter
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
	finder  *chi.Mux // matches a path to its template
	routes  map[routeKey]*operation
	methods map[string][]string // template -> allowed methods
	auth    Authenticator
	options *openapi3filter.Options
	// parameterOptions validate parameters alone, for a body jsoncheck has accepted.
	parameterOptions *openapi3filter.Options
	limits           *rateLimits
	// productionEnabled lets production keys through; while false, production traffic is
	// gated (403 production_gated).
	productionEnabled bool
	metrics           *metrics.Metrics
}

func newContract(doc *openapi3.T, auth Authenticator, productionEnabled bool, m *metrics.Metrics) (*contract, error) {
	c := &contract{
		doc:               doc,
		finder:            chi.NewMux(),
		routes:            map[routeKey]*operation{},
		methods:           map[string][]string{},
		auth:              auth,
		limits:            newRateLimits(),
		productionEnabled: productionEnabled,
		metrics:           m,
	}
	c.options = &openapi3filter.Options{
		MultiError:                        true,
		RejectWhenRequestBodyNotSpecified: true,
		// Handlers apply the documented defaults themselves; kin-openapi would otherwise
		// write them into the body and encode it again for every request.
		SkipSettingDefaults: true,
	}
	parameterOptions := *c.options
	parameterOptions.ExcludeRequestBody = true
	c.parameterOptions = &parameterOptions
	ConfigureValidation() // jsoncheck reads the registered string formats when compiling
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
			body, err := bodyChecker(op)
			if err != nil {
				return nil, fmt.Errorf("httpapi: %s %s: %w", method, path, err)
			}
			parameters, err := parameterCheckers(item.Parameters, op.Parameters)
			if err != nil {
				return nil, fmt.Errorf("httpapi: %s %s: %w", method, path, err)
			}
			c.routes[routeKey{method, path}] = &operation{
				parameters:  parameters,
				security:    security,
				oauthErrors: op.Extensions["x-error-format"] == "oauth2",
				route:       &routers.Route{Spec: doc, Path: path, PathItem: item, Method: method, Operation: &unsecured},
				deprecation: deprecation,
				body:        body,
				jsonSchema:  jsonSchema(op),
			}
			c.methods[path] = append(c.methods[path], method)
		}
		sort.Strings(c.methods[path])
	}
	return c, nil
}

// routeContexts recycles chi's route contexts: the one the gate matches paths with, and the
// one the routers route a request with (withRequestContext). Nothing keeps one after its
// request is answered.
var routeContexts = sync.Pool{New: func() any { return chi.NewRouteContext() }}

func (c *contract) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rctx := routeContexts.Get().(*chi.Context)
		rctx.Reset()
		defer routeContexts.Put(rctx)
		if !c.finder.Match(rctx, http.MethodGet, r.URL.Path) {
			writeProblem(w, r, core.Errorf(core.ENotFound, "No operation exists at %s.", r.URL.Path))
			return
		}
		template := rctx.RoutePattern()
		op, ok := c.routes[routeKey{r.Method, template}]
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

		if len(r.Header.Values("Authorization")) > 1 {
			writeProblem(w, r, repeatedAuthorization(op.oauthErrors))
			return
		}
		if op.oauthErrors {
			if err := credentialsInQuery(r); err != nil {
				writeProblem(w, r, err)
				return
			}
		}
		if len(op.security) > 0 {
			p, err := c.auth.Authenticate(ctx, r)
			if err != nil {
				if core.ErrorCode(err) == core.EUnauthenticated { // not on 429: see authFailures
					w.Header().Set("WWW-Authenticate", `Bearer realm="provider-core-api"`)
				}
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
			r = r.WithContext(ctx)
		}
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		}

		if err := storableParameters(r, rctx.URLParams, op.route.Operation.Parameters); err != nil {
			writeProblem(w, r, err)
			return
		}
		// The fast path: jsoncheck shows parameters and body valid without kin-openapi.
		// Whatever it cannot show valid, kin-openapi validates and explains.
		bodyValid := c.bodyShownValid(op, r)
		if bodyValid && c.parametersShownValid(op, r, &rctx.URLParams) {
			next.ServeHTTP(w, r)
			return
		}
		params := make(map[string]string, len(rctx.URLParams.Keys))
		for i, k := range rctx.URLParams.Keys {
			params[k] = rctx.URLParams.Values[i]
		}
		input := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: op.route, Options: c.options}
		bound := &errorBound{}
		if bodyValid && op.body != nil {
			input.Options = c.parameterOptions
		} else if !bodyValid {
			bound = boundBody(r, op.jsonSchema, op.body)
		}
		if err := openapi3filter.ValidateRequest(ctx, input); err != nil {
			err = boundedRequestProblem(err, bound)
			if op.oauthErrors {
				err = asOAuthError(err)
			}
			writeProblem(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

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

// parametersShownValid reports whether jsoncheck shows every parameter of op valid: each
// present once with a value it accepts, or absent and optional. Anything unusual (a repeated
// or empty value, an escaped query) is left to kin-openapi.
func (c *contract) parametersShownValid(op *operation, r *http.Request, path *chi.RouteParams) bool {
	if op.parameters == nil {
		return false
	}
	query := r.URL.RawQuery
	if strings.ContainsAny(query, "%+;") {
		return false
	}
	for _, p := range op.parameters {
		var raw string
		var count int
		switch p.in {
		case "path":
			for i, k := range path.Keys {
				if k == p.name {
					raw, count = path.Values[i], 1
				}
			}
		case "query":
			raw, count = queryValue(query, p.name)
		case "header":
			values := r.Header[p.name]
			count = len(values)
			if count > 0 {
				raw = values[0]
			}
		}
		switch {
		case count == 0 && !p.required:
		case count != 1 || !p.check.Valid(raw):
			return false
		}
	}
	return true
}

// queryValue finds name in a query without escapes, returning its value and how many times
// it occurs.
func queryValue(query, name string) (value string, count int) {
	for query != "" {
		var pair string
		pair, query, _ = strings.Cut(query, "&")
		key, v, _ := strings.Cut(pair, "=")
		if key == name {
			value = v
			count++
		}
	}
	return value, count
}

// parameterCheckers compiles the parameters of an operation (those of its path item it does
// not override, then its own) for the fast path, or returns nil when one of them is left to
// kin-openapi.
func parameterCheckers(pathItem, own openapi3.Parameters) ([]parameterCheck, error) {
	declared := openapi3.Parameters{}
	for _, p := range pathItem {
		if own.GetByInAndName(p.Value.In, p.Value.Name) == nil {
			declared = append(declared, p)
		}
	}
	declared = append(declared, own...)
	checks := []parameterCheck{}
	for _, ref := range declared {
		p := ref.Value
		if p.Content != nil || p.Schema == nil || p.AllowEmptyValue || (p.Style != "" && p.Style != defaultStyle(p.In)) {
			return nil, nil
		}
		check, err := jsoncheck.CompileParameter(p.Schema.Value)
		if errors.Is(err, jsoncheck.ErrUnsupported) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		name := p.Name
		switch p.In {
		case "header":
			name = http.CanonicalHeaderKey(name)
		case "path", "query":
		default:
			return nil, nil
		}
		checks = append(checks, parameterCheck{in: p.In, name: name, required: p.Required, check: check, declared: p})
	}
	return checks, nil
}

func defaultStyle(in string) string {
	if in == "query" || in == "cookie" {
		return "form"
	}
	return "simple"
}

// bodyShownValid reports whether op's body needs no kin-openapi validation: op takes none
// and none was sent, an optional body was left out, or jsoncheck accepts the JSON body it
// reads into memory. The body is readable again afterwards either way.
func (c *contract) bodyShownValid(op *operation, r *http.Request) bool {
	requestBody := op.route.Operation.RequestBody
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return requestBody == nil || (requestBody.Value != nil && !requestBody.Value.Required)
	}
	if op.body == nil || r.ContentLength > maxBodyBytes || r.Header.Get("Content-Type") != "application/json" {
		return false
	}
	var data []byte
	var err error
	if r.ContentLength > 0 {
		data = make([]byte, r.ContentLength)
		_, err = io.ReadFull(r.Body, data)
	} else {
		data, err = io.ReadAll(r.Body)
	}
	if err != nil {
		// kin-openapi reads the body again and meets the same error (an oversized body's
		// MaxBytesError, a client gone): it reports it as it always has.
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(data), errorReader{err}))
		return false
	}
	r.Body = newBodyReader(data)
	return op.body.Valid(data)
}

// bodyReader serves a body read into memory.
type bodyReader struct {
	bytes.Reader
	data []byte
}

func newBodyReader(data []byte) *bodyReader {
	body := &bodyReader{data: data}
	body.Reset(data)
	return body
}

func (*bodyReader) Close() error { return nil }

// errorReader fails every read with err.
type errorReader struct{ err error }

func (e errorReader) Read([]byte) (int, error) { return 0, e.err }

// bodyChecker compiles the JSON body schema of op for jsoncheck, or returns nil when op takes
// no JSON body or its schema is one jsoncheck leaves to kin-openapi.
func bodyChecker(op *openapi3.Operation) (*jsoncheck.Checker, error) {
	if op.RequestBody == nil || op.RequestBody.Value == nil {
		return nil, nil
	}
	media := op.RequestBody.Value.Content.Get("application/json")
	if media == nil || media.Schema == nil {
		return nil, nil
	}
	checker, err := jsoncheck.Compile(media.Schema.Value)
	if errors.Is(err, jsoncheck.ErrUnsupported) {
		return nil, nil
	}
	return checker, err
}

// jsonSchema returns the schema of op's JSON body, or nil.
func jsonSchema(op *openapi3.Operation) *openapi3.Schema {
	if op.RequestBody == nil || op.RequestBody.Value == nil {
		return nil
	}
	media := op.RequestBody.Value.Content.Get("application/json")
	if media == nil || media.Schema == nil {
		return nil
	}
	return media.Schema.Value
}

// storableParameters refuses path, query and header parameters that are not valid UTF-8
// or hold a NUL character: no parameter of the contract can mean either, and PostgreSQL
// stores neither (a query naming one would fail as a 500).
func storableParameters(r *http.Request, path chi.RouteParams, declared openapi3.Parameters) error {
	var fields []core.FieldError
	omitted := 0
	bad := func(in, name, v string) {
		if !storable(v) && len(fields) >= maxFieldErrors {
			omitted++
		} else if !storable(v) {
			fields = append(fields, core.FieldError{Location: in, Pointer: name, Code: "format",
				Message: fmt.Sprintf("%s parameter %q must be valid UTF-8 without NUL characters.", in, name)})
		}
	}
	for i, name := range path.Keys {
		bad("path", name, path.Values[i])
	}
	// A query without escapes holds what it shows; only an escaped one needs decoding.
	if !storable(r.URL.RawQuery) || strings.Contains(r.URL.RawQuery, "%") {
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
	}
	for _, p := range declared {
		if p.Value != nil && p.Value.In == "header" {
			for _, v := range r.Header.Values(p.Value.Name) {
				bad("header", p.Value.Name, v)
			}
		}
	}
	switch {
	case len(fields) == 0:
		return nil
	case omitted > 0:
		return boundFields(fields, omitted)
	}
	fields = clipFields(fields)
	return &core.Error{Code: core.EValidation, Message: fields[0].Message, Fields: fields}
}

// storable reports whether PostgreSQL can store v as text: valid UTF-8 without NUL.
func storable(v string) bool {
	return utf8.ValidString(v) && strings.IndexByte(v, 0) < 0
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

// requestProblem turns kin-openapi's validation errors into one client error naming the
// offending fields, at most maxFieldErrors of them.
func requestProblem(err error) error { return boundedRequestProblem(err, &errorBound{}) }

// boundedRequestProblem is requestProblem for a body boundBody pruned: bound tells what it
// left out.
func boundedRequestProblem(err error, bound *errorBound) error {
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
	fields = append(fields, bound.extra...)
	return boundFields(fields, bound.omitted)
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
	case se.SchemaField == "enum" && se.Schema != nil && len(se.Reason) > maxFieldText/2:
		// kin-openapi's reason lists every allowed value: fifty of them made 50 kB.
		f.Message = fmt.Sprintf("%s: value is not one of the %d allowed values of the document.", where, len(se.Schema.Enum))
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
