package jsoncheck

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/getkin/kin-openapi/openapi3"
)

// maxDepth bounds nesting; deeper bodies are left to kin-openapi (encoding/json refuses
// nesting beyond 10 000 levels).
const maxDepth = 200

// maxUniqueItems bounds the arrays whose uniqueness Valid decides itself.
const maxUniqueItems = 64

// Valid reports whether data is exactly one JSON value, of valid UTF-8 with no NUL in any
// string or key, that satisfies the schema. false means "not shown valid": the caller asks
// kin-openapi, which may still accept (a duplicate key whose first value is invalid, say).
func (c *Checker) Valid(data []byte) bool {
	if !utf8.Valid(data) {
		return false
	}
	p := parser{data: data}
	if !p.value(c.root, c.root.nullOK) {
		return false
	}
	p.space()
	return p.pos == len(p.data)
}

// parser walks data once. Every method leaves pos after what it consumed and returns false
// at the first byte that is not valid JSON or not valid for the schema; pos is then
// meaningless.
type parser struct {
	data  []byte
	pos   int
	depth int
}

func (p *parser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// value checks the value at pos against n (nil: any value). nullOK says whether null is
// accepted here: it is n's own answer, narrowed for declared properties by the gate's rule.
func (p *parser) value(n *node, nullOK bool) bool {
	p.space()
	if p.pos >= len(p.data) {
		return false
	}
	if p.data[p.pos] == 'n' {
		return p.literal("null") && nullOK
	}
	if n == nil {
		return p.skip()
	}
	if n.empty {
		return p.skip()
	}
	if len(n.anyOf) > 0 || len(n.allOf) > 0 {
		start := p.pos
		if len(n.anyOf) > 0 {
			matched := false
			for _, b := range n.anyOf {
				p.pos = start
				if p.value(b, b.nullOK) {
					matched = true
					break
				}
			}
			if !matched {
				return false
			}
		}
		for _, b := range n.allOf {
			p.pos = start
			if !p.value(b, b.nullOK) {
				return false
			}
		}
		p.pos = start
	}
	switch c := p.data[p.pos]; {
	case c == '"':
		return p.string(n)
	case c == '{':
		return n.enum == nil && n.types&kindObject != 0 && p.object(n)
	case c == '[':
		return n.enum == nil && n.types&kindArray != 0 && p.array(n)
	case c == 't':
		return n.enum == nil && n.types&kindBoolean != 0 && p.literal("true")
	case c == 'f':
		return n.enum == nil && n.types&kindBoolean != 0 && p.literal("false")
	default:
		return n.enum == nil && p.number(n)
	}
}

func (p *parser) literal(word string) bool {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return false
	}
	p.pos += len(word)
	return true
}

// skip consumes any one JSON value, checking its syntax and its text for NUL.
func (p *parser) skip() bool {
	p.space()
	if p.pos >= len(p.data) {
		return false
	}
	switch p.data[p.pos] {
	case '"':
		_, ok := p.text()
		return ok
	case '{':
		return p.object(nil)
	case '[':
		return p.array(nil)
	case 't':
		return p.literal("true")
	case 'f':
		return p.literal("false")
	case 'n':
		return p.literal("null")
	default:
		_, ok := p.numberText()
		return ok
	}
}

// text consumes a string and returns its value. A string without escapes is returned
// without copying: it points into data, which no one changes while Valid runs.
func (p *parser) text() (string, bool) {
	start := p.pos + 1
	escaped := false
	for i := start; i < len(p.data); i++ {
		switch c := p.data[i]; {
		case c == '"':
			p.pos = i + 1
			if !escaped {
				return bytesString(p.data[start:i]), true
			}
			// Escapes are rare in request bodies: decode them exactly as encoding/json does
			// (surrogate pairs, lone surrogates as U+FFFD).
			var s string
			if err := json.Unmarshal(p.data[start-1:i+1], &s); err != nil {
				return "", false
			}
			return s, strings.IndexByte(s, 0) < 0
		case c == '\\':
			escaped = true
			i++
			if i >= len(p.data) {
				return "", false
			}
			switch p.data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(p.data) {
					return "", false
				}
				for _, h := range p.data[i+1 : i+5] {
					if !isHex(h) {
						return "", false
					}
				}
				i += 4
			default:
				return "", false
			}
		case c < 0x20:
			return "", false
		}
	}
	return "", false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

func (p *parser) string(n *node) bool {
	s, ok := p.text()
	return ok && n.stringValid(s)
}

// stringValid applies n's enum and string keywords to s.
func (n *node) stringValid(s string) bool {
	if n.enum != nil {
		if _, ok := n.enum[s]; !ok {
			return false
		}
	}
	if n.types&kindString == 0 {
		return false
	}
	if n.minLength > 0 || n.maxLength >= 0 {
		// Characters, as JSON Schema counts them (code points; so does kin-openapi).
		length := utf8.RuneCountInString(s)
		if length < n.minLength || (n.maxLength >= 0 && length > n.maxLength) {
			return false
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		return false
	}
	return n.format == nil || n.format.Validate(s) == nil
}

// numberText consumes a number of JSON's grammar and returns its text.
func (p *parser) numberText() (string, bool) {
	d, i := p.data, p.pos
	start := i
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		i = digitsEnd(d, i)
	default:
		return "", false
	}
	if i < len(d) && d[i] == '.' {
		if i = digitsEnd(d, i+1); d[i-1] == '.' {
			return "", false // a fraction needs a digit
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		exponent := i
		if i = digitsEnd(d, i); i == exponent {
			return "", false
		}
	}
	p.pos = i
	return bytesString(d[start:i]), true
}

// digitsEnd returns the index after the run of decimal digits of d starting at i.
func digitsEnd(d []byte, i int) int {
	for i < len(d) && '0' <= d[i] && d[i] <= '9' {
		i++
	}
	return i
}

func (p *parser) number(n *node) bool {
	text, ok := p.numberText()
	if !ok {
		return false
	}
	// kin-openapi reads the number as json.Number and converts it with ParseFloat: a number
	// out of float64's range is refused there.
	v, err := strconv.ParseFloat(text, 64)
	return err == nil && n.numberValid(v)
}

// numberValid applies n's type and numeric keywords to v.
func (n *node) numberValid(v float64) bool {
	switch {
	case n.types&kindNumber != 0:
		if n.numberFormat != nil && n.numberFormat.Validate(v) != nil {
			return false
		}
	case n.types&kindInteger != 0:
		if v != math.Trunc(v) || (n.integerFormat != nil && !integerFormatValid(n.integerFormat, v)) {
			return false
		}
	default:
		return false
	}
	if n.hasMin && (v < n.min || (n.exclusiveMin && v == n.min)) {
		return false
	}
	if n.hasMax && (v > n.max || (n.exclMx && v == n.max)) {
		return false
	}
	return true
}

// integerFormatValid converts v for an integer format validator as kin-openapi does: 2^63
// (which math.MaxInt64 rounds to) is math.MaxInt64, and a value beyond int64 fails.
func integerFormatValid(f openapi3.IntegerFormatValidator, v float64) bool {
	switch {
	case v == float64(math.MaxInt64):
		return f.Validate(math.MaxInt64) == nil
	case v >= float64(math.MinInt64) && v < float64(math.MaxInt64):
		return f.Validate(int64(v)) == nil
	default:
		return false
	}
}

// open enters the container whose opening byte is at pos, within maxDepth, and reports
// whether it closes at once. The caller leaves it by decrementing depth.
func (p *parser) open(closing byte) (empty, ok bool) {
	p.depth++
	if p.depth > maxDepth {
		return false, false
	}
	p.pos++
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == closing {
		p.pos++
		return true, true
	}
	return false, true
}

// object checks an object against n (nil: any object).
func (p *parser) object(n *node) bool {
	empty, ok := p.open('}')
	defer func() { p.depth-- }()
	if !ok {
		return false
	}
	if empty {
		return n == nil || n.requiredCount == 0
	}
	var seen uint64
	for {
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return false
		}
		key, ok := p.text()
		if !ok {
			return false
		}
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return false
		}
		p.pos++
		switch {
		case n == nil:
			ok = p.skip()
		case n.properties[key] != nil:
			prop := n.properties[key]
			ok = p.value(prop.node, prop.nullOK)
			if prop.required >= 0 {
				seen |= 1 << prop.required
			}
		case n.additional == additionalSchema:
			ok = p.value(n.additionalNode, n.additionalNulls)
		case n.additional == additionalAny:
			ok = p.skip()
		default:
			ok = false
		}
		if !ok {
			return false
		}
		more, ok := p.separator('}')
		if !ok {
			return false
		}
		if !more {
			return n == nil || seen == 1<<n.requiredCount-1
		}
	}
}

// separator consumes what follows a member or an element: a comma, when more follow, or the
// closing byte.
func (p *parser) separator(closing byte) (more, ok bool) {
	p.space()
	if p.pos >= len(p.data) {
		return false, false
	}
	switch p.data[p.pos] {
	case ',':
		p.pos++
		return true, true
	case closing:
		p.pos++
		return false, true
	}
	return false, false
}

// array checks an array against n (nil: any array).
func (p *parser) array(n *node) bool {
	empty, ok := p.open(']')
	defer func() { p.depth-- }()
	if !ok {
		return false
	}
	if empty {
		return n == nil || n.minItems == 0
	}
	var items *node
	itemsNullOK := true
	if n != nil {
		items, itemsNullOK = n.items, n.itemsNullOK
	}
	// Unique items are decided here only for strings, compared by their decoded text (as
	// kin-openapi compares them): the bytes between the quotes, or, for a string with escapes,
	// the text encoding/json decodes, kept in decoded.
	var spans [maxUniqueItems]uniqueSpan
	var decoded []byte
	count := 0
	for {
		p.space()
		start := p.pos
		if !p.value(items, itemsNullOK) {
			return false
		}
		if n != nil && n.unique {
			if count >= maxUniqueItems || p.data[start] != '"' {
				return false
			}
			span := uniqueSpan{start: start + 1, end: p.pos - 1}
			if raw := p.data[start:p.pos]; bytes.IndexByte(raw, '\\') >= 0 {
				var text string
				if json.Unmarshal(raw, &text) != nil {
					return false
				}
				span = uniqueSpan{decoded: true, start: len(decoded), end: len(decoded) + len(text)}
				decoded = append(decoded, text...)
			}
			for _, other := range spans[:count] {
				if bytes.Equal(other.text(p.data, decoded), span.text(p.data, decoded)) {
					return false
				}
			}
			spans[count] = span
		}
		count++
		more, ok := p.separator(']')
		if !ok {
			return false
		}
		if !more {
			return n == nil || (count >= n.minItems && (n.maxItems < 0 || count <= n.maxItems))
		}
	}
}

// uniqueSpan locates one string item of an array with unique items: in the body, or in the
// buffer of decoded texts.
type uniqueSpan struct {
	decoded    bool
	start, end int
}

func (u uniqueSpan) text(data, decoded []byte) []byte {
	if u.decoded {
		return decoded[u.start:u.end]
	}
	return data[u.start:u.end]
}

// Valid reports whether raw, a parameter's value as sent, parses as kin-openapi parses it
// and satisfies the schema. The empty value is never shown valid: kin-openapi decides it.
func (c *Parameter) Valid(raw string) bool {
	if raw == "" {
		return false
	}
	switch c.typ {
	case "string":
		return c.n.scalarValid(scalar{kind: kindString, text: raw})
	case "integer":
		bits := 64
		if c.int32 {
			bits = 32
		}
		v, err := strconv.ParseInt(raw, 10, bits)
		return err == nil && c.n.scalarValid(scalar{kind: kindNumber, number: float64(v)})
	case "number":
		v, err := strconv.ParseFloat(raw, 64)
		return err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) && c.n.scalarValid(scalar{kind: kindNumber, number: v})
	case "boolean":
		_, err := strconv.ParseBool(raw)
		return err == nil && c.n.scalarValid(scalar{kind: kindBoolean})
	}
	return false
}

// scalar is a decoded parameter value.
type scalar struct {
	kind   kinds // kindString, kindNumber or kindBoolean
	text   string
	number float64
}

// scalarValid applies n to a non-null scalar in kin-openapi's order: empty schema,
// anyOf, allOf, then enum and the keywords of the scalar's kind.
func (n *node) scalarValid(x scalar) bool {
	if n.empty {
		return true
	}
	if len(n.anyOf) > 0 {
		matched := false
		for _, b := range n.anyOf {
			if b.scalarValid(x) {
				matched = true
				break
			}
		}
		if !matched {
			return false
		}
	}
	for _, b := range n.allOf {
		if !b.scalarValid(x) {
			return false
		}
	}
	switch x.kind {
	case kindString:
		return n.stringValid(x.text)
	case kindBoolean:
		return n.enum == nil && n.types&kindBoolean != 0
	default:
		return n.enum == nil && n.numberValid(x.number)
	}
}
