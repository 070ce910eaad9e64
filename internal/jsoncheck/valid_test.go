package jsoncheck

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
)

// anyValue is the empty schema: any value but null, so Valid decides syntax alone.
func anyValue(t testing.TB) *Checker {
	t.Helper()
	c, err := Compile(&openapi3.Schema{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// syntaxValid is what Valid must answer for the empty schema: one JSON value by
// encoding/json's grammar, of valid UTF-8, not null, with no NUL in any string or key and
// nested no deeper than maxDepth.
func syntaxValid(data []byte) bool {
	if !utf8.Valid(data) || !json.Valid(data) || depth(data) > maxDepth {
		return false
	}
	var v any // as the gate decodes: numbers stay text, so 1E400 is a number
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil || v == nil {
		return false
	}
	return !holdsNUL(v)
}

func depth(data []byte) int {
	deepest, d, inString, escaped := 0, 0, false, false
	for _, c := range data {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && (c == '{' || c == '['):
			d++
			deepest = max(deepest, d)
		case !inString && (c == '}' || c == ']'):
			d--
		}
	}
	return deepest
}

func holdsNUL(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.ContainsRune(v, 0)
	case []any:
		for _, e := range v {
			if holdsNUL(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range v {
			if strings.ContainsRune(k, 0) || holdsNUL(e) {
				return true
			}
		}
	}
	return false
}

var syntaxSeeds = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e-3`, `true`, `false`, `null`, ` {"a" : [1, "x", null, {"b": false}] } `,
	`01`, `1.`, `.5`, `-`, `1e`, `1e+`, `+1`, `tru`, `nul`, `truex`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `{a:1}`,
	`"\u0000"`, `{"\u0000":1}`, `"\ud800"`, `"\x"`, `"a` + "\t" + `b"`, `"\u12"`, `[1 2]`, `{} {}`, `[` + strings.Repeat(`[`, 250) + strings.Repeat(`]`, 251),
	"\xef\xbb\xbf{}", `"\/\b\f\n\r\t\\\""`, `1E400`, `{"a":{"b":{"c":[[],{}]}}}`,
}

func TestValidSyntax(t *testing.T) {
	t.Parallel()
	c := anyValue(t)
	for _, s := range syntaxSeeds {
		if got, want := c.Valid([]byte(s)), syntaxValid([]byte(s)); got != want {
			t.Errorf("Valid(%q) = %v, want %v", s, got, want)
		}
	}
}

// FuzzValidSyntax holds Valid's JSON grammar to encoding/json's on arbitrary input.
func FuzzValidSyntax(f *testing.F) {
	for _, s := range syntaxSeeds {
		f.Add([]byte(s))
	}
	c := anyValue(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := c.Valid(data), syntaxValid(data); got != want {
			t.Fatalf("Valid(%q) = %v, want %v", data, got, want)
		}
	})
}
