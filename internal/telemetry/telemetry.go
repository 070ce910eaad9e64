// Package telemetry sets up OpenTelemetry tracing: off unless the standard OTEL_* variables
// name an OTLP endpoint, and then an OTLP/HTTP exporter configured by those variables
// (endpoint, headers, protocol details, OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES,
// OTEL_TRACES_SAMPLER). The HTTP layer, the database pool and the webhook sender each take
// the provider it returns; nil means no tracing, and costs nothing.
package telemetry

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

// ServiceName names the service in traces unless OTEL_SERVICE_NAME does.
const ServiceName = "coreapi"

// Enabled tells whether the OTEL_* variables ask for traces: an OTLP endpoint is named, and
// neither OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none turns them off.
func Enabled(getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || strings.EqualFold(getenv("OTEL_TRACES_EXPORTER"), "none") {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Setup returns the tracer provider the OTEL_* variables configure, or nil when tracing is
// off. shutdown exports the spans still buffered; call it when the process stops.
func Setup(ctx context.Context, getenv func(string) string) (tp trace.TracerProvider, shutdown func(context.Context) error, err error) {
	if !Enabled(getenv) {
		return nil, func(context.Context) error { return nil }, nil
	}
	exporter, err := otlptracehttp.New(ctx) // reads OTEL_EXPORTER_OTLP_*
	if err != nil {
		return nil, nil, err
	}
	res, err := resource.Merge(resource.NewSchemaless(semconv.ServiceName(ServiceName)), resource.Environment())
	if err != nil {
		return nil, nil, err
	}
	provider := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
	return provider, provider.Shutdown, nil
}

// Transport traces the requests of base with otelhttp, as client spans of the caller's span.
// The span sees the request's URL without its query and user information, which may carry a
// receiver's credentials; the request itself is sent unchanged.
func Transport(base http.RoundTripper, tp trace.TracerProvider) http.RoundTripper {
	if tp == nil {
		return base
	}
	return redactURL{next: otelhttp.NewTransport(restoreURL{next: base}, otelhttp.WithTracerProvider(tp))}
}

type fullURLKey struct{}

// redactURL hands the tracing transport a copy of the request whose URL has no query and
// no user information, keeping the whole URL in the context for restoreURL.
type redactURL struct{ next http.RoundTripper }

func (t redactURL) RoundTrip(r *http.Request) (*http.Response, error) {
	shown := *r.URL
	shown.RawQuery, shown.User, shown.ForceQuery = "", nil, false
	c := r.Clone(context.WithValue(r.Context(), fullURLKey{}, r.URL))
	c.URL = &shown
	return t.next.RoundTrip(c)
}

// restoreURL sends the request to the URL redactURL kept.
type restoreURL struct{ next http.RoundTripper }

func (t restoreURL) RoundTrip(r *http.Request) (*http.Response, error) {
	if full, ok := r.Context().Value(fullURLKey{}).(*url.URL); ok {
		r = r.Clone(r.Context())
		r.URL = full
	}
	return t.next.RoundTrip(r)
}
