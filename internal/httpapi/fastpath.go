package httpapi

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/go-chi/chi/v5"
	"github.com/provider/coreapi/internal/jsoncheck"
)

// parameterCheck is one declared parameter as the gate's fast path checks it.
type parameterCheck struct {
	in, name string // name is canonical for headers
	required bool
	check    *jsoncheck.Parameter
	declared *openapi3.Parameter
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
