package httpapi

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/go-chi/chi/v5"
	"github.com/provider/coreapi/internal/core"
)

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
