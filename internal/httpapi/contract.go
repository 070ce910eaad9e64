package httpapi

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

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
			noteRequest(ctx, func(info *requestInfo) { info.principal, info.gate, info.op = p, c, op })
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
