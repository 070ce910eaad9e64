package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/provider/coreapi/internal/core"
	"github.com/provider/coreapi/internal/jsoncheck"
)

// maxFieldErrors caps the field errors of one problem. A body of a megabyte can hold a
// hundred thousand invalid values; listing each (kin-openapi repeats an enum's every allowed
// value in each) made a 96 MB answer in seconds. The problem lists the first ones, and its
// detail says how many more there were.
const maxFieldErrors = 50

// errorBound prunes an invalid JSON body before kin-openapi explains it, so that explaining
// costs work for about maxFieldErrors invalid values however many the body holds. It walks
// the body along its schema (properties, items, additionalProperties): once maxFieldErrors
// invalid values are kept, every further invalid array item or additional property is only
// counted (kin-openapi's fail-fast check: no error built) and left out of what kin-openapi
// sees. Declared properties always stay (leaving one out could make it "required"); their
// insides are pruned the same way. Subschemas with anyOf, allOf, oneOf or not are kept whole.
type errorBound struct {
	kept    int // invalid values kept for kin-openapi to explain
	omitted int // invalid values left out, at least one field error each
	// extra are errors of an array's own bounds that leaving items out would hide.
	extra []core.FieldError
}

func (b *errorBound) full() bool { return b.kept >= maxFieldErrors }

// schemaValid is kin-openapi's fail-fast answer: it stops at the first violation and builds
// no error.
func schemaValid(s *openapi3.Schema, v any) bool {
	return s.VisitJSON(v, openapi3.VisitAsRequest(), openapi3.FailFast()) == nil
}

// member returns v, pruned, and counts it as kept when it is invalid and nothing inside it
// was already counted.
func (b *errorBound) member(v any, s *openapi3.Schema, pointer string) any {
	before := b.kept
	pruned := b.prune(v, s, pointer)
	if b.kept == before && !schemaValid(s, v) {
		b.kept++
	}
	return pruned
}

// prune returns what of v kin-openapi is to explain against s.
func (b *errorBound) prune(v any, s *openapi3.Schema, pointer string) any {
	if s == nil {
		return v
	}
	if len(s.AllOf) == 1 && s.Type == nil && len(s.Properties) == 0 && s.Items == nil && s.AllOf[0].Value != nil {
		s = s.AllOf[0].Value // a $ref wrapped to carry a description
	}
	if len(s.AnyOf)+len(s.AllOf)+len(s.OneOf) > 0 || s.Not != nil {
		return v
	}
	switch v := v.(type) {
	case []any:
		if s.Items == nil || s.Items.Value == nil {
			return v
		}
		items := s.Items.Value
		out := make([]any, 0, len(v))
		for i, item := range v {
			if b.full() {
				// Only what stays valid is kept (never below minItems): it costs no error.
				if len(out) >= int(s.MinItems) && !schemaValid(items, item) {
					b.omitted++
					continue
				}
				out = append(out, item)
				continue
			}
			out = append(out, b.member(item, items, pointer+"/"+strconv.Itoa(i)))
		}
		if s.MaxItems != nil && uint64(len(v)) > *s.MaxItems && uint64(len(out)) <= *s.MaxItems {
			b.extra = append(b.extra, core.FieldError{Location: "body", Pointer: pointer, Code: "max_items",
				Message: fmt.Sprintf("%s: maximum number of items is %d.", fieldName(pointer), *s.MaxItems)})
		}
		return out
	case map[string]any:
		forbidden := s.AdditionalProperties.Has != nil && !*s.AdditionalProperties.Has
		var additional *openapi3.Schema
		if ref := s.AdditionalProperties.Schema; ref != nil {
			additional = ref.Value
		}
		names := make([]string, 0, len(v))
		for name := range v {
			names = append(names, name)
		}
		slices.Sort(names) // kin-openapi's order
		out := make(map[string]any, len(v))
		for _, name := range names {
			value := v[name]
			p := pointer + "/" + escapePointer([]string{name})[0]
			if prop := s.Properties[name]; prop != nil && prop.Value != nil {
				out[name] = b.member(value, prop.Value, p)
				continue
			}
			switch {
			case forbidden && b.full():
				b.omitted++
			case forbidden:
				b.kept++
				out[name] = value
			case additional != nil && b.full():
				if schemaValid(additional, value) {
					out[name] = value
				} else {
					b.omitted++
				}
			case additional != nil:
				out[name] = b.member(value, additional, p)
			default:
				out[name] = value
			}
		}
		return out
	}
	return v
}

// fieldName is how messages name the value at pointer.
func fieldName(pointer string) string {
	if pointer == "" {
		return "The body"
	}
	return "Field " + pointer
}

// boundBody prepares the JSON body of r for kin-openapi's explanation: when it holds more
// invalid values than a problem lists, r's body becomes the pruned body (errorBound) and the
// bound says what was left out. Bodies it cannot read as one JSON value of valid UTF-8 are
// left as they are: kin-openapi refuses them at parsing, before any schema work; so are
// bodies checker (when there is one) shows valid, such as one sent as
// `application/json; charset=utf-8`, which the gate's fast path does not read.
func boundBody(r *http.Request, s *openapi3.Schema, checker *jsoncheck.Checker) *errorBound {
	b := &errorBound{}
	if s == nil || r.Body == nil || r.Body == http.NoBody {
		return b
	}
	if media, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || media != "application/json" {
		return b
	}
	var data []byte
	if body, ok := r.Body.(*bodyReader); ok {
		data = body.data
	} else {
		var err error
		data, err = io.ReadAll(r.Body)
		if err != nil {
			r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(data), errorReader{err}))
			return b
		}
		r.Body = newBodyReader(data)
	}
	if !utf8.Valid(data) || (checker != nil && checker.Valid(data)) {
		return b
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return b
	}
	if _, err := dec.Token(); err != io.EOF {
		return b
	}
	pruned := b.prune(v, s, "")
	if b.omitted == 0 && len(b.extra) == 0 {
		return b
	}
	encoded, err := json.Marshal(pruned)
	if err != nil {
		return &errorBound{}
	}
	r.Body = newBodyReader(encoded)
	r.ContentLength = int64(len(encoded))
	return b
}

// maxFieldText bounds the pointer and the message of a field error, in bytes: a property
// name, and so its pointer, can be most of a megabyte, and an enum error lists every
// allowed value.
const maxFieldText = 300

// clip shortens s to at most maxFieldText bytes, on a character boundary, marking the cut.
func clip(s string) string {
	if len(s) <= maxFieldText {
		return s
	}
	cut := maxFieldText - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// clipFields clips the pointer and the message of every field error.
func clipFields(fields []core.FieldError) []core.FieldError {
	for i := range fields {
		fields[i].Pointer, fields[i].Message = clip(fields[i].Pointer), clip(fields[i].Message)
	}
	return fields
}

// boundFields caps fields at maxFieldErrors, each clipped, and returns the problem naming
// them; omitted invalid values were found but not listed.
func boundFields(fields []core.FieldError, omitted int) *core.Error {
	if len(fields) > maxFieldErrors {
		omitted += len(fields) - maxFieldErrors
		fields = fields[:maxFieldErrors:maxFieldErrors]
	}
	fields = clipFields(fields)
	msg := "The request does not match the API contract."
	switch {
	case omitted > 0:
		msg = fmt.Sprintf("The request has at least %d invalid fields; errors lists the first %d, and %d more were found.",
			len(fields)+omitted, len(fields), omitted)
	case len(fields) == 1:
		msg = fields[0].Message
	case len(fields) > 1:
		msg = fmt.Sprintf("The request has %d invalid fields; see errors.", len(fields))
	}
	return &core.Error{Code: core.EValidation, Message: msg, Fields: fields}
}
