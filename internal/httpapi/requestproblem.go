package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/provider/coreapi/internal/core"
)

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
