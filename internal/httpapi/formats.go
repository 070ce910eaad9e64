package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/mail"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/provider/coreapi/internal/jsoncheck"
)

var configureOnce sync.Once

// ConfigureValidation teaches kin-openapi what the contract means beyond its defaults: the
// string formats the document uses (out of the box it checks only date and date-time, by
// pattern, so uuid and email would pass unchecked) and strict JSON bodies. The settings are
// process-wide, so tests validating responses get them too.
func ConfigureValidation() {
	configureOnce.Do(func() {
		openapi3filter.RegisterBodyDecoder("application/json", strictJSONBodyDecoder)
		// An XML body (validateTaxInvoice's request, getTaxInvoiceXml's answer) is validated as
		// the string it is; what it means is the handler's.
		openapi3filter.RegisterBodyDecoder("application/xml", openapi3filter.FileBodyDecoder)
		uuidPattern := regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
		openapi3.DefineStringFormatValidator("uuid", openapi3.NewCallbackValidator(func(s string) error {
			if !uuidPattern.MatchString(s) {
				return errors.New("not a UUID")
			}
			return nil
		}))
		openapi3.DefineStringFormatValidator("date", openapi3.NewCallbackValidator(func(s string) error {
			if _, err := time.Parse(time.DateOnly, s); err != nil {
				return errors.New("not a date (YYYY-MM-DD)")
			}
			return nil
		}))
		openapi3.DefineStringFormatValidator("date-time", openapi3.NewCallbackValidator(func(s string) error {
			t, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				return errors.New("not an RFC 3339 date-time")
			}
			// The service answers in UTC, and an offset can carry a valid date-time out of the
			// years RFC 3339 can write (9999-12-31T23:59:59-01:00 is in year 10000): such an
			// instant could be accepted but never rendered.
			if y := t.UTC().Year(); y < 0 || y > 9999 {
				return errors.New("an instant outside years 0000 to 9999 in UTC")
			}
			return nil
		}))
		openapi3.DefineStringFormatValidator("uri", openapi3.NewCallbackValidator(func(s string) error {
			u, err := url.Parse(s)
			if err != nil || u.Scheme == "" || u.Host == "" {
				return errors.New("not an absolute URI")
			}
			return nil
		}))
		openapi3.DefineStringFormatValidator("email", openapi3.NewCallbackValidator(func(s string) error {
			a, err := mail.ParseAddress(s)
			if err != nil || a.Address != s || a.Name != "" {
				return errors.New("not an e-mail address")
			}
			return nil
		}))
	})
}

// strictJSONBodyDecoder decodes exactly one JSON value of valid UTF-8. The default decoder
// stops after the first value, so `{...}}` would pass, and Go replaces invalid UTF-8 silently.
func strictJSONBodyDecoder(body io.Reader, _ http.Header, schema *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	if !utf8.Valid(data) {
		return nil, &openapi3filter.ParseError{Kind: openapi3filter.KindInvalidFormat, Reason: "the body is not valid UTF-8"}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		var syntax *json.SyntaxError
		reason := "the body ends before the JSON value does"
		if errors.As(err, &syntax) {
			reason = fmt.Sprintf("%s at byte %d", syntax.Error(), syntax.Offset)
		}
		return nil, &openapi3filter.ParseError{Kind: openapi3filter.KindInvalidFormat, Reason: reason, Cause: err}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &openapi3filter.ParseError{Kind: openapi3filter.KindInvalidFormat,
			Reason: fmt.Sprintf("unexpected data after the JSON value at byte %d", dec.InputOffset())}
	}
	if pointers := nulStrings(v, "", nil); len(pointers) > 0 {
		return nil, &unstorableText{pointers: pointers}
	}
	if schema != nil {
		if pointers := nullsRefused(v, schema.Value, "", nil); len(pointers) > 0 {
			return nil, &nullNotAllowed{pointers: pointers}
		}
	}
	return v, nil
}

// nullNotAllowed names body properties sent as null that the document does not make
// nullable. kin-openapi would take such a null for an absent property and put the
// property's default in its place, so `"diagnostics": null` passed as `{}`.
type nullNotAllowed struct{ pointers []string }

func (e *nullNotAllowed) Error() string { return "the body holds null where the contract allows none" }

// nullsRefused appends the pointer of every declared property of v that is null but not
// nullable in s, stopping once it has more than a problem lists.
func nullsRefused(v any, s *openapi3.Schema, pointer string, out []string) []string {
	if s == nil || len(out) > maxFieldErrors {
		return out
	}
	if len(s.AllOf) == 1 && s.Type == nil {
		s = s.AllOf[0].Value
	}
	switch v := v.(type) {
	case map[string]any:
		names := make([]string, 0, len(s.Properties))
		for name := range s.Properties {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			value, present := v[name]
			if !present {
				continue
			}
			prop := s.Properties[name].Value
			p := pointer + "/" + escapePointer([]string{name})[0]
			if value == nil {
				if !jsoncheck.AdmitsNull(prop) {
					out = append(out, p)
				}
				continue
			}
			out = nullsRefused(value, prop, p, out)
		}
	case []any:
		if s.Items != nil {
			for i, item := range v {
				out = nullsRefused(item, s.Items.Value, fmt.Sprintf("%s/%d", pointer, i), out)
			}
		}
	}
	return out
}

// unstorableText names the body strings (values or keys) that hold a NUL character: JSON
// allows one (as \u0000) but PostgreSQL stores none in text or jsonb, so the gate refuses
// it for every operation alike instead of each service tripping over it (a 500).
type unstorableText struct{ pointers []string }

func (e *unstorableText) Error() string { return "the body holds text with a NUL character" }

// nulText is the message of every field refused for a NUL character.
const nulText = "Text may not contain the NUL character (U+0000)."

// nulStrings appends the JSON pointer of every string of v, key or value, holding a NUL,
// stopping once it has more than a problem lists.
func nulStrings(v any, pointer string, out []string) []string {
	if len(out) > maxFieldErrors {
		return out // a problem lists no more
	}
	switch v := v.(type) {
	case string:
		if strings.ContainsRune(v, 0) {
			out = append(out, pointer)
		}
	case []any:
		for i, e := range v {
			out = nulStrings(e, fmt.Sprintf("%s/%d", pointer, i), out)
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := pointer + "/" + escapePointer([]string{k})[0]
			if strings.ContainsRune(k, 0) {
				out = append(out, p)
				continue
			}
			out = nulStrings(v[k], p, out)
		}
	}
	return out
}
