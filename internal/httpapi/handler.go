package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/go-chi/chi/v5"
	"go.opentelemetry.io/otel/trace"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/apidocs"
	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/metrics"
	"github.com/provider/coreapi/openapi"
)

// Config wires the HTTP layer.
type Config struct {
	Logger *slog.Logger
	// Development enables the development bearer tokens (docs/design.md, "Credentials and principals").
	Development bool
	// ProductionTrafficEnabled lets production API keys through; while false (the default)
	// they are refused with 403 production_gated.
	ProductionTrafficEnabled bool
	// Ready reports whether the service can serve traffic (the database answers).
	Ready func(ctx context.Context) error
	// Services the handlers call.
	Services core.Services
	// RequestLogs receives a log of every authenticated request; nil records none.
	RequestLogs RequestLogSink
	// Metrics records the traffic and is served at /metrics; nil: a new set just for this
	// handler.
	Metrics *metrics.Metrics
	// Stopping is closed when the server starts shutting down: event streams, which would
	// otherwise keep their connections busy until the drain's deadline, end then.
	Stopping <-chan struct{}
	// EventStream paces the event streams.
	EventStream EventStreamTiming
	// Tracing, when set, gives every request a span named after its route template
	// (internal/telemetry); nil: no spans.
	Tracing trace.TracerProvider
	// InFlight counts the requests being served, for the renewal run to give way to them
	// (postgres.DB.Requests); nil: uncounted.
	InFlight *InFlight
}

// LoadDocument returns the embedded OpenAPI document, parsed and validated once per process:
// a 500 kB document costs a second or more of CPU to load, and every handler of the process
// (tests start hundreds) reads the same one. Callers share it and must not modify it.
func LoadDocument() (*openapi3.T, error) {
	return loadDocumentOnce()
}

var loadDocumentOnce = sync.OnceValues(func() (*openapi3.T, error) {
	ConfigureValidation()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(openapi.Document)
	if err != nil {
		return nil, fmt.Errorf("httpapi: load openapi.yaml: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("httpapi: openapi.yaml is invalid: %w", err)
	}
	return doc, nil
})

// loadReference builds the reference page and the document's JSON form once per process.
var loadReference = sync.OnceValues(func() (*apidocs.Reference, error) { return apidocs.New(openapi.Document) })

// ScopesOf lists the scopes the document's oauth2 scheme declares.
func ScopesOf(doc *openapi3.T) map[string]bool {
	scopes := map[string]bool{}
	if ref := doc.Components.SecuritySchemes["oauth2"]; ref != nil && ref.Value.Flows != nil {
		if cc := ref.Value.Flows.ClientCredentials; cc != nil {
			for s := range cc.Scopes {
				scopes[s] = true
			}
		}
	}
	return scopes
}

// NewHandler returns the whole HTTP API: health, metrics and reference endpoints, then every
// operation of the document behind the contract gate and the strict handlers.
func NewHandler(ctx context.Context, cfg Config) (http.Handler, error) {
	doc, err := LoadDocument()
	if err != nil {
		return nil, err
	}
	if cfg.Metrics == nil {
		cfg.Metrics = metrics.New()
	}
	reference, err := loadReference()
	if err != nil {
		return nil, err
	}
	// Failed authentications, by bearer and at the token endpoint, are throttled together.
	failures := newAuthFailures()
	cfg.Services.Credentials = &throttledTokens{CredentialService: cfg.Services.Credentials, failures: failures}
	auth := &throttledAuthenticator{failures: failures, Authenticator: &bearerAuthenticator{
		development:   cfg.Development,
		allScopes:     ScopesOf(doc),
		credentials:   cfg.Services.Credentials,
		operators:     cfg.Services.Operators,
		organizations: cfg.Services.Organizations,
	}}
	gate, err := newContract(doc, auth, cfg.ProductionTrafficEnabled, cfg.Metrics)
	if err != nil {
		return nil, err
	}

	strict := api.NewStrictHandlerWithOptions(&Server{cfg: cfg}, nil, api.StrictHTTPServerOptions{
		RequestErrorHandlerFunc: func(w http.ResponseWriter, r *http.Request, err error) {
			writeProblem(w, r, &core.Error{Code: core.EMalformedJSON, Message: "The request body could not be decoded.", Cause: err})
		},
		ResponseErrorHandlerFunc: writeProblem,
	})
	apiRouter := chi.NewRouter()
	api.HandlerWithOptions(strict, api.ChiServerOptions{
		BaseRouter: apiRouter,
		ErrorHandlerFunc: func(w http.ResponseWriter, r *http.Request, err error) {
			// Parameters were validated by the contract; a binding failure left is a mismatch
			// between the document and the generated code, reported as invalid input.
			writeProblem(w, r, &core.Error{Code: core.EValidation, Message: "A parameter is invalid.", Cause: err})
		},
	})

	// Endpoints outside the contract: no credential, no validation, not in the document.
	root := chi.NewRouter()
	outside := func(pattern string, h http.HandlerFunc) {
		root.Get(pattern, func(w http.ResponseWriter, r *http.Request) {
			setRoute(r.Context(), pattern)
			h(w, r)
		})
	}
	outside("/docs", reference.ServeIndex)
	outside("/docs/assets/*", reference.ServeAsset)
	outside("/openapi.yaml", reference.ServeYAML)
	outside("/openapi.json", reference.ServeJSON)
	outside("/metrics", cfg.Metrics.Handler().ServeHTTP)
	outside("/healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	outside("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := cfg.Ready(r.Context()); err != nil {
			logger(r.Context()).Warn("not ready", "error", err)
			writeProblem(w, r, core.Errorf(core.EUnavailable, "The database is not reachable."))
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
	gated := gate.middleware(idempotent(cfg.Services.Idempotency, cfg.Metrics, apiRouter))
	// Every other path goes to the gate, which answers 404 or 405 for what the document
	// lacks. As root's not-found handler rather than mounted at "/": a mount sets a "*"
	// path value on every request (an allocation each, docs/performance.md).
	root.NotFound(gated.ServeHTTP)
	// Methods chi does not know (PROPFIND, BREW, ...) and methods the endpoints above lack
	// reach the gate too, which answers 405 with Allow like for any other method an
	// operation lacks.
	root.MethodNotAllowed(gated.ServeHTTP)
	var tracer trace.Tracer
	if cfg.Tracing != nil {
		tracer = cfg.Tracing.Tracer("github.com/provider/coreapi/internal/httpapi")
	}
	return withRequestContext(cfg.Logger, cfg.Metrics, cfg.RequestLogs, tracer, cfg.InFlight, root), nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
