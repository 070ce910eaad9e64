package httpapi

import (
	"context"
	"reflect"
	"sync"

	"github.com/google/uuid"
	"github.com/oapi-codegen/nullable"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/core"
)

// Server implements the generated strict server interface over the core services. Handlers
// are thin: decode the typed request, call a service, convert the result.
type Server struct {
	cfg       Config
	catalogue catalogueResponses
}

var _ api.StrictServerInterface = (*Server)(nil)

// nullableFrom converts an optional value into a JSON field that is always present, null
// when v is nil. (An unset nullable.Nullable would marshal as the zero value.)
func nullableFrom[T any](v *T) nullable.Nullable[T] {
	if v == nil {
		return null[T]()
	}
	return nullable.NewNullableWithValue(*v)
}

// nulls holds one null per type (reflect.Type → nullable.Nullable[T]). A Nullable is a map
// that its methods replace and never write to, so the null fields of every response can
// share one instead of each allocating a map of its own.
var nulls sync.Map

// null returns the shared null of T.
func null[T any]() nullable.Nullable[T] {
	t := reflect.TypeFor[T]()
	n, ok := nulls.Load(t)
	if !ok {
		n, _ = nulls.LoadOrStore(t, nullable.NewNullNullable[T]())
	}
	return n.(nullable.Nullable[T])
}

// valueOf returns the value of an optional nullable request field, nil when absent or null.
func valueOf[T any](n nullable.Nullable[T]) *T {
	v, err := n.Get()
	if err != nil {
		return nil
	}
	return &v
}

// enumOr returns the string of an optional enum field, or "" when absent.
func enumOr[T ~string](v *T) string {
	if v == nil {
		return ""
	}
	return string(*v)
}

// deref returns the value of an optional field, or its zero value when absent.
func deref[T any](v *T) T {
	var zero T
	if v == nil {
		return zero
	}
	return *v
}

// valueOr returns the value of an optional field, or def when absent.
func valueOr[T any](v *T, def T) T {
	if v == nil {
		return def
	}
	return *v
}

// organizationParam parses an optional organization_id query parameter once, at the edge
// (core.OrganizationIn); nil when it was not sent.
func organizationParam(ctx context.Context, raw *string) (*uuid.UUID, error) {
	if raw == nil {
		return nil, nil
	}
	id, err := core.OrganizationIn(ctx, *raw, "organization_id")
	if err != nil {
		return nil, err
	}
	return &id, nil
}

// organizationNamed parses the organization_id a request names (at field, as for
// core.OrganizationIn) once, at the edge, for the resources where an organization that does
// not exist is ENotFound (the operator naming a malformed id included) rather than
// EUnprocessable.
func organizationNamed(ctx context.Context, raw, field string) (uuid.UUID, error) {
	id, err := core.OrganizationIn(ctx, raw, field)
	if core.ErrorCode(err) == core.EUnprocessable {
		return uuid.Nil, core.Errorf(core.ENotFound, "Organization %s does not exist.", raw)
	}
	return id, err
}
