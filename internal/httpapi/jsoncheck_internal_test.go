package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/provider/coreapi/internal/jsoncheck"
)

// kinAcceptsBody is the gate's kin-openapi path for a body: the strict decoder (one value,
// UTF-8, no NUL, no null for a property that admits none), then kin-openapi's validation of
// the value as a request body.
func kinAcceptsBody(schema *openapi3.SchemaRef, body []byte) bool {
	v, err := strictJSONBodyDecoder(bytes.NewReader(body), nil, schema, nil)
	if err != nil {
		return false
	}
	return schema.Value.VisitJSON(v, openapi3.VisitAsRequest(), openapi3.MultiErrors()) == nil
}

// TestJSONCheckAgreesWithKinOpenAPI holds jsoncheck to kin-openapi keyword by keyword: for
// every schema and body of the table both give the same answer. jsoncheck answering "valid"
// where kin-openapi refuses would let an invalid body through the gate.
func TestJSONCheckAgreesWithKinOpenAPI(t *testing.T) {
	t.Parallel()
	ConfigureValidation()
	// Bodies jsoncheck refuses although kin-openapi accepts them: the gate then asks
	// kin-openapi, so they pass all the same. A duplicate key is one: encoding/json keeps
	// the last value, jsoncheck checks every one.
	leftToKin := map[string]bool{`{"a":1,"a":"y"}`: true}
	cases := []struct {
		schema string
		bodies []string
	}{
		{`{}`, []string{`1`, `"x"`, `null`, `{"a":[1,{"b":null}]}`, `[]`, `true`}},
		{`{"type":"string","minLength":2,"maxLength":3}`, []string{`"a"`, `"ab"`, `"abc"`, `"abcd"`, `"é"`, `"éé"`, `"😀"`, `"😀a"`, `"😀😀"`,
			`"\ud83d\ude00"`, `"\ud800"`, `"\ud800\ud800"`, `"a\u0062"`, `""`, `1`, `null`, `["ab"]`, `"\u0000a"`, `"a\\b"`, `"\/\/"`}},
		{`{"type":"string","pattern":"^[A-Z]{2}$"}`, []string{`"SA"`, `"sa"`, `"SAU"`, `"S\u0041"`, `" SA"`}},
		{`{"type":"string","format":"uuid"}`, []string{`"0193a000-0000-7000-8000-000000000001"`, `"0193A000-0000-7000-8000-00000000000F"`, `"0193a000"`, `""`}},
		{`{"type":"string","format":"date"}`, []string{`"2026-02-28"`, `"2026-02-30"`, `"2026-2-28"`, `"2026-02-28T00:00:00Z"`}},
		{`{"type":"string","format":"date-time"}`, []string{`"2026-02-28T10:00:00Z"`, `"2026-02-28T10:00:00.123+03:00"`, `"2026-02-28 10:00:00Z"`, `"2026-02-28"`}},
		{`{"type":"string","format":"email"}`, []string{`"a@b.example"`, `"A <a@b.example>"`, `"a@"`, `"a@b.example "`}},
		{`{"type":"string","format":"uri"}`, []string{`"https://example.com/x"`, `"/x"`, `"https://"`, `"mailto:a@b"`}},
		{`{"type":"string","enum":["a","b"]}`, []string{`"a"`, `"b"`, `"c"`, `"\u0061"`, `null`, `1`}},
		{`{"type":"string","enum":["a"],"nullable":true}`, []string{`"a"`, `null`, `"b"`}},
		{`{"type":"integer"}`, []string{`1`, `-1`, `0`, `-0`, `-01`, `1.0`, `1.5`, `1e2`, `1E+2`, `1e-2`, `1e`, `1.e5`, `1e+`, `9007199254740993`, `1e400`, `-1e400`, `"1"`, `01`, `1.`, `.5`, `-`, `+1`, `true`}},
		{`{"type":"integer","format":"int32","minimum":1,"maximum":100}`, []string{`0`, `1`, `100`, `101`, `2147483648`, `50.0`}},
		{`{"type":"integer","format":"int64"}`, []string{`9223372036854775807`, `9223372036854775808`, `-9223372036854775808`, `1e19`, `-1e19`}},
		{`{"type":"number","minimum":0,"exclusiveMinimum":true,"maximum":10,"exclusiveMaximum":true}`, []string{`0`, `0.1`, `10`, `9.99`, `-0`, `5e-324`}},
		{`{"type":"number","format":"double"}`, []string{`1.5`, `1e308`, `2e308`}},
		{`{"type":"boolean"}`, []string{`true`, `false`, `tru`, `truee`, `"true"`, `0`}},
		{`{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":2,"uniqueItems":true}`, []string{`[]`, `["a"]`, `["a","b"]`, `["a","a"]`,
			`["a","\u0061"]`, `["a","b","c"]`, `[1]`, `[null]`, `["a",]`, `[,"a"]`, `[ "a" , "b" ]`}},
		{`{"type":"array"}`, []string{`[]`, `[null,1,"x",{"a":null}]`, `[[[[]]]]`, `[1 2]`}},
		{`{"type":"object","required":["a"],"additionalProperties":false,"properties":{"a":{"type":"string"},"b":{"type":"integer","nullable":true},"c":{"type":"string"}}}`,
			[]string{`{"a":"x"}`, `{}`, `{"b":1}`, `{"a":"x","b":null}`, `{"a":"x","c":null}`, `{"a":null}`, `{"a":"x","d":1}`, `{"a":"x","a":"y"}`,
				`{"a":1,"a":"y"}`, `{"\u0061":"x"}`, `{"a":"x",}`, `{"a" "x"}`, `{"a":"x"} x`, `{"a":"x"}` + "\n\t ", ` {"a":"x"}`, `{"a":"x"}{}`, `{"a\u0000":"x"}`, `[]`}},
		{`{"type":"object","additionalProperties":{"anyOf":[{"type":"string","nullable":true,"maxLength":2},{"type":"number"},{"type":"boolean"}]}}`,
			[]string{`{}`, `{"k":"ab"}`, `{"k":"abc"}`, `{"k":null}`, `{"k":1.5}`, `{"k":true}`, `{"k":[]}`, `{"k":{}}`}},
		{`{"type":"object","properties":{"e":{"allOf":[{"type":"string","enum":["x","y"]}],"nullable":true},"f":{"allOf":[{"type":"string","enum":["x"]}]}}}`,
			[]string{`{"e":"x"}`, `{"e":null}`, `{"e":"z"}`, `{"f":"x"}`, `{"f":null}`, `{"f":"z"}`}},
		{`{"type":"object","properties":{"o":{"type":"object","properties":{"p":{}}}}}`, []string{`{"o":{"p":1}}`, `{"o":{"p":null}}`, `{"o":null}`, `{"o":{}}`, `{"x":null}`}},
		{`{"type":"object","required":["a"]}`, []string{`{"a":null}`, `{"a":{"b":[1,2]}}`, `{}`}},
		{`{"anyOf":[{"type":"string"},{"type":"integer"}]}`, []string{`"x"`, `1`, `1.5`, `null`, `[]`}},
		{`{"type":"object","properties":{"d":{"type":"object","additionalProperties":{"type":"string"}}}}`, []string{`{"d":{}}`, `{"d":{"x":"y"}}`, `{"d":{"x":1}}`, `{"d":{"x":null}}`}},
	}
	for _, tc := range cases {
		var s openapi3.Schema
		if err := json.Unmarshal([]byte(tc.schema), &s); err != nil {
			t.Fatalf("schema %s: %v", tc.schema, err)
		}
		checker, err := jsoncheck.Compile(&s)
		if err != nil {
			t.Fatalf("schema %s: %v", tc.schema, err)
		}
		ref := &openapi3.SchemaRef{Value: &s}
		for _, body := range tc.bodies {
			fast, kin := checker.Valid([]byte(body)), kinAcceptsBody(ref, []byte(body))
			if leftToKin[body] && !fast && kin {
				continue
			}
			if fast != kin {
				t.Errorf("schema %s, body %s: jsoncheck %v, kin-openapi %v", tc.schema, body, fast, kin)
			}
		}
	}
}

// TestJSONCheckRefusesWhatItDoesNotImplement: schemas using keywords jsoncheck does not
// check are refused at compile time, so their operations stay on kin-openapi's path.
func TestJSONCheckRefusesWhatItDoesNotImplement(t *testing.T) {
	t.Parallel()
	for _, schema := range []string{
		`{"oneOf":[{"type":"string"},{"type":"integer"}]}`,
		`{"not":{"type":"string"}}`,
		`{"type":"number","multipleOf":2}`,
		`{"type":"object","minProperties":1}`,
		`{"type":"object","properties":{"id":{"type":"string","readOnly":true}}}`,
		`{"type":"string","pattern":"^\\u0041$"}`,
		`{"type":"string","enum":["a",1]}`,
		`{"type":"array","items":{"oneOf":[{"type":"string"}]}}`,
	} {
		var s openapi3.Schema
		if err := json.Unmarshal([]byte(schema), &s); err != nil {
			t.Fatalf("schema %s: %v", schema, err)
		}
		if _, err := jsoncheck.Compile(&s); err == nil {
			t.Errorf("schema %s compiled; want ErrUnsupported", schema)
		}
	}
}

// documentBodies returns every operation of the document that takes a JSON body, with its
// body schema and documented example.
func documentBodies(tb testing.TB) (*contract, map[string]*openapi3.SchemaRef, map[string][]byte) {
	tb.Helper()
	doc, err := LoadDocument()
	if err != nil {
		tb.Fatal(err)
	}
	gate, err := newContract(doc, &bearerAuthenticator{development: true}, false, nil)
	if err != nil {
		tb.Fatal(err)
	}
	schemas, examples := map[string]*openapi3.SchemaRef{}, map[string][]byte{}
	for key, op := range gate.routes {
		body := op.route.Operation.RequestBody
		if body == nil || body.Value.Content.Get("application/json") == nil {
			continue
		}
		media := body.Value.Content.Get("application/json")
		name := key.method + " " + key.template
		schemas[name] = media.Schema
		examples[name], _ = json.Marshal(documentedExample(media))
	}
	return gate, schemas, examples
}

// documentedExample is the media type's example, or the first of its named examples.
func documentedExample(media *openapi3.MediaType) any {
	if media.Example != nil || len(media.Examples) == 0 {
		return media.Example
	}
	names := make([]string, 0, len(media.Examples))
	for name := range media.Examples {
		names = append(names, name)
	}
	sort.Strings(names)
	return media.Examples[names[0]].Value.Value
}

// TestJSONCheckAgreesWithKinOpenAPIOnTheDocument mutates the documented example of every
// operation with a body, one place at a time (every value replaced by values of every kind
// and edge, every property removed, an unknown one added, the text reshaped), and requires
// jsoncheck and kin-openapi to agree on every variant. It also requires every such operation
// to have the fast path: a keyword that would silently send one back to kin-openapi alone
// shows up here.
func TestJSONCheckAgreesWithKinOpenAPIOnTheDocument(t *testing.T) {
	t.Parallel()
	gate, schemas, examples := documentBodies(t)
	names := make([]string, 0, len(schemas))
	for name := range schemas {
		names = append(names, name)
	}
	sort.Strings(names)
	checked := 0
	for _, name := range names {
		op := gate.routes[routeKey{strings.Fields(name)[0], strings.Fields(name)[1]}]
		if op.body == nil {
			t.Errorf("%s: no jsoncheck fast path for its body", name)
			continue
		}
		if !op.body.Valid(examples[name]) || !kinAcceptsBody(schemas[name], examples[name]) {
			t.Errorf("%s: the documented example is not valid: %s", name, examples[name])
		}
		accepted, refused := 0, 0
		for _, body := range bodyVariants(t, examples[name]) {
			fast, kin := op.body.Valid(body), kinAcceptsBody(schemas[name], body)
			if fast != kin {
				t.Errorf("%s, body %s: jsoncheck %v, kin-openapi %v", name, body, fast, kin)
			}
			if fast {
				accepted++
			} else {
				refused++
			}
		}
		// Both answers must occur, or the variants test nothing.
		if accepted == 0 || refused == 0 {
			t.Errorf("%s: %d variants accepted, %d refused", name, accepted, refused)
		}
		checked += accepted + refused
	}
	t.Logf("%d bodies over %d operations", checked, len(names))
}

// replacements are the values every place of a body is replaced by in turn.
var replacements = []string{`null`, `true`, `false`, `0`, `-1`, `1.5`, `1e2`, `1e400`, `2147483648`, `9007199254740993`,
	`""`, `"x"`, `"` + strings.Repeat("é", 300) + `"`, `"😀"`, `"\u0000"`, `"\ud800"`, `"0193a000-0000-7000-8000-000000000001"`,
	`"2026-01-01"`, `"2026-01-01T00:00:00Z"`, `"a@b.example"`, `"https://example.com/x"`, `"310123456700003"`, `"SA"`,
	`[]`, `["x"]`, `["x","x"]`, `{}`, `{"a":1}`}

// bodyVariants derives bodies from a valid one: every value replaced, every property removed,
// an unknown property added to every object, plus reshaped text.
func bodyVariants(tb testing.TB, example []byte) [][]byte {
	tb.Helper()
	var root any
	dec := json.NewDecoder(bytes.NewReader(example))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		tb.Fatal(err)
	}
	var out [][]byte
	var walk func(v any, replace func(any) any)
	encode := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
	}
	walk = func(v any, replace func(any) any) {
		for _, r := range replacements {
			encode(replace(json.RawMessage(r)))
		}
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				copied := func() map[string]any {
					m := make(map[string]any, len(v))
					for kk, vv := range v {
						m[kk] = vv
					}
					return m
				}
				m := copied()
				delete(m, k)
				encode(replace(m))
				walk(child, func(x any) any { m := copied(); m[k] = x; return replace(m) })
			}
			m := make(map[string]any, len(v)+1)
			for kk, vv := range v {
				m[kk] = vv
			}
			m["zz_unknown"] = 1
			encode(replace(m))
		case []any:
			for i, child := range v {
				walk(child, func(x any) any {
					a := append([]any(nil), v...)
					a[i] = x
					return replace(a)
				})
			}
			encode(replace(append(append([]any(nil), v...), v...)))
			encode(replace([]any{}))
		}
	}
	walk(root, func(x any) any { return x })
	text := string(example)
	out = append(out,
		[]byte(" \n"+text+"\t "),
		[]byte(text+"x"),
		[]byte(text+text),
		[]byte(strings.Replace(text, "{", "{ ", 1)),
		[]byte(strings.Replace(text, ":", " : ", 1)),
		[]byte(strings.Replace(text, "}", ",}", 1)),
		[]byte(strings.Replace(text, `"`, `"\u00`, 1)),
		[]byte(strings.Replace(text, `"`, `"\u0041`, 2)),
		[]byte(text[:len(text)-1]),
		[]byte(strings.Replace(text, "{", `{"organization_id":"x",`, 1)),
	)
	return out
}

// FuzzJSONCheck sends arbitrary bodies to jsoncheck and kin-openapi for every operation
// with a body: jsoncheck may refuse what kin-openapi accepts (the gate then asks kin-openapi)
// but never accept what it refuses. `make test-reliability` runs it with -fuzz for a while;
// `go test` runs the seeds.
func FuzzJSONCheck(f *testing.F) {
	gate, schemas, examples := documentBodies(f)
	names := make([]string, 0, len(schemas))
	for name := range schemas {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, name := range names {
		f.Add(uint8(i), examples[name])
		for _, v := range bodyVariants(f, examples[name])[:20] {
			f.Add(uint8(i), v)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		name := names[int(which)%len(names)]
		op := gate.routes[routeKey{strings.Fields(name)[0], strings.Fields(name)[1]}]
		if op.body.Valid(body) && !kinAcceptsBody(schemas[name], body) {
			t.Fatalf("%s: jsoncheck accepts a body kin-openapi refuses: %q", name, body)
		}
	})
}

// parametersCheckedByKinOnly are the operations whose parameters the fast path does not
// decode, each with why kin-openapi's slower check is fine there.
var parametersCheckedByKinOnly = map[string]string{
	"GET /v1/events/stream": "its type filter repeats (an array); a stream is opened once and then lasts",
}

// TestParameterCheckAgreesWithKinOpenAPI holds the fast path's parameter checks to
// kin-openapi's decoding and validation for every parameter of the document and a range of
// raw values: both answer alike for every value jsoncheck decides (it leaves the empty value
// to kin-openapi).
func TestParameterCheckAgreesWithKinOpenAPI(t *testing.T) {
	t.Parallel()
	gate, _, _ := documentBodies(t)
	values := []string{"", "x", "0", "1", "-1", "+1", "01", "1.5", "1e3", "25", "100", "101", "true", "TRUE", "t", "0", "yes",
		"0193a000-0000-7000-8000-000000000001", "0193A000-0000-7000-8000-000000000001", "0193a000", "abc def", strings.Repeat("k", 300),
		"2026-01-01", "2026-01-01T00:00:00Z", "😀", "einvoice", "active", "page_view", "bench-key-1", "sk_test_x", "9223372036854775808"}
	checked := 0
	for key, op := range gate.routes {
		if op.parameters == nil {
			if _, ok := parametersCheckedByKinOnly[key.method+" "+key.template]; !ok {
				t.Errorf("%s %s: no fast path for its parameters", key.method, key.template)
			}
			continue
		}
		for _, pc := range op.parameters {
			param := pc.declared
			for _, raw := range values {
				fast := pc.check.Valid(raw)
				kin := kinAcceptsParameter(t, op.route, param, raw)
				if raw == "" && fast {
					t.Errorf("%s %s: %s %s: jsoncheck decided the empty value", key.method, key.template, pc.in, pc.name)
				}
				if raw != "" && fast != kin {
					t.Errorf("%s %s: %s %s = %q: jsoncheck %v, kin-openapi %v", key.method, key.template, pc.in, pc.name, raw, fast, kin)
				}
				checked++
			}
		}
	}
	t.Logf("%d parameter values", checked)
}

// kinAcceptsParameter asks kin-openapi whether raw is a valid value of param.
func kinAcceptsParameter(tb testing.TB, route *routers.Route, param *openapi3.Parameter, raw string) bool {
	tb.Helper()
	r := httptest.NewRequest(http.MethodGet, "/x", nil)
	input := &openapi3filter.RequestValidationInput{Request: r, Route: route, Options: &openapi3filter.Options{SkipSettingDefaults: true}}
	switch param.In {
	case "path":
		input.PathParams = map[string]string{param.Name: raw}
	case "query":
		r.URL.RawQuery = url.Values{param.Name: {raw}}.Encode()
	case "header":
		r.Header.Set(param.Name, raw)
	}
	return openapi3filter.ValidateParameter(context.Background(), input, param) == nil
}
