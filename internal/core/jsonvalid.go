package core

// validJSON reports what json.Valid reports, in one pass without the standard scanner's call
// per byte: the request log checks every JSON body it keeps, and an invoice's response (its
// XML in a string) made json.Valid 5 % of the request's CPU. Strings, most of such bodies,
// are scanned in a tight loop. As json.Valid, it accepts invalid UTF-8 in strings and refuses
// nesting deeper than 10 000.
func validJSON(b []byte) bool {
	v := jsonValidator{in: b}
	v.space()
	if !v.value(0) {
		return false
	}
	v.space()
	return v.pos == len(v.in)
}

// maxJSONDepth is encoding/json's limit of nested arrays and objects.
const maxJSONDepth = 10000

type jsonValidator struct {
	in  []byte
	pos int
}

func (v *jsonValidator) space() {
	for v.pos < len(v.in) {
		switch v.in[v.pos] {
		case ' ', '\t', '\n', '\r':
			v.pos++
		default:
			return
		}
	}
}

// peek is the byte at pos, 0 at the end (never a byte a valid text has there).
func (v *jsonValidator) peek() byte {
	if v.pos < len(v.in) {
		return v.in[v.pos]
	}
	return 0
}

// value checks the value at pos (white space before it skipped) and moves past it.
func (v *jsonValidator) value(depth int) bool {
	switch c := v.peek(); {
	case c == '{':
		return v.object(depth + 1)
	case c == '[':
		return v.array(depth + 1)
	case c == '"':
		return v.string()
	case c == '-' || '0' <= c && c <= '9':
		return v.number()
	case c == 't':
		return v.literal("true")
	case c == 'f':
		return v.literal("false")
	case c == 'n':
		return v.literal("null")
	}
	return false
}

func (v *jsonValidator) object(depth int) bool {
	if depth > maxJSONDepth {
		return false
	}
	v.pos++
	v.space()
	if v.peek() == '}' {
		v.pos++
		return true
	}
	for {
		if v.peek() != '"' || !v.string() {
			return false
		}
		v.space()
		if v.peek() != ':' {
			return false
		}
		v.pos++
		v.space()
		if !v.value(depth) {
			return false
		}
		v.space()
		switch v.peek() {
		case ',':
			v.pos++
			v.space()
		case '}':
			v.pos++
			return true
		default:
			return false
		}
	}
}

func (v *jsonValidator) array(depth int) bool {
	if depth > maxJSONDepth {
		return false
	}
	v.pos++
	v.space()
	if v.peek() == ']' {
		v.pos++
		return true
	}
	for {
		if !v.value(depth) {
			return false
		}
		v.space()
		switch v.peek() {
		case ',':
			v.pos++
			v.space()
		case ']':
			v.pos++
			return true
		default:
			return false
		}
	}
}

// string checks the string at pos: no control character, escapes \" \\ \/ \b \f \n \r \t and
// \u with four hexadecimal digits.
func (v *jsonValidator) string() bool {
	in := v.in
	for i := v.pos + 1; i < len(in); i++ {
		switch c := in[i]; {
		case c == '"':
			v.pos = i + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			i++
			if i >= len(in) {
				return false
			}
			switch in[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(in) || !isHex(in[i+1]) || !isHex(in[i+2]) || !isHex(in[i+3]) || !isHex(in[i+4]) {
					return false
				}
				i += 4
			default:
				return false
			}
		}
	}
	return false
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// number checks -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at pos.
func (v *jsonValidator) number() bool {
	if v.peek() == '-' {
		v.pos++
	}
	switch c := v.peek(); {
	case c == '0':
		v.pos++
	case '1' <= c && c <= '9':
		v.digits()
	default:
		return false
	}
	if v.peek() == '.' {
		v.pos++
		if !v.digits() {
			return false
		}
	}
	if c := v.peek(); c == 'e' || c == 'E' {
		v.pos++
		if c := v.peek(); c == '+' || c == '-' {
			v.pos++
		}
		if !v.digits() {
			return false
		}
	}
	return true
}

// digits moves past the digits at pos and reports whether there was one.
func (v *jsonValidator) digits() bool {
	start := v.pos
	for v.pos < len(v.in) && '0' <= v.in[v.pos] && v.in[v.pos] <= '9' {
		v.pos++
	}
	return v.pos > start
}

func (v *jsonValidator) literal(word string) bool {
	if len(v.in)-v.pos < len(word) || string(v.in[v.pos:v.pos+len(word)]) != word {
		return false
	}
	v.pos += len(word)
	return true
}
